"""Values of the importer: scalar expressions over an element of a matrix
(Expr), chains of them over a matrix (Chain) and values of vectors
alone (Vectors)."""


class Expr:
    """A scalar expression over one element of a matrix (`x`, the root of
    the op that computes it), elements of per-column vectors ("column") and
    of per-row operands ("row", a [rows, G] matrix broadcast over N/G
    contiguous columns) and numbers; `args` hold Expr, numbers, strings or
    None."""
    __slots__ = ("fn", "args", "kwargs")

    def __init__(self, fn, args=(), kwargs=()):
        self.fn, self.args, self.kwargs = fn, tuple(args), tuple(kwargs)


ROOT = Expr("x")
# "vector": an fx node whose value is a per-column vector or a single value,
# in the expression of a Vectors value (no program operand yet).
LEAVES = ("x", "column", "row", "vector")


def map_leaves(expr, replace):
    """`expr` with each leaf `e` replaced by `replace(e)`."""
    memo = {}

    def visit(e):
        if not isinstance(e, Expr):
            return e
        if e.fn in LEAVES:
            return replace(e)
        if id(e) not in memo:
            memo[id(e)] = Expr(e.fn, [visit(a) for a in e.args],
                                [(k, visit(v)) for k, v in e.kwargs])
        return memo[id(e)]

    return visit(expr)


def substitute(expr, leaf):
    """`expr` with its root `x` replaced by `leaf`."""
    return map_leaves(expr, lambda e: leaf if e.fn == "x" else e)


def _leaves(expr, fn):
    """The leaves of kind `fn` of `expr`, each node visited once."""
    seen, stack = set(), [expr]
    while stack:
        e = stack.pop()
        if not isinstance(e, Expr) or id(e) in seen:
            continue
        seen.add(id(e))
        if e.fn == fn:
            yield e
        stack += list(e.args) + [v for _, v in e.kwargs]


def reads_columns(expr):
    return next(_leaves(expr, "column"), None) is not None


def row_leaves(expr):
    """The "row" leaves of `expr` (its row operands)."""
    return list(_leaves(expr, "row"))


class Vectors:
    """A value computed from per-column vectors, single values and numbers
    alone (`torch.exp(self.log_scale)`): `expr` over their "vector" leaves.
    It has no rows of its own; an op that reads it with a [batch, features]
    value evaluates it for each element, reading its vectors' elements as
    columns, as PyTorch's broadcasting does."""
    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr


class Chain:
    """A value computed per row: `expr` over the [rows, width] matrix `root`
    (a program value), not yet materialized unless `expr` is the root
    itself. `width` is the number of values per row: the features of a
    GEMM output, 1 for a per-row value (a reduction's [B] or [B, 1]
    result), G for grouped statistics ([B, G, 1]). Its PyTorch shape is
    its node's."""
    __slots__ = ("root", "expr", "width")

    def __init__(self, root, expr=ROOT, width=None):
        self.root, self.expr, self.width = root, expr, width
