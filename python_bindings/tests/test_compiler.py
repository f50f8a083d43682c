"""The native compiler bindings: parse, print, verify, pipelines, compile."""
import json
import pathlib

import pytest

from fusion import _fusion

VALID = """
func.func @f(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.25 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
"""


@pytest.fixture
def context():
    return _fusion.Context()


def test_parse_print_round_trip(context):
    module = _fusion.Module.parse(context, VALID)
    text = str(module)
    assert "fusion.linear" in text and "negative_slope = 2.500000e-01" in text
    again = _fusion.Module.parse(context, text)
    assert str(again) == text
    again.verify()


def test_invalid_ir_raises_with_location(context):
    bad = VALID.replace("tensor<4x8xf32>", "tensor<4x6xf32>")
    with pytest.raises(_fusion.MLIRError) as error:
        _fusion.Module.parse(context, bad, "model.mlir")
    message = str(error.value)
    assert "model.mlir\":3:" in message
    assert "weight in_features 6 does not match input K 8" in message


def test_syntax_error_raises(context):
    with pytest.raises(_fusion.MLIRError, match="cannot parse"):
        _fusion.Module.parse(context, "func.func @f( {")


def test_dense_index_array_refused_before_parsing(context):
    # MLIR 22's parser crashes on it (docs/known-issues.md).
    source = "func.func private @f()\n    attributes {a = array<index: 1>}\n"
    with pytest.raises(_fusion.MLIRError) as error:
        _fusion.Module.parse(context, source, "model.mlir")
    message = str(error.value)
    assert "model.mlir\":2:21)" in message
    assert "dense arrays of 'index' are not supported" in message
    # NUL bytes are whitespace to MLIR's lexer (found by the fuzzer).
    with pytest.raises(_fusion.MLIRError, match="dense arrays of 'index'"):
        _fusion.Module.parse(
            context, "func.func private @f() attributes "
                     "{a = array\0\0<\0index: 1>}")
    # Elsewhere (a string) the words are harmless.
    _fusion.Module.parse(
        context, 'func.func private @g() attributes {a = "array<index: 1>"}')


def test_pipeline_fuses(context):
    module = _fusion.Module.parse(context, VALID)
    module.run_pipeline("builtin.module(fusion-optimize)")
    text = str(module)
    assert text.count("fusion.fused_linear") == 1
    assert "fusion.leaky_relu" not in text


def test_invalid_pipeline_raises(context):
    module = _fusion.Module.parse(context, VALID)
    with pytest.raises(_fusion.MLIRError, match="invalid pass pipeline"):
        module.run_pipeline("builtin.module(no-such-pass)")


def test_failing_pipeline_raises_with_diagnostics(context):
    module = _fusion.Module.parse(context, VALID)
    with pytest.raises(_fusion.MLIRError, match="invalid pass pipeline.*f32-precision=fp64"):
        module.run_pipeline(
            "builtin.module(fusion-fuse-linear-epilogues{f32-precision=fp64})")


def test_compile_cpu_library(context, tmp_path):
    module = _fusion.Module.parse(context, VALID)
    module.compile(str(tmp_path / "f.so"), target="cpu")
    signature = json.loads((tmp_path / "f.json").read_text())
    assert signature["target"] == "cpu"
    assert signature["entry_points"][0]["name"] == "f"
    assert (tmp_path / "f.so").stat().st_size > 0
    # Compiling works on a copy: the module is unchanged.
    assert "fusion.linear" in str(module)


@pytest.mark.skipif(not pathlib.Path("/usr/local/cuda/bin/ptxas").exists(),
                    reason="needs the CUDA toolkit's ptxas")
def test_compile_for_several_targets(context, tmp_path):
    # One library, a variant per target; the signature lists them.
    module = _fusion.Module.parse(context, VALID)
    module.compile(str(tmp_path / "f.so"), target="sm_80,sm_90")
    signature = json.loads((tmp_path / "f.json").read_text())
    assert signature["target"] == "sm_80,sm_90"
    assert [e["name"] for e in signature["entry_points"]] == ["f"]
    library = (tmp_path / "f.so").read_bytes()
    assert b"__fusion_rt_select_variant" in library
    # Each variant embeds its own kernels: sm_80 SASS (the mma.sync
    # kernel), sm_90a SASS (the wgmma kernel, `auto`'s choice for fp32).
    assert b"-arch sm_80" in library and b"-arch sm_90a" in library


def test_compile_tiled_strategy(context, tmp_path):
    # The tiled backend's kernel, lowered to NVVM (no toolkit needed).
    module = _fusion.Module.parse(context, VALID)
    out = tmp_path / "f.mlir"
    module.compile(str(out), strategy="tiled", emit="mlir")
    text = out.read_text()
    assert "nvvm.mma.sync" in text and "nvvm.ldmatrix" in text
    assert "__fusion_rt_gemm" not in text


def test_compile_tiled_simt(context, tmp_path):
    # fp32 on the CUDA cores: fma, no tensor-core op.
    module = _fusion.Module.parse(context, VALID)
    out = tmp_path / "f.mlir"
    module.compile(str(out), strategy="tiled", fp32_math="simt", emit="mlir")
    text = out.read_text()
    assert "__nv_fmaf" in text
    assert "nvvm.mma.sync" not in text


