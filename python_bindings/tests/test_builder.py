"""The native IR builders: modules built op by op, not printed as text."""
import gc
import json
import math

import pytest

from fusion import _fusion
from fusion.formulas import ELEMENTWISE
from fusion.program import ScalarBuilder

LOC = ("model.py", 12)


@pytest.fixture
def context():
    return _fusion.Context()


def gelu(s, x, columns, rows):
    """0.5 * x * (1 + erf(x / sqrt(2))), scaled by the column operand."""
    scaled = s.op("arith.mulf", [x, s.constant(1 / math.sqrt(2))])
    one_plus = s.op("arith.addf", [s.op("math.erf", [scaled]), s.constant(1.0)])
    half_x = s.op("arith.mulf", [x, s.constant(0.5)])
    return s.op("arith.mulf", [s.op("arith.mulf", [half_x, one_plus]),
                               columns[0]])


def relu(f, x):
    """relu(x) as the front end builds it: an elementwise op."""
    return f.elementwise(
        x, [], lambda s, v, c, r: s.op("arith.maximumf", [v, s.constant(0.0)]))


def build_model(context):
    """linear -> elementwise(gelu via erf) -> batch_norm (training, stats)."""
    m = _fusion.Module.create(context, "model")
    f = m.add_function("forward_train")
    x = f.argument([None, 16], "f32")
    w = f.argument([8, 16], "f32")
    b = f.argument([8], "f32")
    scale = f.argument([8], "f32")
    mean = f.argument([8], "f32")
    var = f.argument([8], "f32")
    y = f.linear(x, w, b, loc=LOC)
    y = f.elementwise(y, [scale], gelu, loc=("model.py", 13))
    outs = f.batch_norm(y, training=True, epsilon=1e-5, momentum=0.1,
                        running_mean=mean, running_var=var,
                        loc=("model.py", 14))
    f.finish(outs)
    return m


def test_build_print_and_round_trip(context):
    m = build_model(context)
    m.verify()
    text = str(m)
    assert text.startswith("module @model")
    assert "func.func @forward_train(%arg0: tensor<?x16xf32>" in text
    assert "fusion.linear" in text
    assert "fusion.elementwise" in text and "columns(" in text
    assert "math.erf" in text and "fusion.yield" in text
    assert "fusion.batch_norm" in text
    assert "-> (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>)" in text
    again = _fusion.Module.parse(context, text)
    assert str(again) == text


def test_locations_are_the_models_lines(context):
    m = build_model(context)
    m.run_pipeline("builtin.module(fusion-optimize)")
    text = str(m)
    assert "fusion.fused_linear" in text and "math.erf" in text
    assert "fusion.elementwise" not in text
    generic = _fusion.Module.parse(context, text)
    assert str(generic) == text


def test_values_report_shape_and_dtype(context):
    m = _fusion.Module.create(context, "model")
    f = m.add_function("f")
    x = f.argument([None, 4], "bf16")
    w = f.argument([3, 4], "bf16")
    y = f.linear(x, w, None)
    assert y.shape == [None, 3] and y.dtype == "bf16"
    assert "tensor<?x3xbf16>" in repr(y)


def test_half_precision_chain(context):
    m = _fusion.Module.create(context, "model")
    f = m.add_function("f")
    x = f.argument([None, 4], "f16")
    v = f.argument([4], "f16")
    y = f.elementwise(x, [v], lambda s, a, c, r: s.op("arith.mulf", [a, c[0]]))
    (z,) = f.batch_norm(relu(f, y), training=True)
    f.finish([z, y])
    text = str(m)
    for op in ["fusion.elementwise", "fusion.batch_norm", "tensor<?x4xf16>"]:
        assert op in text
    m.verify()


def test_compile_cpu_library(context, tmp_path):
    m = build_model(context)
    library = tmp_path / "model.so"
    m.compile(str(library), target="cpu")
    assert library.stat().st_size > 0
    signature = json.loads((tmp_path / "model.json").read_text())
    assert signature["entry_points"][0]["name"] == "forward_train"


