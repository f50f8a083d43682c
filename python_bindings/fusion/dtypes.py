"""The element types fusion computes on, in the one spelling every layer
shares: the names of the dialect's `ElementType` enum (FusionAttrs.td), which
the signature files write and the importer emits, and their torch dtypes.
tests/test_dtypes.py checks this table against the compiler's enum."""

import torch

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16,
                "f16": torch.float16}
ELEMENT_TYPES = {dtype: name for name, dtype in TORCH_DTYPES.items()}