def test_compile_errors_raise(context, tmp_path):
    module = _fusion.Module.parse(context, VALID)
    with pytest.raises(_fusion.MLIRError,
                       match="invalid --strategy='fastest'"):
        module.compile(str(tmp_path / "f.so"), strategy="fastest")
    with pytest.raises(_fusion.MLIRError, match="invalid --fp32-math='fast'"):
        module.compile(str(tmp_path / "f.so"), strategy="tiled",
                       fp32_math="fast")
    with pytest.raises(_fusion.MLIRError, match="invalid --emit='cubin'"):
        module.compile(str(tmp_path / "f.so"), emit="cubin")
    # Targets fusion cannot generate code for are named with the list of
    # those it can.
    with pytest.raises(_fusion.MLIRError,
                       match="invalid --target='cpu2'.*sm_80, sm_86"):
        module.compile(str(tmp_path / "f.so"), target="cpu2")
    # Several targets: each once, and only into a library.
    with pytest.raises(_fusion.MLIRError,
                       match="invalid --target='sm_80,sm_80'.*different"):
        module.compile(str(tmp_path / "f.so"), target="sm_80,sm_80")
    with pytest.raises(_fusion.MLIRError,
                       match="--emit=mlir and --emit=ptx take one --target"):
        module.compile(str(tmp_path / "f.mlir"), target="sm_80,sm_90",
                       emit="mlir")
    with pytest.raises(_fusion.MLIRError, match="invalid --tile='-128x128"):
        module.compile(str(tmp_path / "f.so"), strategy="tiled",
                       tile="-128x128,2x2,3")
    with pytest.raises(_fusion.MLIRError, match="invalid --schedule='stream_k' "
                       r"\(expected cooperative or pingpong\)"):
        module.compile(str(tmp_path / "f.so"), strategy="wgmma",
                       target="sm_90", schedule="stream_k")
    with pytest.raises(_fusion.MLIRError,
                       match=r"invalid --cluster='4' \(expected 1 or 2\)"):
        module.compile(str(tmp_path / "f.so"), strategy="wgmma",
                       target="sm_90", cluster="4")
    with pytest.raises(_fusion.MLIRError,
                       match=r"invalid --tile-scheduler='dynamic' "
                       r"\(expected persistent or per_block\)"):
        module.compile(str(tmp_path / "f.so"), strategy="wgmma",
                       target="sm_90", tile_scheduler="dynamic")
    # A block a tile cannot be ping-pong's, whose two consumers take a
    # block's tiles in turn: refused (by fusion-select-gemm-config), not
    # replaced.
    with pytest.raises(_fusion.MLIRError,
                       match="option 'tile-scheduler=per_block' takes the "
                       "cooperative schedule"):
        module.compile(str(tmp_path / "f.so"), strategy="wgmma",
                       target="sm_90", schedule="pingpong",
                       tile_scheduler="per_block")
    with pytest.raises(_fusion.MLIRError, match=r"invalid --math16='fast' "
                       r"\(expected approximate or exact\)"):
        module.compile(str(tmp_path / "f.so"), math16="fast")


def test_compile_options_are_one_table(context, tmp_path):
    """The compiler's options and the package's are the rows of
    CompileOptions.def: same names, same defaults; an unknown name or a
    value that is not text is refused by name."""
    import fusion.options
    assert _fusion.compile_option_defaults() == {
        name: option.default
        for name, option in fusion.options.OPTIONS.items()}
    assert {"target", "strategy", "emit"} <= set(fusion.options.OPTIONS)
    assert "emit" not in fusion.options.PACKAGE_OPTIONS
    module = _fusion.Module.parse(context, VALID)
    with pytest.raises(TypeError, match="unknown compile option 'stratgy'"):
        module.compile(str(tmp_path / "f.so"), stratgy="tiled")
    with pytest.raises(TypeError, match="unknown compile option 'emitt'"):
        _fusion.check_compile_options(emitt="so")
    with pytest.raises(TypeError, match="'cluster' takes a string"):
        _fusion.check_compile_options(cluster=2)
    _fusion.check_compile_options(cuda_path="", emit="ptx")


def test_package_refuses_options_it_does_not_take():
    import torch
    import fusion
    with pytest.raises(TypeError, match="unknown compile option.*'stratgy'"
                       ".*takes target, strategy, precision"):
        fusion.compile(torch.nn.Linear(4, 4), (torch.randn(2, 4),),
                       stratgy="tiled")
    with pytest.raises(TypeError, match="'emit'"):
        fusion.compile(torch.nn.Linear(4, 4), (torch.randn(2, 4),),
                       emit="ptx")


def test_source_tree_package_reads_the_table():
    """The GPU machine's scripts import the package from the source tree
    (no compiler, no build): its options come from the table itself, the
    same as the built package's copy."""
    import subprocess
    import sys
    import fusion.options
    source = pathlib.Path(__file__).resolve().parents[1]
    listed = subprocess.run(
        [sys.executable, "-c",
         "import fusion.options as o, json; "
         "print(json.dumps({n: x.default for n, x in o.OPTIONS.items()}))"],
        env={"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True)
    assert json.loads(listed.stdout) == {
        name: option.default
        for name, option in fusion.options.OPTIONS.items()}
