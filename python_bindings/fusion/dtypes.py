"""The element types fusion computes on, in the one spelling every layer
shares: the names of the dialect's `ElementType` enum (FusionAttrs.td), which
the signature files write and the importer emits, and their torch dtypes.
tests/test_dtypes.py checks this table against the compiler's enum."""

import torch

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16,
                "f16": torch.float16}
ELEMENT_TYPES = {dtype: name for name, dtype in TORCH_DTYPES.items()}


def rounded(value, dtype):
    """The finite float `value` as `dtype` holds it (to nearest, ties to
    even), computed without a tensor, so that decompositions traced by
    make_fx can use it."""
    import struct
    (single,) = struct.unpack("<f", struct.pack("<f", value))
    if dtype == torch.float16:
        return struct.unpack("<e", struct.pack("<e", single))[0]
    if dtype == torch.bfloat16:
        (bits,) = struct.unpack("<I", struct.pack("<f", single))
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return single if dtype == torch.float32 else value
