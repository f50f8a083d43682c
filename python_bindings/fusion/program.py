"""Programs: what the importer makes of a model or a graph partition, before
it is IR.

A Program is plain data (JSON): its arguments' shapes, element types and
value numbers, its ops on numbered values, and its results. The ops:

- {"op": "linear", "operands": [x, weight, bias or null]}, with
  "weight_layout": "in_out" where the weight is stored [in_features,
  out_features] (`x @ w`, GPT-2's Conv1D; else nn.Linear's [out, in])
- {"op": "elementwise", "operands": [x, *columns, *rows], "columns": C,
  "body": [...]}: y[m, n] = body(x[m, n], columns[i][n],
  rows[j][m, n // (N / G_j)]), a row operand being a [M, G_j] value (G_j
  dividing N: 1 for a value per row, N for a whole matrix such as a
  residual, a group count in between).
- {"op": "reduce", "kind": "sum" | "max" | "min", "groups": G,
  "operands": [x, *columns, *rows], "columns": C, "body": [...]}: a [M, G]
  result, out[m, g] = the kind's combination over the g-th of G contiguous
  groups of row m of body(x[m, n], columns, rows) (the map, as an
  elementwise op's body).
- {"op": "batch_norm", "operands": [x, weight, bias, running_mean,
  running_var], "training", "epsilon", "momentum"}
- {"op": "concat", "operands": [arguments...], "dim": d}: arguments (a
  linear op's weights or biases) concatenated along dimension d, a
  `fusion.concat` that the linear op reads in place
- {"op": "random_uniform", "operands": [seed, rows_of], "columns": N,
  "stream": s}: a [rows of rows_of, N] draw of uniform random numbers in
  [0, 1) (`fusion.random_uniform`), seed a [2] f32 argument holding 64
  random bits (SEED_SHAPE, SEED_DTYPE) that the caller draws per call

A body is a list of nodes, operands first: {"fn": "x"}, {"fn": "column",
"index": i}, {"fn": "row", "index": j}, or {"fn": ATen op name, "args",
"kwargs"} whose scalar formula is fusion/formulas.py's FORMULAS entry (the
ELEMENTWISE table's, or a boolean's promotion to a number);
an argument is {"ref": node index}, a number, a string or null. Every op
may carry "loc": [file, line].

Being plain data, a program is
- the key of the compiled-library cache (without source locations), and
- what a saved module's library is checked against when it is loaded,
neither of which needs the compiler. `build` turns programs into a fusion
module through the native extension's op builders.
"""
import hashlib
import json

from .formulas import FORMULAS

# A draw's seed argument: 64 random bits as two float32 elements (the entry
# ABI's tensors are floating point), drawn per call by the caller
# (`draw_seed`).
SEED_SHAPE = [2]
SEED_DTYPE = "f32"


