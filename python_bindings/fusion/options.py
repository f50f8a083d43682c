"""fusion's compile options, read from the table the compiler is built from
(include/fusion/Compiler/CompileOptions.def, copied into the package as
compile_options.def): their names, defaults and descriptions, on machines
without the compiler too (a library cache's keys hold the options' text).
What each value means, and which are valid, is the compiler's to say."""
import ast
import dataclasses
import pathlib
import re

# The build's copy; in the source tree (the GPU machine's scripts import the
# package from there), the table itself.
TABLE = pathlib.Path(__file__).with_name("compile_options.def")
if not TABLE.exists():
    TABLE = pathlib.Path(__file__).resolve().parents[2] / \
        "include/fusion/Compiler/CompileOptions.def"
# An entry: the C++ field, then string and integer literals (which may hold
# parentheses inside their quotes).
_ENTRY = re.compile(
    r'^FUSION_COMPILE_OPTION\(\s*\w+\s*,((?:[^()"]|"(?:[^"\\]|\\.)*")*)\)',
    re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Option:
    name: str
    default: str
    python: bool  # whether fusion.compile and torch.compile take it
    description: str


def _read(path):
    options = {}
    for match in _ENTRY.finditer(path.read_text()):
        name, default, python, description = ast.literal_eval(
            f"({match.group(1)})")
        options[name] = Option(name, default, bool(python), description)
    return options


OPTIONS = _read(TABLE)
# The options of the package's user API, in the table's order.
PACKAGE_OPTIONS = tuple(name for name, o in OPTIONS.items() if o.python)


def check_names(options, api):
    """Raises TypeError naming an option `api` does not take."""
    unknown = sorted(set(options) - set(PACKAGE_OPTIONS))
    if unknown:
        raise TypeError(f"{api} got unknown compile option(s) "
                        f"{', '.join(map(repr, unknown))} (it takes "
                        f"{', '.join(PACKAGE_OPTIONS)})")


def compiler_text(options):
    """The compiler's text of the package options `options` ({name: value};
    None or absent: the default), every package option named, in the
    table's order (the library cache's keys hold it)."""
    return {name: OPTIONS[name].default if options.get(name) is None
            else str(options[name]) for name in PACKAGE_OPTIONS}


def describe():
    """The package options with their defaults and descriptions."""
    return "\n".join(
        f"{o.name} (default {o.default!r}): {o.description}"
        for o in OPTIONS.values() if o.python)
