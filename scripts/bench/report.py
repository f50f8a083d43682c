"""The benchmark tables: markdown, headed by the device, the date, the
compiler commit of the artifacts (their BUILD_INFO) and the timer; times
in ms per call and fusion's ratios against eager PyTorch, torch.compile
and the raw cuBLAS GEMM of the same shape and precision."""
import datetime
import math
import pathlib

# The reference columns each table's ratios divide by: (key, label).
REFERENCES = (("eager", "eager / fusion"),
              ("torch.compile", "torch.compile / fusion"))
GEMM = "gemm"


def build_info(artifacts):
    """The artifacts' BUILD_INFO as a dict (commit, date)."""
    path = pathlib.Path(artifacts) / "BUILD_INFO"
    if not path.exists():
        return {"commit": "unknown", "date": "unknown"}
    return dict(line.split("=", 1) for line in path.read_text().split())


def heading(suite, timer, device, info, torch_version, today=None):
    today = today or datetime.date.today().isoformat()
    return (f"## {suite} ({timer}): {device}, {today}, fusion commit "
            f"{info.get('commit', 'unknown')} (built "
            f"{info.get('date', 'unknown')}), torch {torch_version}")


def cell(value, digits=3):
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def table(rows, fusion_key, labels=("case", "M x K x N", "precision"),
          unit="ms"):
    """A markdown table of `rows` ([(label cells, {key: time})]): the
    labels, every time (in the order first seen), then the ratios of the
    references' times to fusion's (`fusion_key`'s) and fusion's to the raw
    GEMM's."""
    keys = list(dict.fromkeys(k for _, times in rows for k in times))
    references = [(k, label) for k, label in REFERENCES if k in keys]
    header = list(labels) + [f"{k} {unit}" for k in keys] + \
        [label for _, label in references]
    if GEMM in keys:
        header.append("fusion / gemm")
    lines = ["| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for cells, times in rows:
        fusion = times.get(fusion_key)
        values = [cell(times.get(k)) for k in keys]
        values += [cell(ratio(times.get(k), fusion), 2)
                   for k, _ in references]
        if GEMM in keys:
            values.append(cell(ratio(fusion, times.get(GEMM)), 3))
        lines.append("| " + " | ".join(list(map(str, cells)) + values) +
                     " |")
    return "\n".join(lines)


def summary(rows, fusion_key, group_cell=-1):
    """A markdown table, for each group of `rows` (by their label cell
    `group_cell`, the precision), of the problems fusion was timed on, the
    geometric mean of each reference's ratio to fusion's time, and on how
    many of them fusion was the slower (a ratio below 1)."""
    groups = {}
    for cells, times in rows:
        groups.setdefault(cells[group_cell], []).append(times)
    keys = {k for _, times in rows for k in times}
    references = [(k, label) for k, label in REFERENCES if k in keys]
    header = ["precision", "timed"] + \
        [f"geomean {label}" for _, label in references] + \
        [f"slower than {k}" for k, _ in references]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for group, timed in groups.items():
        values = [str(sum(1 for t in timed if t.get(fusion_key)))]
        slower = []
        for key, _ in references:
            ratios = [r for r in (ratio(t.get(key), t.get(fusion_key))
                                  for t in timed) if r]
            values.append(cell(geomean(ratios), 2))
            slower.append(f"{sum(r < 1 for r in ratios)} of {len(ratios)}")
        lines.append("| " + " | ".join([str(group)] + values + slower) +
                     " |")
    return "\n".join(lines)


def geomean(values):
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
