"""The benchmark suites. Each takes the parsed arguments and a `measure`
({key: fn} -> {key: {timer: ms}}, the calls timed in turn) and returns
(title, fusion's key, rows, failures): rows [(label cells, {key: {timer:
ms}})], failures the cases whose first call missed its bound (the timings
of a wrong result mean nothing).

workloads: the fusion-compile'd workload libraries of the artifacts
    (wgmma, tiled, cublas, simt; an earlier commit's beside them with
    --baseline) through ctypes, against the raw GEMM (torch.addmm),
    eager PyTorch and torch.compile;
family: the epilogue family's bench models (tests/gpu/family.py) through
    fusion.compile from the library cache, each strategy's first call
    checked against float64, against eager, torch.compile and F.linear;
models: workloads A, B and an MLP block as nn.Modules through
    torch.compile(backend="fusion") (also captured in a CUDA graph),
    fusion.compile, the bare library call and fusion + inductor;
transformers: the transformer zoo (tests/transformer_zoo.py, its "bench"
    size, or --transformer-size) through torch.compile(backend="fusion"),
    by default (inductor compiles the rest), with fallback="eager" and
    with group_gemms="off", from the library cache,
    each first call checked against float64, against eager and inductor;
transformers-train: a bf16 training step of the same models
    (`transformers_train`);
kernelbench: KernelBench's level-2 GEMM problems (tests/gpu/kernelbench.py,
    their sizes, training mode as KernelBench runs them) through
    torch.compile(backend="fusion") from the library cache, each first
    call checked against float64, against eager and inductor
    (`kernelbench`);
host-overhead: host time per call at tiny shapes (`host_overhead`).
"""
import copy
import re
import traceback
import warnings

import torch
import torch.nn.functional as F

import fusion
import fusion.dynamo

from gpu import family, frontend
from gpu.helpers import (DTYPES, MODELS, PRECISIONS, TARGET, Library,
                         bare_call, make_inputs, precision_setup,
                         relative_error, workload_kind)

# (workload, batch, function): the headline shapes; the GEMM alone (G,
# identity epilogue) against cuBLAS; and batch 128, whose 128x256 tiles
# leave half of an H100's SMs idle (the batch configs) and whose batch
# norm one block row of tiles holds.
WORKLOAD_CASES = [("A", 1024, "a_8192x8192"), ("B", 16384, "b_4096x4096"),
                  ("B'", 1024, "b_8192x8192"), ("G", 1024, "g_8192x8192"),
                  ("G", 16384, "g_4096x4096"), ("G", 8192, "g_8192x8192"),
                  ("A", 128, "a_16384x16384"), ("B", 128, "b_16384x16384"),
                  ("B", 128, "b_4096x4096"), ("G", 128, "g_16384x16384"),
                  ("G", 128, "g_8192x8192")]
WORKLOAD_LIBRARIES = {"fp32": "workloads_f32_fp32",
                      "tf32": "workloads_f32_tf32", "bf16": "workloads_bf16"}
FOLDERS = {"wgmma": "wgmma", "tiled": "tiled", "cublas": "", "simt": "simt"}


def timed(case, times):
    """The case's times as they come ({key: {timer: ms}}), so that a run
    stopped before its tables still leaves them in the log."""
    print(f"timed {case}: " + "; ".join(
        f"{key} " + " ".join(f"{ms:.3f}" for ms in by_timer.values())
        for key, by_timer in times.items()) + " ms", flush=True)


def compile_modes(args):
    return [m for m in args.compile_modes.split(",") if m and m != "none"]


def compiled_inductor(model, mode):
    torch._dynamo.reset()
    return torch.compile(model, mode=None if mode == "default" else mode)


def compile_key(mode):
    return "torch.compile" if mode == "default" else f"compile {mode}"