class Program:
    def __init__(self):
        self.data = {"arguments": [], "ops": [], "results": []}
        self._count = 0  # Values numbered so far.
        # The value of each pure op computed so far (elementwise ops and
        # reductions), by its record: the same computation is made once.
        self._pure = {}

    def _value(self):
        self._count += 1
        return self._count - 1

    def _op(self, record, location, results=1):
        if location is not None:
            record["loc"] = [location[0], location[1]]
        ids = [self._value() for _ in range(results)]
        record["results"] = ids
        self.data["ops"].append(record)
        return ids[0] if results == 1 else ids

    def argument(self, shape, element):
        value = self._value()
        self.data["arguments"].append({"shape": list(shape),
                                       "dtype": element, "value": value})
        return value

    def linear(self, x, weight, bias, location, weight_layout="out_in"):
        record = {"op": "linear", "operands": [x, weight, bias]}
        if weight_layout != "out_in":
            record["weight_layout"] = weight_layout
        return self._op(record, location)

    def concat(self, parts, dim, location):
        """Arguments `parts` concatenated along dimension `dim`."""
        return self._op({"op": "concat", "operands": list(parts),
                         "dim": dim}, location)

    def random_uniform(self, seed, rows_of, columns, stream, location):
        """A [rows of `rows_of`, `columns`] draw in [0, 1), independent of
        the draws of other `stream`s under one `seed`."""
        return self._op({"op": "random_uniform", "operands": [seed, rows_of],
                         "columns": columns, "stream": stream}, location)

    def _pure_op(self, record, location):
        key = json.dumps(record, sort_keys=True)
        if key not in self._pure:
            self._pure[key] = self._op(record, location)
        return self._pure[key]

    def elementwise(self, root, expr, location):
        body, columns, rows = _serialize(expr)
        return self._pure_op({"op": "elementwise",
                              "operands": [root] + columns + rows,
                              "columns": len(columns), "body": body},
                             location)

    def reduce(self, root, kind, groups, expr, location):
        """A [rows, groups] value: the `kind` ("sum", "max", "min") of
        `expr` over each of `groups` contiguous groups of a row."""
        body, columns, rows = _serialize(expr)
        return self._pure_op({"op": "reduce", "kind": kind, "groups": groups,
                              "operands": [root] + columns + rows,
                              "columns": len(columns), "body": body},
                             location)

    def batch_norm(self, x, *, training, epsilon, momentum, weight, bias,
                   running_mean, running_var, location, batch_stats=None):
        """[y], then the updated running statistics (training with running
        statistics), then the batch mean and inverse standard deviation of
        dtype `batch_stats` where it is given."""
        record = {"op": "batch_norm",
                  "operands": [x, weight, bias, running_mean, running_var],
                  "training": training, "epsilon": epsilon,
                  "momentum": momentum}
        if batch_stats is not None:
            record["batch_stats"] = batch_stats
        count = 1 + 2 * (training and running_mean is not None) + \
            2 * (batch_stats is not None)
        results = self._op(record, location, results=count)
        return results if count > 1 else [results]

    def result(self, value):
        self.data["results"].append(value)

    def remove_unread_ops(self):
        """Drops the ops none of whose results is read (a linear layer
        whose output is only read in pieces, each its own GEMM)."""
        while True:
            read = set(self.data["results"])
            for op in self.data["ops"]:
                read.update(op["operands"])
            ops = [op for op in self.data["ops"]
                   if read.intersection(op["results"])]
            if len(ops) == len(self.data["ops"]):
                return
            self.data["ops"] = ops
            self._pure = {k: v for k, v in self._pure.items() if v in read}

    @property
    def arguments(self):
        return self.data["arguments"]

    @property
    def results(self):
        return self.data["results"]

    def without_locations(self):
        ops = [{k: v for k, v in op.items() if k != "loc"}
               for op in self.data["ops"]]
        return dict(self.data, ops=ops)

    def fingerprint(self):
        """What identifies the computation: the program without where in the
        model's source it came from."""
        return json.dumps(self.without_locations(), sort_keys=True)


def _serialize(expr):
    """The expression DAG as a list of nodes, operands first; an operand is
    {"ref": i} (an earlier node), a number, a string or None. Returns it and
    the column vectors and row operands it reads, in order (its region's
    arguments)."""
    nodes, index, columns, rows = [], {}, [], []
    leaves = {"column": columns, "row": rows}

    def visit(e):
        key = (e.fn, e.args[0]) if e.fn in leaves else \
            ("x",) if e.fn == "x" else id(e)
        if key in index:
            return {"ref": index[key]}
        if e.fn in leaves:
            operands = leaves[e.fn]
            if e.args[0] not in operands:
                operands.append(e.args[0])
            node = {"fn": e.fn, "index": operands.index(e.args[0])}
        elif e.fn == "x":
            node = {"fn": "x"}
        else:
            node = {"fn": e.fn,
                    "args": [visit(a) if hasattr(a, "fn") else a
                             for a in e.args],
                    "kwargs": {k: visit(v) if hasattr(v, "fn") else v
                               for k, v in e.kwargs}}
        index[key] = len(nodes)
        nodes.append(node)
        return {"ref": index[key]}

    visit(expr)
    return nodes, columns, rows


