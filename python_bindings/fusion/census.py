"""What the torch.compile backend fused: a report per GEMM of its graphs
(fusion.explain's answer)."""
import dataclasses


@dataclasses.dataclass
class GemmReport:
    """One GEMM of a compiled graph: its partition's ops (`members`: the
    concatenations of weights and biases a grouped GEMM reads, the
    weight's transpose where the GEMM reads one, the GEMM, then the ops
    `fused` with it; a group's on its first member's report), else why
    nothing fused (`reason`), and where fusion stopped (`stopped`: (op,
    line, why) of each op reading the partition from outside)."""
    graph: int
    name: str
    op: str
    where: str
    shape: tuple
    members: list = dataclasses.field(default_factory=list)
    fused: list = dataclasses.field(default_factory=list)
    reason: str = ""
    stopped: list = dataclasses.field(default_factory=list)
    # The GEMM whose partition computes this one as its dual GEMM (one
    # GEMM of their shared input), if one does.
    dual_of: str = ""
    # The sibling GEMMs (of the same input) computed with this one as one
    # GEMM of their concatenated weights, if any (torch.compile's option
    # group_gemms).
    grouped_with: list = dataclasses.field(default_factory=list)
    # The linear layers whose outputs the model concatenates and this GEMM
    # computes as one, the concatenation its result (join_concatenated_
    # gemms), if any.
    joined: list = dataclasses.field(default_factory=list)
    # Of a backward graph (AOTAutograd's, compiled at the first backward).
    backward: bool = False
    # Whether the GEMM reads its [in, out] operand from a K-major copy the
    # graph makes (the backend option k_major_copies).
    k_major_copy: bool = False

    def __str__(self):
        m, k, n = (str(d) for d in self.shape)
        kind = "backward graph" if self.backward else "graph"
        head = f"{kind} {self.graph} {self.name} ({self.op}, {m}x{k} @ " \
            f"{k}x{n}, {self.where}): "
        if self.joined:
            head += f"{_and(self.joined)}, concatenated, as one GEMM; "
        if self.dual_of:
            head += f"fused into {self.dual_of}'s GEMM, which reads their " \
                "shared input once"
        elif self.grouped_with:
            head += f"grouped with {_and(self.grouped_with)} into one " \
                "GEMM that reads their shared input once"
        elif self.fused:
            head += f"fused with {', '.join(_short(op) for op in self.fused)}"
        elif self.members:
            head += f"computed alone: {self.reason}"
        else:
            head += f"not fused: {self.reason}"
        copy = ["    reads its [in, out] operand from a K-major copy "
                "(k_major_copies)"] if self.k_major_copy else []
        return "\n".join([head] + copy +
                         [f"    stopped at {_short(op)} ({line}): {why}"
                          for op, line, why in self.stopped])


def _and(names):
    """["a", "b", "c"] as "a, b and c"."""
    return " and ".join([", ".join(names[:-1]), names[-1]]) \
        if len(names) > 1 else names[0]


def _short(op):
    """`aten.add.Tensor` as `add`."""
    parts = op.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "aten" else op


class Census(list):
    """The GemmReports of a model's compiled graphs, in graph order, and
    the GEMM precision of their f32 chains (`precision`, the backend's
    option or the default it resolved)."""

    precision = None

    @property
    def fused(self):
        return [report for report in self
                if report.fused or report.dual_of or report.grouped_with]

    def __str__(self):
        head = f"{len(self.fused)} of {len(self)} GEMMs fused"
        # fp32 is the default of every target: the head names another.
        if self.precision not in (None, "fp32"):
            head += f", f32 GEMMs in {self.precision} precision"
        return "\n".join([head] + [str(report) for report in self])