def workloads(args, measure):
    precisions = args.precisions.split(",")
    fusion_key = ("wgmma" if torch.cuda.get_device_capability() == (9, 0)
                  else "tiled")
    folders = {}
    for side, folder in FOLDERS.items():
        folders[side] = args.artifacts / folder
        if args.baseline:
            folders[f"{side}@base"] = args.baseline / folder
    rows = []
    for precision in precisions:
        stem = WORKLOAD_LIBRARIES[precision]
        libs = {side: Library(folder / f"{stem}.so")
                for side, folder in folders.items()
                if (folder / f"{stem}.so").exists()}
        for label, m, name in WORKLOAD_CASES:
            if args.cases and label not in args.cases.split(","):
                continue
            k, n = (int(v) for v in name.split("_")[1].split("x"))
            kind = workload_kind(name)
            dtype = DTYPES[precision]
            precision_setup(precision)
            inputs = make_inputs(kind, m, k, n, dtype)
            x, w, b = inputs[:3]
            calls = {}
            for side, lib in libs.items():
                if name not in lib.entries:
                    continue
                outputs = [torch.empty([m if d is None else d for d in
                                        o["shape"]], device="cuda",
                                       dtype=dtype)
                           for o in lib.entries[name]["outputs"]]
                calls[side] = (lambda lib=lib, outputs=outputs:
                               lib.run(name, m, inputs, outputs))
            calls["gemm"] = lambda: torch.addmm(b, x, w.t())
            model = MODELS[kind]
            calls["eager"] = lambda: model(*inputs)
            if kind != "g":
                for mode in compile_modes(args):
                    calls[compile_key(mode)] = (
                        lambda c=compiled_inductor(model, mode): c(*inputs))
            times = measure(calls)
            rows.append(((label, f"{m}x{k}x{n}", precision), times))
            timed(f"{label} {m}x{k}x{n} {precision}", times)
    precision_setup("fp32")
    return "workloads (fusion-compile libraries)", fusion_key, rows, []


def family_suite(args, measure):
    sizes = ([tuple(map(int, s.split("x"))) for s in args.sizes.split(",")]
             if args.sizes else None)
    models = args.models.split(";") if args.models else None
    strategies = args.strategies.split(",")
    rows, failures = [], []
    with torch.no_grad():
        for case in family.bench_cases(sizes,
                                       args.family_precisions.split(","),
                                       models):
            category, name, body, norm, training, m, k, n, pname = case
            dtype, precision, bound = PRECISIONS[pname]
            precision_setup(pname)
            model = family.bench_model(body, norm, training, k, n, dtype,
                                       "cuda")
            reference = copy.deepcopy(model).double()
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            eager_error = family.checked_first_call(model, model, x,
                                                    reference)
            # A model that magnifies its GEMM's rounding past the bound (a
            # low-temperature softmax): within 1.25 times eager's error.
            bound = max(bound, 1.25 * eager_error)
            calls = {}
            for strategy in strategies:
                compiled = fusion.compile(
                    model, (x,), target=TARGET, precision=precision,
                    **family.strategy_options(strategy))
                error = family.checked_first_call(compiled, model, x,
                                                  reference)
                if not error <= bound:
                    failures.append(f"{name} {m}x{k}x{n} {pname} "
                                    f"{strategy}: {error:.3g} > {bound:.0e}")
                calls[strategy] = lambda c=compiled: c(x)
            del reference
            calls["eager"] = lambda: model(x)
            w, b = model.linear.weight, model.linear.bias
            calls["gemm"] = lambda: F.linear(x, w, b)
            for mode in compile_modes(args):
                calls[compile_key(mode)] = (
                    lambda c=compiled_inductor(model, mode): c(x))
            times = measure(calls)
            torch._dynamo.reset()
            rows.append(((f"{category}: {name}", f"{m}x{k}x{n}", pname),
                         times))
            timed(f"{name} {m}x{k}x{n} {pname}", times)
    precision_setup("fp32")
    return ("the epilogue family (fusion.compile)", strategies[0], rows,
            failures)


