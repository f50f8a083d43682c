#!/usr/bin/env python3
"""Writes docs/census.md: fusion.explain's census of each transformer zoo
model (python_bindings/tests/transformer_zoo.py) at the CI size, in eval
mode and in a training step's forward. test_transformer_zoo.py checks the
committed file against the compiler; run this after a change to what
fuses:

    PYTHONPATH=build/python_packages .venv/bin/python scripts/census.py
"""
import pathlib
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python_bindings" / "tests"))

import transformer_zoo  # noqa: E402

HEADER = """# Census of the transformer zoo

What `torch.compile(model, backend="fusion")` fuses in each model of
`python_bindings/tests/transformer_zoo.py` (transformers 5.17, the "tiny"
size), on the CPU target and for sm_90 (the H100's and H200's libraries,
compiled without a GPU: there the q, k and v projections are one grouped
GEMM): every GEMM of the forward graphs, the ops fused after it, or why
none, and the ops that read the fused values from outside (where fusion
stopped, and why). Written by `scripts/census.py`;
`test_transformer_zoo.py::test_census` fails when it differs from what the
compiler does.
"""

# The targets of the census: the CPU's (no suffix), sm_90's.
TARGETS = (None, "sm_90")


def title(name, training, target):
    """A section's title (test_transformer_zoo.py's too)."""
    mode = "training step" if training else "eval"
    return f"{name}, {mode}" + (f", {target}" if target else "")


def sections():
    for target in TARGETS:
        for name in sorted(transformer_zoo.MODELS):
            for training in (False, True):
                yield f"## {title(name, training, target)}", \
                    transformer_zoo.census(name, training=training,
                                           target=target)


def main():
    warnings.simplefilter("ignore")
    parts = [HEADER]
    for title, text in sections():
        parts.append(f"{title}\n\n```\n{text}\n```\n")
    (ROOT / "docs" / "census.md").write_text("\n".join(parts))


if __name__ == "__main__":
    main()
