#!/usr/bin/env python3
"""Lists the dependency cycles between folders of the C++ sources (by their
`#include "fusion/..."` lines, include/fusion/X and lib/X being one folder
X) and between modules of the Python package (by their imports of each
other, at the top or inside functions); exits 1 if there is any. CI runs it
(scripts/test.sh): each folder and module has one job, and a cycle means
two of them are one.

Usage: scripts/check-cycles.py [project root]
"""
import ast
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"fusion/([^"]+)"', re.M)


def cpp_graph(root):
    """{folder: {folders it includes}} over include/fusion and lib."""
    graph = {}
    for base, prefix in ((root / "include" / "fusion", ""),
                         (root / "lib", "")):
        for path in base.rglob("*"):
            if path.suffix not in (".h", ".cpp", ".td", ".def", ".inc"):
                continue
            folder = prefix + str(path.parent.relative_to(base))
            targets = graph.setdefault(folder, set())
            for header in INCLUDE.findall(path.read_text(errors="ignore")):
                target = str(pathlib.PurePosixPath(header).parent)
                # A pass of a subfolder takes its definition from the
                # parent's TableGen'd Passes.h.inc, as upstream MLIR's
                # conversions do: the parent's umbrella, not a dependency.
                umbrella = header.endswith(".inc") and \
                    folder.startswith(target + "/")
                if target != folder and not umbrella:
                    targets.add(target)
    return graph


def python_graph(package):
    """{module: {modules of the package it imports}}, each named by its
    dotted path in the package (a subpackage by its __init__.py)."""
    def dotted(path):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)

    modules = {dotted(p): p for p in package.rglob("*.py")}
    graph = {}
    for module, path in modules.items():
        here = module.split(".") if module else []
        if path.name != "__init__.py":
            here = here[:-1]
        imports = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            base = here[:len(here) - (node.level - 1)]
            names = [node.module] if node.module else \
                [a.name for a in node.names]
            for name in names:
                # Names that are no module (the native `_fusion`) skip.
                imports.add(".".join(base + name.split(".")))
        graph[module] = {m for m in imports if m != module and m in modules}
    return graph


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        pathlib.Path(__file__).resolve().parent.parent)
    problems = [("C++ folders", c) for c in cycles(cpp_graph(root))]
    problems += [("Python modules", c) for c in cycles(
        python_graph(root / "python_bindings" / "fusion"))]
    for kind, component in problems:
        print(f"check-cycles: a cycle between {kind}: "
              f"{' <-> '.join(component)}")
    if not problems:
        print("check-cycles: no cycles between C++ folders or Python "
              "modules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