class ScalarBuilder:
    """Arithmetic on the scalars of the native builder, with Python numbers
    as f32 constants, for the ELEMENTWISE table's formulas."""

    def __init__(self, native):
        self.native = native

    def value(self, v):
        return self.native.constant(float(v)) if isinstance(v, (int, float)) \
            else v

    def op(self, name, *operands):
        return self.native.op(name, [self.value(v) for v in operands])

    def cmp(self, predicate, a, b):
        return self.native.op("arith.cmpf", [self.value(a), self.value(b)],
                              predicate=predicate)

    def select(self, condition, a, b):
        return self.op("arith.select", condition, a, b)

    def add(self, a, b):
        return self.op("arith.addf", a, b)

    def sub(self, a, b):
        return self.op("arith.subf", a, b)

    def mul(self, a, b):
        return self.op("arith.mulf", a, b)

    def div(self, a, b):
        return self.op("arith.divf", a, b)

    def approximate_reciprocal(self, a):
        """1 / a within 1 ulp (GPUs: rcp.approx.f32, full range, no branch)
        instead of the correctly rounded division, whose slow-path branch
        serializes the GEMM epilogue's elements."""
        return self.native.op("arith.divf", [self.value(1.0), self.value(a)],
                              fastmath="afn")

    def neg(self, a):
        return self.op("arith.negf", a)

    def round_to(self, a, dtype):
        """`a` rounded to 16-bit `dtype` ("bf16", "f16") and back to f32."""
        return self.native.round_to(self.value(a), dtype)

    def special(self, function, libdevice, operands, formula, libm=None):
        """A fusion.special of `operands`, its body formula(s, *args) built
        with a ScalarBuilder of its own, or without one (formula None) where
        libdevice's and the C library's functions compute it."""
        def fill(native, *arguments):
            inner = ScalarBuilder(native)
            return inner.value(formula(inner, *arguments))
        return self.native.special(function, libdevice,
                                   [self.value(v) for v in operands],
                                   fill if formula else None, libm)


def _replay(body, native, x, columns, rows):
    """Emits a serialized expression's scalar ops; returns its value."""
    s = ScalarBuilder(native)
    values = []

    def operand(a):
        return values[a["ref"]] if isinstance(a, dict) else a

    for node in body:
        if node["fn"] == "x":
            values.append(x)
        elif node["fn"] == "column":
            values.append(columns[node["index"]])
        elif node["fn"] == "row":
            values.append(rows[node["index"]])
        else:
            values.append(FORMULAS[node["fn"]](
                s, *[operand(a) for a in node["args"]],
                **{k: operand(v) for k, v in node["kwargs"].items()}))
    return s.value(values[-1])


def build(programs):
    """A fusion module holding each program of `programs` ({name: Program})
    as a function, built with the native extension's op builders."""
    from . import _fusion

    module = _fusion.Module.create(_fusion.Context(), "model")
    for name, program in programs.items():
        f = module.add_function(name)
        values = {a["value"]: f.argument(a["shape"], a["dtype"])
                  for a in program.arguments}

        def get(i):
            return None if i is None else values[i]

        for op in program.data["ops"]:
            loc = tuple(op["loc"]) if "loc" in op else None
            operands = [get(i) for i in op["operands"]]
            results = op["results"]
            if op["op"] == "linear":
                values[results[0]] = f.linear(
                    *operands, weight_layout=op.get("weight_layout", "out_in"),
                    loc=loc)
            elif op["op"] in ("elementwise", "reduce"):
                count = op.get("columns", len(operands) - 1)
                columns, rows = operands[1:1 + count], operands[1 + count:]
                body = op["body"]

                def fill(native, x, cols, row_values, body=body):
                    return _replay(body, native, x, cols, row_values)

                if op["op"] == "reduce":
                    values[results[0]] = f.reduce(
                        operands[0], op["kind"], op["groups"], columns, rows,
                        fill, loc=loc)
                else:
                    values[results[0]] = f.elementwise(
                        operands[0], columns, fill, rows=rows, loc=loc)
            elif op["op"] == "batch_norm":
                x, weight, bias, mean, var = operands
                values.update(zip(results, f.batch_norm(
                    x, training=op["training"], epsilon=op["epsilon"],
                    momentum=op["momentum"], weight=weight, bias=bias,
                    running_mean=mean, running_var=var,
                    batch_stats=op.get("batch_stats"), loc=loc)))
            elif op["op"] == "concat":
                values[results[0]] = f.concat(operands, op["dim"], loc=loc)
            elif op["op"] == "random_uniform":
                values[results[0]] = f.random_uniform(
                    *operands, columns=op["columns"], stream=op["stream"],
                    loc=loc)
        f.finish([values[i] for i in program.results])
    return module


def cache_text(programs, options, compiler_id):
    """What identifies a compiled library: the computation, the compile
    options and the compiler (cache_key's text)."""
    return json.dumps({"programs": {n: p.without_locations()
                                    for n, p in programs.items()},
                       "options": options, "compiler": compiler_id},
                      sort_keys=True)


def cache_key(programs, options, compiler_id):
    """The compiled library's identity, a hash of its cache_text."""
    text = cache_text(programs, options, compiler_id)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
