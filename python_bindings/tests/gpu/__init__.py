"""The GPU correctness checks (pytest marker `gpu`).

They run on a machine with a CUDA device and the artifacts of
`scripts/gpu-check.sh build` (libraries compiled by fusion-compile, saved
modules and a filled library cache), and skip elsewhere:

    scripts/gpu-check.sh run DIR     (the device; prints one table)
    pytest -m gpu python_bindings/tests/gpu --artifacts DIR

`helpers` holds what every check shares (the ctypes library loader, the
float64 comparison, poisoned outputs); `prepare` fills the library cache
on the build machine; the other modules hold the checks' models.
"""
