"""The compiled-library cache: libraries on disk, keyed by the programs, the
compile options and the compiler (like inductor's FX graph cache), so that a
second process, or a machine without the compiler, does not compile again.

The cache lives in $FUSION_CACHE_DIR, by default ~/.cache/fusion; each entry
is a folder named by its key holding the library and its signature files.
It holds at most $FUSION_CACHE_MAX_BYTES (default 1 GiB): past that, the
entries used least recently go first (a hit marks an entry used). With
$FUSION_CACHE_TRACE set to a folder, each lookup writes its key's text
there (KEY.json; KEY.miss.json where the cache lacked it).
"""
import os
import pathlib
import shutil
import tempfile

from .errors import LibraryNotCachedError, UnsupportedOperationError
from .program import build, cache_key, cache_text

LIBRARY = "model.so"
# The library and its signature and header files, as the compiler writes them.
LIBRARY_FILES = (LIBRARY, "model.json", "model.h")


DEFAULT_MAX_BYTES = 1 << 30


def max_bytes():
    """The cache's size bound, $FUSION_CACHE_MAX_BYTES or the default."""
    value = os.environ.get("FUSION_CACHE_MAX_BYTES")
    try:
        return int(value) if value else DEFAULT_MAX_BYTES
    except ValueError:
        raise UnsupportedOperationError(
            f"FUSION_CACHE_MAX_BYTES={value!r} is not a number of "
            f"bytes") from None


def directory():
    return pathlib.Path(os.environ.get("FUSION_CACHE_DIR") or
                        pathlib.Path.home() / ".cache" / "fusion")


def compiler_id():
    """The compiler's identity, written next to the package at build time."""
    path = pathlib.Path(__file__).with_name("compiler_id")
    return path.read_text().strip() if path.exists() else "unknown"


def library_key(programs, options):
    """The cache key of `programs` ({function name: Program}) compiled with
    `options` (fusion-compile's option names) by this compiler."""
    return cache_key(programs, options, compiler_id())


def _trace_lookup(key, programs, options, hit):
    """With $FUSION_CACHE_TRACE set to a folder, each lookup's key text
    written there (KEY.json, or KEY.miss.json where the cache lacked it):
    a library prepared on one machine and missed on another shows what
    differs."""
    folder = os.environ.get("FUSION_CACHE_TRACE")
    if not folder:
        return
    path = pathlib.Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    text = cache_text(programs, options, compiler_id())
    (path / f"{key}{'' if hit else '.miss'}.json").write_text(text)


def compiled_library(programs, options):
    """The library files ({name: bytes}) of `programs` compiled with
    `options`, from the cache or compiled now and cached."""
    key = library_key(programs, options)
    entry = directory() / key
    hit = all((entry / name).exists() for name in LIBRARY_FILES)
    _trace_lookup(key, programs, options, hit)
    if hit:
        try:
            os.utime(entry)  # Used now: the last to be evicted.
        except OSError:
            pass  # A read-only cache (carried to another machine).
        return {name: (entry / name).read_bytes() for name in LIBRARY_FILES}
    try:
        from . import _fusion  # noqa: F401
    except ImportError as error:
        raise LibraryNotCachedError(
            f"the library is not in the cache ({entry}) and this machine has "
            f"no fusion compiler to compile it ({error})") from None
    module = build(programs)
    directory().mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{key}-",
                                            dir=directory()))
    try:
        module.compile(str(staging / LIBRARY), **options)
        files = {name: (staging / name).read_bytes() for name in LIBRARY_FILES}
        try:
            # Atomic: a concurrent process sees the whole entry or none.
            os.rename(staging, entry)
        except OSError:
            pass  # Another process cached the same library first.
        evict(max_bytes(), keep=entry)
        return files
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def evict(limit, keep=None):
    """Removes the entries used least recently until the cache holds at
    most `limit` bytes (`keep`, the entry just written, stays)."""
    entries = []
    for entry in directory().iterdir():
        if entry.name.startswith(".") or not entry.is_dir():
            continue  # Staging folders of compiles in progress.
        try:
            size = sum(f.stat().st_size for f in entry.iterdir())
            entries.append((entry.stat().st_mtime, size, entry))
        except OSError:
            continue  # Evicted by another process meanwhile.
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if entry != keep:
            shutil.rmtree(entry, ignore_errors=True)
            total -= size
