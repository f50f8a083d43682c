"""The libFuzzer target compiles the compiler's sources again, from a list
of its own (tools/fusion-opt-fuzzer/CMakeLists.txt): every source under
lib/ but the driver's (lib/Compiler: ptxas and the host link) must be in
it, or the fuzzer fails to link, which only CI's long build would show."""
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_fuzzer_lists_every_compiler_source():
    listed = (ROOT / "tools/fusion-opt-fuzzer/CMakeLists.txt").read_text()
    sources = sorted(path.relative_to(ROOT / "lib").as_posix()
                     for path in (ROOT / "lib").rglob("*.cpp"))
    assert sources, "no sources found under lib/"
    missing = [source for source in sources
               if not source.startswith("Compiler/") and
               "${src}/" + source not in listed]
    assert missing == []