def test_compiled_cpu_library_computes_torchs_numbers(context, tmp_path):
    torch = pytest.importorskip("torch")
    from fusion.runtime import Library
    import torch.nn.functional as F

    m = build_model(context)
    library = tmp_path / "model.so"
    m.compile(str(library), target="cpu")
    x, w = torch.randn(5, 16), torch.randn(8, 16)
    b, scale = torch.randn(8), torch.rand(8) + 0.5
    mean, var = torch.randn(8), torch.rand(8) + 0.5
    y, new_mean, new_var = Library(library).call(
        "forward_train", [x, w, b, scale, mean, var])
    expected_mean, expected_var = mean.clone(), var.clone()
    expected = F.batch_norm(F.gelu(F.linear(x, w, b)) * scale, expected_mean,
                            expected_var, training=True, momentum=0.1,
                            eps=1e-5)
    torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(new_mean, expected_mean, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(new_var, expected_var, rtol=1e-4, atol=1e-4)


def test_batch_statistics_on_the_cpu(context, tmp_path):
    # The batch mean and inverse standard deviation of a fused training
    # batch norm (what PyTorch's native_batch_norm saves for its backward),
    # after the updated running statistics, in the dtype asked for.
    torch = pytest.importorskip("torch")
    from fusion.runtime import Library
    import torch.nn.functional as F

    m = _fusion.Module.create(context, "model")
    f = m.add_function("train")
    x, w = f.argument([None, 16], "f32"), f.argument([8, 16], "f32")
    mean, var = f.argument([8], "f32"), f.argument([8], "f32")
    results = f.batch_norm(f.linear(x, w), training=True, momentum=0.3,
                           running_mean=mean, running_var=var,
                           batch_stats="f32")
    assert [r.dtype for r in results] == ["f32"] * 5
    f.finish(results)
    m.run_pipeline("builtin.module(fusion-optimize)")
    assert "fusion.batch_norm" not in str(m)
    m.compile(str(tmp_path / "bn.so"), target="cpu")
    xs, ws = torch.randn(7, 16), torch.randn(8, 16)
    ms, vs = torch.randn(8), torch.rand(8) + 0.5
    outs = Library(tmp_path / "bn.so").call("train", [xs, ws, ms, vs])
    expected = torch.native_batch_norm(F.linear(xs, ws), None, None, ms,
                                       vs, True, 0.3, 1e-5)
    for out, reference in zip(outs, (expected[0], ms, vs, *expected[1:])):
        torch.testing.assert_close(out, reference, rtol=1e-5, atol=1e-5)


def test_batch_statistics_dtype(function):
    _, f = function
    x = f.argument([None, 4], "bf16")
    y, batch_mean, batch_invstd = f.batch_norm(x, batch_stats="bf16")
    assert (y.dtype, batch_mean.dtype, batch_invstd.dtype) == ("bf16",) * 3
    with pytest.raises(_fusion.MLIRError, match="unknown dtype 'f64'"):
        f.batch_norm(x, batch_stats="f64")
    with pytest.raises(_fusion.MLIRError,
                       match="neither f32 nor the input element type"):
        f.batch_norm(x, batch_stats="f16")
    mean, var = f.argument([4], "bf16"), f.argument([4], "bf16")
    with pytest.raises(_fusion.MLIRError, match="require training mode"):
        f.batch_norm(x, training=False, running_mean=mean, running_var=var,
                     batch_stats="f32")
    with pytest.raises(_fusion.MLIRError, match="is not a matrix"):
        f.batch_norm(mean, batch_stats="f32")


def test_unfused_elementwise_on_the_cpu(context, tmp_path):
    # After a batch norm nothing fuses: the elementwise op is compiled as is.
    torch = pytest.importorskip("torch")
    from fusion.runtime import Library
    import torch.nn.functional as F

    m = _fusion.Module.create(context, "model")
    f = m.add_function("bn_gelu")
    x, scale = f.argument([None, 8], "f32"), f.argument([8], "f32")
    (y,) = f.batch_norm(x, training=True)
    f.finish([f.elementwise(y, [scale], gelu)])
    m.compile(str(tmp_path / "bn.so"), target="cpu")
    xs, ss = torch.randn(6, 8), torch.rand(8)
    (out,) = Library(tmp_path / "bn.so").call("bn_gelu", [xs, ss])
    expected = F.gelu(F.batch_norm(xs, None, None, training=True)) * ss
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)


