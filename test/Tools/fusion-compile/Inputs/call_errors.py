"""Calls an entry point with bad arguments; no GPU is needed to reject them.

Usage: call_errors.py LIBRARY ENTRY. Prints one line per case with the status
and the message the library gives.
"""
import ctypes
import json
import pathlib
import sys

library = pathlib.Path(sys.argv[1])
entry = json.loads(library.with_suffix(".json").read_text())
entry = {e["name"]: e for e in entry["entry_points"]}[sys.argv[2]]
lib = ctypes.CDLL(str(library))
lib.fusion_last_error_message.restype = ctypes.c_char_p
fn = getattr(lib, sys.argv[2])
fn.restype = ctypes.c_int32
buffers = len(entry["inputs"]) + len(entry["outputs"])
aligned = ctypes.create_string_buffer(64)
good = (ctypes.addressof(aligned) + 15) // 16 * 16


def call(batch, pointers):
    status = fn(ctypes.c_void_p(None), ctypes.c_int64(batch),
                *[ctypes.c_void_p(p) for p in pointers])
    print(f"status {status}: {lib.fusion_last_error_message().decode()}")


call(0, [good] * buffers)
call(4, [None] + [good] * (buffers - 1))
call(4, [good + 4] + [good] * (buffers - 1))