def captured(fn):
    """`fn` captured in a CUDA graph: its replay."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def models(args, measure):
    rows, failures = [], []
    for name, make, shape, aot in frontend.workloads():
        for pname, dtype, option, allow_tf32 in frontend.PRECISIONS:
            if pname not in args.precisions.split(","):
                continue
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
            torch.manual_seed(0)
            model = make().to(dtype).cuda()
            x = torch.randn(*shape, device="cuda", dtype=dtype)
            torch._dynamo.reset()
            calls = {}
            with torch.no_grad():
                dynamo = torch.compile(model, backend="fusion",
                                       options=frontend.options(option))
                dynamo(x)
                if not fusion.dynamo.last_fused:
                    failures.append(f"{name} {pname}: nothing fused")
                calls["fusion dynamo"] = lambda d=dynamo: d(x)
                calls["dynamo in CUDA graph"] = captured(
                    lambda d=dynamo: d(x))
                if aot:
                    compiled = fusion.compile(model, (x,), target=TARGET,
                                              precision=option or None)
                    calls["fusion.compile"] = lambda c=compiled: c(x)
                    calls["bare library"] = bare_call(compiled, (x,))
                if name.startswith("MLP"):
                    torch._dynamo.reset()
                    rest = torch.compile(model, backend="fusion",
                                         options=frontend.options(
                                             option, fallback="inductor"))
                    rest(x)
                    calls["fusion + inductor"] = lambda r=rest: r(x)
                calls["eager"] = lambda: model(x)
                for mode in compile_modes(args):
                    inductor = compiled_inductor(model, mode)
                    inductor(x)
                    calls[compile_key(mode)] = lambda c=inductor: c(x)
                linear = getattr(model, "linear", None)
                if linear is not None:
                    calls["gemm"] = lambda: F.linear(x, linear.weight,
                                                     linear.bias)
                times = measure(calls)
                torch._dynamo.reset()
            rows.append(((name, pname), times))
            timed(f"{name} {pname}", times)
    torch.backends.cuda.matmul.allow_tf32 = False
    return ("models (nn.Modules through the front ends)", "fusion dynamo",
            rows, failures)


TRANSFORMER_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def _transformer_error(out, reference):
    return ((out.double() - reference).norm() / reference.norm()).item()


def transformers(args, measure):
    import transformer_zoo
    from gpu.helpers import LIBRARY_BOUNDS
    from model_fuzz import EAGER_ERROR_FACTOR
    rows, failures = [], []
    names = args.models.split(";") if args.models else \
        sorted(transformer_zoo.MODELS)
    for name in names:
        for pname in args.precisions.split(","):
            if pname not in TRANSFORMER_DTYPES:
                continue
            precision_setup("fp32")
            dtype = TRANSFORMER_DTYPES[pname]
            model, inputs = transformer_zoo.make(name, args.transformer_size)
            model = model.eval().to(device="cuda", dtype=dtype)
            inputs = {k: v.to(device="cuda", dtype=dtype)
                      if v.is_floating_point() else v.cuda()
                      for k, v in inputs.items()}
            calls = {}
            with torch.no_grad():
                eager = model(**inputs).last_hidden_state
                reference = copy.deepcopy(model).double()(**{
                    k: v.double() if v.is_floating_point() else v
                    for k, v in inputs.items()}).last_hidden_state
                bound = LIBRARY_BOUNDS[pname] + EAGER_ERROR_FACTOR * \
                    _transformer_error(eager, reference)
                # The default, then with PyTorch's kernels for the rest,
                # and with shared-input projections (q, k, v) apart.
                for key, options in (
                        ("fusion (default)", {"fallback": "inductor"}),
                        ("fusion, eager rest", {"fallback": "eager"}),
                        ("fusion, ungrouped", {"fallback": "inductor",
                                               "group_gemms": "off"})):
                    torch._dynamo.reset()
                    fast = torch.compile(model, backend="fusion",
                                         options=options)
                    error = _transformer_error(
                        fast(**inputs).last_hidden_state, reference)
                    if not error <= bound:
                        failures.append(f"{name} {pname} {key}: error "
                                        f"{error:.3g} > {bound:.1e}")
                    calls[key] = lambda f=fast: f(**inputs)
                calls["eager"] = lambda: model(**inputs)
                for mode in compile_modes(args):
                    inductor = compiled_inductor(model, mode)
                    inductor(**inputs)
                    calls[compile_key(mode)] = lambda c=inductor: c(**inputs)
                del reference
                times = measure(calls)
                torch._dynamo.reset()
            rows.append(((name, pname), times))
            timed(f"{name} {pname}", times)
            del model, calls
            torch.cuda.empty_cache()
    size = transformer_zoo.SIZES[args.transformer_size]
    return (f"transformers (torch.compile, {size['layers']} layers, hidden "
            f"{size['hidden']}, {size['batch']} x {size['tokens']} tokens)",
            "fusion (default)", rows, failures)


def transformers_train(args, measure):
    """A training step of each zoo model (the "bench" size; with the
    hidden states' dropout at --dropout above 0, those that have one,
    transformer_zoo.DROPPING): forward, the mean of the last hidden
    state as the loss, backward and AdamW's step, through
    torch.compile(backend="fusion") (inductor compiling the rest; the
    backward as fuse_backward's default has it, and, without dropout, with
    every backward GEMM fused, fuse_backward="on"), against eager and
    inductor; bf16 alone (the issue's target). The numbers of training are
    the GPU check's (test_transformers, train mode)."""
    import transformer_zoo
    rows = []
    names = args.models.split(";") if args.models else sorted(
        transformer_zoo.DROPPING if args.dropout else transformer_zoo.MODELS)
    if "bf16" not in args.precisions.split(","):
        return ("transformers training step", "fusion (default)", rows, [])
    for name in names:
        precision_setup("fp32")
        model, inputs = transformer_zoo.make(name, "bench",
                                             dropout=args.dropout)
        model = model.train().to(device="cuda", dtype=torch.bfloat16)
        inputs = {k: v.to(device="cuda", dtype=torch.bfloat16)
                  if v.is_floating_point() else v.cuda()
                  for k, v in inputs.items()}
        calls = {}
        variants = [("fusion (default)", "fusion", None),
                    ("fusion, backward fused", "fusion",
                     {"fuse_backward": "on"}),
                    ("eager", None, None), ("torch.compile", "inductor", None)]
        if args.dropout:  # Not prepared with the backward fused.
            variants = [v for v in variants
                        if v[0] != "fusion, backward fused"]
        for key, backend, options in variants:
            torch._dynamo.reset()
            copied = copy.deepcopy(model)
            forward = torch.compile(copied, backend=backend,
                                    options=options) \
                if backend else copied
            optimizer = torch.optim.AdamW(copied.parameters(), lr=1e-5)

            def step(forward=forward, optimizer=optimizer):
                optimizer.zero_grad(set_to_none=True)
                forward(**inputs).last_hidden_state.float().mean().backward()
                optimizer.step()
            step()
            calls[key] = step
        times = measure(calls)
        torch._dynamo.reset()
        rows.append(((name, "bf16"), times))
        timed(f"{name} bf16 training step", times)
        del model, calls
        torch.cuda.empty_cache()
    return (f"transformers training step (torch.compile, 4 layers, hidden "
            f"2048, 8 x 1024 tokens, AdamW, dropout {args.dropout})",
            "fusion (default)", rows, [])


def kernelbench(args, measure):
    """Each KernelBench problem (--models: numbers or names, ';' or ','
    separated; default all) in each of --precisions, as KernelBench runs
    it (training mode, under torch.no_grad(), its sizes): eager, inductor
    and fusion (options target sm_90 and the precision; a column a
    strategy of --strategies, the ratios the first's), fusion's first
    call checked against float64 (test_kernelbench's bound). What fails is
    recorded (a failure; the row without that time) and the rest goes
    on."""
    from gpu import kernelbench as problems

    def case(problem, pname, failures):
        fused, times = _kernelbench_case(problems, problem, pname, args,
                                         measure, failures)
        return (fused,), times
    rows, failures = _each_problem(args, problems.PRECISIONS, case, ("-",))
    return ("KernelBench level 2, GEMM problems (torch.compile, "
            "KernelBench's sizes, training mode)", "fusion", rows, failures)


def _each_problem(args, precisions, case, failed_cells, suffix=""):
    """(rows, failures) of `case(problem, precision, failures)` -> (cells
    after the problem's and precision's, {key: {timer: ms}}) over the
    KernelBench problems of --models (numbers or names, ';' or ','
    separated; default all) and those of --precisions in `precisions`;
    a case that raises is recorded (a failure; its row `failed_cells` and
    no times) and the rest goes on."""
    from gpu import kernelbench as problems
    names = re.split(r"[;,]", args.models) if args.models else None
    rows, failures = [], []
    for problem in problems.selected(names):
        for pname in args.precisions.split(","):
            if pname not in precisions:
                continue
            what = f"{problem.name} {pname}{suffix}"
            cells, times = failed_cells, {}
            try:
                cells, times = case(problem, pname, failures)
            except Exception as error:  # noqa: BLE001 (recorded, go on)
                failures.append(_failed(what, error))
            finally:
                precision_setup("fp32")
                torch._dynamo.reset()
                torch.cuda.empty_cache()
            rows.append(((problem.name, pname, *cells), times))
            timed(what, times)
    return rows, failures


def _failed(what, error):
    """The failure's line (its traceback printed)."""
    print(f"FAILED {what}:\n{traceback.format_exc()}", flush=True)
    first = (str(error).strip().splitlines() or [""])[0]
    return f"{what}: {type(error).__name__}: {first[:200]}"


def _kernelbench_case(problems, problem, pname, args, measure, failures):
    """(the partitions fusion fused, {key: {timer: ms}}) of one problem in
    one precision; `failures` gets what failed (a compile, a first call
    beyond its bound, a graph fusion left to PyTorch, a timing)."""
    what = f"{problem.name} {pname}"
    precision_setup(pname)
    torch.manual_seed(0)
    model, inputs = problems.model_and_inputs(problem, pname, True, "cuda")
    calls = {"eager": lambda: model(*inputs)}
    fused = "-"
    with torch.no_grad():
        # Inductor first: its compile resets dynamo, which would have
        # fusion's graph compiled again.
        for mode in compile_modes(args):
            try:
                inductor = compiled_inductor(model, mode)
                inductor(*inputs)
                calls[compile_key(mode)] = lambda c=inductor: c(*inputs)
            except Exception as error:  # noqa: BLE001 (recorded, go on)
                failures.append(_failed(f"{what} {compile_key(mode)}",
                                        error))
        for index, strategy in enumerate(args.strategies.split(",")):
            key = "fusion" if index == 0 else f"fusion {strategy}"
            try:
                calls[key], partitions = _kernelbench_fusion(
                    problems, problem, pname, model, inputs, failures,
                    strategy)
                if index == 0:
                    fused = partitions
            except Exception as error:  # noqa: BLE001 (recorded, go on)
                failures.append(_failed(f"{what} {key}", error))
        times = measure(calls, lambda key, error: failures.append(
            _failed(f"{what} {key}", error)))
    return fused, times


def _kernelbench_fusion(problems, problem, pname, model, inputs, failures,
                        strategy="auto"):
    """fusion's call of `model` under `strategy` and the partitions it
    fused, compiled for the timed training mode after its first call is
    checked against float64 (in eval mode where a dropout would leave no
    reference)."""
    what = f"{problem.name} {pname}{problems.strategy_label(strategy)}"
    fast = torch.compile(model, backend="fusion",
                         options=problems.fusion_options(pname, strategy))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", fusion.FusionBackendWarning)
        try:
            model.train(problems.check_mode(problem))
            _kernelbench_check(problems, what, pname, model, inputs, fast,
                               failures)
            model.train(True)
            fast(*inputs)  # Compiled for training mode, if not yet.
        finally:
            model.train(True)
            failures += [f"{what}: {w.message}" for w in caught if
                         issubclass(w.category, fusion.FusionBackendWarning)]
    return (lambda: fast(*inputs)), len(fusion.dynamo.last_fused)


def _kernelbench_check(problems, what, pname, model, inputs, fast,
                       failures):
    """`fast`'s first call against float64, within the bound of the
    precision and eager's own error."""
    reference = problems.float64_copy(model)
    eager = problems.call_error(model, model, inputs, reference)
    error = problems.call_error(fast, model, inputs, reference)
    _within_bound(problems, what, pname, error, eager, failures)


def _within_bound(problems, what, pname, error, eager_error, failures):
    """Logs fusion's error against float64; beyond the precision's bound
    plus the margin on eager's own error, a failure."""
    bound = problems.bound(pname, eager_error)
    print(f"{what}: error {error:.3g} (eager {eager_error:.3g}, bound "
          f"{bound:.2g})", flush=True)
    if not error <= bound:
        failures.append(f"{what}: error {error:.3g} > {bound:.2g}")


def kernelbench_train(args, measure):
    """A training step of each KernelBench problem (--models; default all)
    in each of --precisions that is a training precision (tf32, bf16:
    issue 67's targets): the forward in training mode, the loss a fixed
    random projection of the output, the backward and AdamW's step;
    fusion (the kernelbench suite's options, the backward as fuse_backward's
    default has it) against eager and torch.compile. Fusion's first step,
    its output and every parameter's gradient, is checked against float64
    where the problem has no dropout (whose random mask leaves no
    reference)."""
    from gpu import kernelbench as problems

    def case(problem, pname, failures):
        return (), _kernelbench_step_times(problems, problem, pname,
                                           measure, failures)
    rows, failures = _each_problem(args, problems.TRAINING_PRECISIONS, case,
                                   (), " training step")
    return ("KernelBench level 2, GEMM problems, training step (forward, "
            "backward, AdamW; KernelBench's sizes)", "fusion", rows,
            failures)


def _kernelbench_step_times(problems, problem, pname, measure, failures):
    what = f"{problem.name} {pname} training step"
    precision_setup(pname)
    torch.manual_seed(0)
    model, inputs = problems.model_and_inputs(problem, pname, True, "cuda")
    with torch.no_grad():
        projection = torch.randn_like(model(*inputs), dtype=torch.float32)
    steps = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", fusion.FusionBackendWarning)
        for key, backend, options in (
                ("torch.compile", "inductor", None), ("eager", None, None),
                ("fusion", "fusion", problems.fusion_options(pname))):
            torch._dynamo.reset()
            copied = copy.deepcopy(model)
            forward = torch.compile(copied, backend=backend,
                                    options=options) \
                if backend else copied
            if key == "fusion" and problems.check_mode(problem):
                _check_step(problems, what, pname, model, forward, copied,
                            inputs, projection, failures)
            optimizer = torch.optim.AdamW(copied.parameters(), lr=1e-5)

            def step(forward=forward, optimizer=optimizer):
                optimizer.zero_grad(set_to_none=True)
                (forward(*inputs).float() * projection).sum().backward()
                optimizer.step()
            step()
            steps[key] = step
        failures += [f"{what}: {w.message}" for w in caught
                     if issubclass(w.category, fusion.FusionBackendWarning)]
    return measure(steps)


def _check_step(problems, what, pname, model, forward, copied, inputs,
                projection, failures):
    """The first step's output and parameter gradients through `forward`
    (of `copied`, a copy of `model`) against float64, within the
    precision's bound plus the kernelbench margin on eager's error."""
    def gradients(call, module, args):
        out = call(*args)
        (out.double() * projection.double()).sum().backward()
        grads = torch.cat([p.grad.flatten().double()
                           for p in module.parameters()])
        for p in module.parameters():
            p.grad = None
        return out, grads

    reference = problems.float64_copy(model)
    exact = gradients(reference, reference, [x.double() for x in inputs])
    eager_model = copy.deepcopy(model)
    eager = gradients(eager_model, eager_model, inputs)
    found = gradients(forward, copied, inputs)
    error = max(relative_error(f, e, 1e-30) for f, e in zip(found, exact))
    eager_error = max(relative_error(f, e, 1e-30)
                      for f, e in zip(eager, exact))
    _within_bound(problems, what, pname, error, eager_error, failures)


def host_overhead(args, host_time):
    """Host us per call: the artifacts' libraries through ctypes (bf16
    a_513x129 at M = 1: the multi-target library and the sm_90 one), and
    the tiny 8x64x64 model through each front end, and its library through
    the fusion::run operator alone."""
    results = {}
    for label, sub in (("C ABI, multi-target library", ""),
                       ("C ABI, sm_90 library", "sm_90")):
        path = args.artifacts / "multi" / sub / "workloads_bf16.so"
        if not path.exists():
            continue
        lib = Library(path)
        inputs = make_inputs("a", 1, 513, 129, torch.bfloat16)
        outputs = [torch.empty(1, 129, device="cuda", dtype=torch.bfloat16)]
        results[label] = host_time(
            lambda: lib.run("a_513x129", 1, inputs, outputs))
    name, make, shape, _ = frontend.tiny()
    torch.manual_seed(0)
    model = make().cuda()
    x = torch.randn(*shape, device="cuda")
    with torch.no_grad():
        compiled = fusion.compile(model, (x,), target=TARGET)
        torch._dynamo.reset()
        dynamo = torch.compile(model, backend="fusion",
                               options=frontend.options(""))
        dynamo(x)
        inductor = torch.compile(copy.deepcopy(model))
        inductor(x)
        linear = model.linear
        entry = compiled._entries[compiled._mode()]
        key = compiled._library.keys[entry.name]
        arguments = compiled._arguments(entry, (x,))
        cases = {"bare C ABI call (ctypes)": bare_call(compiled, (x,)),
                 "fusion::run operator (C++)": lambda: torch.ops.fusion.run(
                     key, arguments),
                 "fusion.compile module": lambda: compiled(x),
                 "fusion.compile module, Python forward":
                     lambda: compiled._checked_forward((x,), {}),
                 "torch.compile(backend=fusion)": lambda: dynamo(x),
                 "CUDA graph replay (dynamo)": captured(lambda: dynamo(x)),
                 "torch.compile (inductor)": lambda: inductor(x),
                 "eager F.linear alone": lambda: F.linear(
                     x, linear.weight, linear.bias),
                 "eager model": lambda: model(x)}
        for case, fn in cases.items():
            results[f"{name}: {case}"] = host_time(fn)
    return results


SUITES = {"workloads": workloads, "family": family_suite, "models": models,
          "transformers": transformers,
          "transformers-train": transformers_train,
          "kernelbench": kernelbench, "kernelbench-train": kernelbench_train,
          "host-overhead": host_overhead}