def test_layer_norm_from_reductions_on_the_cpu(context, tmp_path):
    # linear, then a layer norm composed of two row sums (the second of
    # (x - mean)^2, the mean a row operand) and a normalizing elementwise op,
    # and group maxima (3 groups of 4 columns).
    torch = pytest.importorskip("torch")
    from fusion.runtime import Library
    import torch.nn.functional as F

    m = _fusion.Module.create(context, "model")
    f = m.add_function("norm")
    x, w = f.argument([None, 16], "f32"), f.argument([12, 16], "f32")
    y = f.linear(x, w)
    sum_ = f.reduce(y, "sum", 1, [], [], lambda s, v, c, r: v)
    mean = f.elementwise(sum_, [], lambda s, v, c, r:
                         s.op("arith.divf", [v, s.constant(12.0)]))
    squares = f.reduce(y, "sum", 1, [], [mean], lambda s, v, c, r:
                       s.op("arith.mulf", [s.op("arith.subf", [v, r[0]]),
                                           s.op("arith.subf", [v, r[0]])]))

    def normalize(s, v, c, r):
        variance = s.op("arith.divf", [r[1], s.constant(12.0)])
        invstd = s.op("math.rsqrt",
                      [s.op("arith.addf", [variance, s.constant(1e-5)])])
        return s.op("arith.mulf", [s.op("arith.subf", [v, r[0]]), invstd])

    out = f.elementwise(y, [], normalize, rows=[mean, squares])
    maxima = f.reduce(y, "max", 3, [], [], lambda s, v, c, r: v)
    f.finish([out, maxima])
    text = str(m)
    assert "fusion.reduce sum" in text and "fusion.reduce max" in text
    m.compile(str(tmp_path / "norm.so"), target="cpu")
    xs, ws = torch.randn(7, 16), torch.randn(12, 16)
    normalized, group_max = Library(tmp_path / "norm.so").call(
        "norm", [xs, ws])
    reference = F.linear(xs.double(), ws.double())
    torch.testing.assert_close(
        normalized, F.layer_norm(reference, (12,)).float(),
        rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(
        group_max, reference.view(7, 3, 4).amax(-1).float(),
        rtol=1e-5, atol=1e-5)


def test_reduce_arguments_checked(function):
    m, f = function
    x = f.argument([None, 6], "f32")
    with pytest.raises(_fusion.MLIRError, match="unknown reduction 'prod'"):
        f.reduce(x, "prod", 1, [], [], lambda s, v, c, r: v)
    with pytest.raises(_fusion.MLIRError, match="positive number of groups"):
        f.reduce(x, "sum", 0, [], [], lambda s, v, c, r: v)
    with pytest.raises(_fusion.MLIRError, match="invalid fusion.reduce"):
        f.reduce(x, "sum", 4, [], [], lambda s, v, c, r: v)
    with pytest.raises(_fusion.MLIRError, match="invalid fusion.elementwise"):
        g = f.reduce(x, "sum", 2, [], [], lambda s, v, c, r: v)
        f.elementwise(g, [], lambda s, v, c, r: v, rows=[x])


def test_module_outlives_its_python_object(context):
    m = _fusion.Module.create(context, "model")
    f = m.add_function("f")
    x = f.argument([None, 4], "f32")
    del m, context
    gc.collect()
    y = relu(f, x)
    f.finish([y])


def test_sigmoid_and_silu_take_the_approximate_reciprocal(context):
    m = _fusion.Module.create(context)
    for name in ("aten.sigmoid.default", "aten.silu.default"):
        f = m.add_function(name.split(".")[1])
        x = f.argument([2, 4], "f32")
        f.finish([f.elementwise(
            x, [], lambda s, v, c, r: ELEMENTWISE[name](ScalarBuilder(s), v))])
    divisions = [line for line in str(m).splitlines() if "arith.divf" in line]
    assert len(divisions) == 2
    assert all("fastmath<afn>" in line for line in divisions)


def test_comparisons_and_selects(context):
    m = _fusion.Module.create(context)
    f = m.add_function("clamp")
    x = f.argument([2, 4], "f32")

    def clamp(s, v, columns, rows):
        lo, hi = s.constant(-1.0), s.constant(1.0)
        below = s.op("arith.cmpf", [v, lo], predicate="olt")
        v = s.op("arith.select", [below, lo, v])
        above = s.op("arith.cmpf", [v, hi], predicate="ogt")
        return s.op("arith.select", [above, hi, v])

    f.finish([f.elementwise(x, [], clamp)])
    assert "arith.cmpf olt" in str(m) and "arith.cmpf ogt" in str(m)


def test_special_functions_carry_formula_and_libdevice_name(context):
    m = _fusion.Module.create(context)
    f = m.add_function("special")
    x = f.argument([2, 4], "f32")
    f.finish([f.elementwise(x, [], lambda s, v, c, r: ELEMENTWISE[
        "aten.lgamma.default"](ScalarBuilder(s), ELEMENTWISE[
            "aten.digamma.default"](ScalarBuilder(s), v)))])
    text = str(m)
    # lgamma is libdevice's and the C library's function: no formula.
    lgamma = next(line for line in text.splitlines()
                  if 'fusion.special "lgamma"(' in line)
    assert lgamma.endswith(
        'libdevice "__nv_lgammaf" libm "lgammaf" : (f32) -> f32')
    # digamma has no library function: its formula alone.
    digamma = next(line for line in text.splitlines()
                   if 'fusion.special "digamma"' in line)
    assert "libdevice" not in digamma and digamma.endswith("{")
    m.verify()


def test_special_function_errors(function):
    m, f = function
    x = f.argument([None, 4], "f32")

    def square(s, a):
        return s.op("arith.mulf", [a, a])

    cases = [
        (lambda s, v, c, r: s.special("f", None, [v], lambda i, a: 1.0),
         "formula of special function 'f' must return a Scalar"),
        # The outer body's scalars are not the formula's.
        (lambda s, v, c, r: s.special("f", None, [v], lambda i, a: v),
         "returned a scalar of another body"),
        (lambda s, v, c, r: s.special(
            "f", None, [v], lambda i, a: i.op("arith.addf", [a, v])),
         "another elementwise body"),
        (lambda s, v, c, r: s.special("f", "lgammaf", [v], square),
         "is not one of libdevice's f32 special functions"),
        (lambda s, v, c, r: s.special("bessel-j0", None, [v], square),
         "not a nonempty identifier"),
        (lambda s, v, c, r: s.op("fusion.special", [v]),
         r"build it with special\(\)"),
        (lambda s, v, c, r: s.special("f", "__nv_lgammaf", [v, v],
                                      lambda i, a, b: a),
         "with 2 inputs"),
        (lambda s, v, c, r: s.special("f", None, [], lambda i: i.constant(1)),
         "has no inputs"),
        # Without a formula, libdevice's and the C library's function.
        (lambda s, v, c, r: s.special("erfinv", "__nv_erfinvf", [v], None),
         "has no formula, and names no C library function"),
        (lambda s, v, c, r: s.special("bessel_j0", None, [v], None,
                                      libm="j0f"),
         "but not libdevice's '__nv_j0f'"),
        (lambda s, v, c, r: s.special("bessel_j0", "__nv_j0f", [v], square,
                                      libm="j0f"),
         "has a formula, which no target computes"),
        (lambda s, v, c, r: s.special("erfinv", "__nv_erfinvf", [v], None,
                                      libm="erfinvf"),
         "is not one of its f32 special functions"),
        # While the formula is built, only its own builder builds.
        (lambda s, v, c, r: s.special(
            "f", None, [v], lambda i, a: s.constant(1.0)), "complete"),
    ]
    for body, message in cases:
        with pytest.raises(_fusion.MLIRError, match=message):
            f.elementwise(x, [], body)
    # After a failed special its body builds on; the function still
    # builds and verifies.
    def after_failure(s, v, c, r):
        with pytest.raises(_fusion.MLIRError, match="has no inputs"):
            s.special("f", None, [], lambda i: i.constant(1.0))
        return s.special("square", None, [v], square)

    f.finish([f.elementwise(x, [], after_failure)])
    assert str(m).count("fusion.special") == 1
    m.verify()


def test_nested_special_functions(context):
    """A formula may call another special function: each its own body."""
    m = _fusion.Module.create(context)
    f = m.add_function("nested")
    x = f.argument([2, 4], "f32")

    def outer(i, a):
        inner = i.special("square", None, [a],
                          lambda j, b: j.op("arith.mulf", [b, b]))
        return i.op("math.sqrt", [inner])

    f.finish([f.elementwise(
        x, [], lambda s, v, c, r: s.special("magnitude", None, [v], outer))])
    text = str(m)
    assert text.index('fusion.special "magnitude"') < \
        text.index('fusion.special "square"')
    m.verify()


# Errors: each raises MLIRError and leaves the function usable.

@pytest.fixture
def function(context):
    m = _fusion.Module.create(context, "model")
    return m, m.add_function("f")


def test_bad_dtype(function):
    _, f = function
    with pytest.raises(_fusion.MLIRError, match="unknown dtype 'f64'"):
        f.argument([2, 4], "f64")
    with pytest.raises(_fusion.MLIRError, match="negative"):
        f.argument([-2, 4], "f32")


def test_shape_mismatch_reported_by_the_verifier(function):
    _, f = function
    x = f.argument([None, 8], "f32")
    w = f.argument([4, 6], "f32")
    with pytest.raises(_fusion.MLIRError) as error:
        f.linear(x, w, None, loc=LOC)
    message = str(error.value)
    assert "model.py\":12:0" in message
    assert "weight in_features 6 does not match input K 8" in message
    v = f.argument([5], "f32")
    with pytest.raises(_fusion.MLIRError,
                       match="column operand #0 has 5 elements"):
        f.elementwise(x, [v], lambda s, a, c, r: a)
    # Nothing invalid was left behind.
    f.finish([relu(f, x)])


def test_values_of_another_function_or_module(context):
    m = _fusion.Module.create(context, "a")
    f, g = m.add_function("f"), m.add_function("g")
    x = f.argument([None, 4], "f32")
    with pytest.raises(_fusion.MLIRError, match="another function"):
        relu(g, x)
    other = _fusion.Module.create(context, "b").add_function("f")
    with pytest.raises(_fusion.MLIRError, match="another function"):
        other.finish([x])
    with pytest.raises(_fusion.MLIRError, match="already has a symbol @f"):
        m.add_function("f")


def test_calls_after_finish(function):
    _, f = function
    x = f.argument([None, 4], "f32")
    f.finish([x])
    with pytest.raises(_fusion.MLIRError, match="is finished"):
        relu(f, x)
    with pytest.raises(_fusion.MLIRError, match="is finished"):
        f.finish([x])


def test_pipelines_wait_for_open_functions(function):
    m, f = function
    x = f.argument([None, 4], "f32")
    # An open function has no terminator yet: the module is invalid, and no
    # pass runs on it.
    with pytest.raises(_fusion.MLIRError, match="not run"):
        m.run_pipeline("builtin.module(fusion-optimize)")
    f.finish([relu(f, x)])
    m.run_pipeline("builtin.module(fusion-optimize)")
    # Functions added after a pipeline build as usual.
    h = m.add_function("h")
    h.finish([relu(h, h.argument([None, 4], "f32"))])
    m.verify()


def test_scalar_errors(function):
    _, f = function
    x = f.argument([None, 4], "f32")
    cases = [
        (lambda s, v, c, r: s.op("arith.nosuch", [v]), "unknown operation"),
        (lambda s, v, c, r: s.op("math.round", [v]),
         "'math.round' is not allowed"),
        (lambda s, v, c, r: s.op("func.return", [v]), "'func.return' is not allowed"),
        (lambda s, v, c, r: s.op("arith.addf", [v]), "invalid arith.addf"),
        (lambda s, v, c, r: s.op("arith.cmpf", [v, v]), "needs a predicate"),
        (lambda s, v, c, r: s.op("arith.cmpf", [v, v], predicate="bigger"),
         "unknown arith.cmpf predicate 'bigger'"),
        (lambda s, v, c, r: s.op("arith.addf", [v, v], predicate="olt"),
         "only for arith.cmpf"),
        (lambda s, v, c, r: s.op("arith.divf", [v, v], fastmath="quick"),
         "unknown fastmath flags 'quick'"),
        (lambda s, v, c, r: s.op("arith.divf", [s.constant(1.0), v],
                                 fastmath="fast"),
         "only arith.divf, math.erf, math.exp, math.sin, math.cos and "
         "math.tanh may carry fastmath flags, and only afn"),
        (lambda s, v, c, r: s.op("arith.divf", [v, v], fastmath="contract"),
         "only arith.divf"),
        (lambda s, v, c, r: s.op("math.log", [v], fastmath="afn"),
         "only arith.divf"),
        (lambda s, v, c, r: s.op("arith.select",
                                 [s.op("arith.cmpf", [v, v], predicate="olt"),
                                  v, v], fastmath="afn"),
         "'arith.select' takes no fastmath flags"),
        (lambda s, v, c, r: s.op("arith.select", [v, v, v]), "invalid arith.select"),
        (lambda s, v, c, r: s.op("arith.addf", []), "needs operands"),
        (lambda s, v, c, r: 1.0, "must return a Scalar"),
        (lambda s, v, c, r: s.op("arith.cmpf", [v, v], predicate="olt"),
         "invalid fusion.elementwise"),
    ]
    for body, message in cases:
        with pytest.raises(_fusion.MLIRError, match=message):
            f.elementwise(x, [], body)
    f.finish([x])
    assert "fusion.elementwise" not in str(function[0])


def test_scalars_do_not_escape_their_body(function):
    _, f = function
    x = f.argument([None, 4], "f32")
    kept = []

    def body(s, v, columns, rows):
        kept.append((s, v))
        return v

    f.elementwise(x, [], body)
    s, v = kept[0]
    with pytest.raises(_fusion.MLIRError, match="complete"):
        s.constant(1.0)
    with pytest.raises(_fusion.MLIRError, match="another elementwise body"):
        f.elementwise(x, [], lambda s2, v2, c, r: s2.op("arith.addf", [v2, v]))
    with pytest.raises(_fusion.MLIRError, match="scalar of another region"):
        f.elementwise(x, [], lambda s2, v2, c, r: v)


def test_python_exception_in_body_propagates(function):
    m, f = function
    x = f.argument([None, 4], "f32")

    def body(s, v, columns, rows):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        f.elementwise(x, [], body)
    f.finish([x])
    m.verify()


def test_bad_location(function):
    _, f = function
    x = f.argument([None, 4], "f32")
    with pytest.raises(_fusion.MLIRError, match="loc must be None"):
        f.batch_norm(x, loc="model.py:3")
    with pytest.raises(_fusion.MLIRError, match="loc must be None"):
        f.batch_norm(x, loc=("model.py", 2**70))
    with pytest.raises(_fusion.MLIRError, match="loc must be None"):
        f.batch_norm(x, loc=("model.py", -1))


def test_invalid_batch_norm_config(function):
    _, f = function
    x = f.argument([None, 4], "f32")
    with pytest.raises(_fusion.MLIRError, match="batch_norm"):
        f.batch_norm(x, training=True, epsilon=-1.0)
    mean = f.argument([4], "f32")
    with pytest.raises(_fusion.MLIRError, match="given together"):
        f.batch_norm(x, running_mean=mean)


def test_body_callback_cannot_close_or_transform_its_function(function):
    m, f = function
    x = f.argument([None, 4], "f32")

    def finishes(s, v, columns, rows):
        f.finish([x])
        return v

    with pytest.raises(_fusion.MLIRError, match="filling an elementwise body"):
        f.elementwise(x, [], finishes)
    f.finish([x])
    m.verify()
    g = m.add_function("g")
    y = g.argument([None, 4], "f32")

    def transforms(s, v, columns, rows):
        with pytest.raises(_fusion.MLIRError, match="not run"):
            m.run_pipeline("builtin.module(fusion-optimize)")
        return v

    g.finish([g.elementwise(y, [], transforms)])
    m.verify()
