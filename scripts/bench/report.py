"""The benchmark tables: markdown, headed by the device, the date, the
compiler commit of the artifacts (their BUILD_INFO) and the timer; times
in ms per call and fusion's ratios against eager PyTorch, torch.compile
and the raw cuBLAS GEMM of the same shape and precision."""
import datetime
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
