"""The draws of `fusion.random_uniform` (dropout's) in PyTorch: the seed a
call passes, and the same draw computed from it with tensor ops, which the
tests compare the libraries' with and which fusion.compile's backward
recomputes the forward's dropout from.

A draw's element (m, n) of stream s under a seed is the first word w of
Philox4x32-10 (Random123's) of the counter (i mod 2^32, i // 2^32, s, 0),
i = m * N + n, keyed by the seed's 64 bits; the value is (w >> 8) * 2^-24
in float32, rounded to the draw's dtype (`fusion.random_uniform`'s
definition, lib/Codegen/Math/Philox.cpp)."""
import torch

from .program import SEED_DTYPE, SEED_SHAPE
from .dtypes import TORCH_DTYPES

_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_WEYL = (0x9E3779B9, 0xBB67AE85)
_ROUNDS = 10
_WORD = 0xFFFFFFFF


# A seed's bits as PyTorch draws them: randint(low, high, SEED_SHAPE,
# dtype=SEED_BITS_DTYPE) viewed as SEED_DTYPE (fusion.compile's call and
# the graphs of torch.compile, fusion/dynamo.py, draw it alike).
SEED_BITS_RANGE = (-2**31, 2**31)
SEED_BITS_DTYPE = torch.int32
assert SEED_SHAPE == [2] and SEED_DTYPE == "f32"


def draw_seed(device):
    """A new seed: 64 bits from PyTorch's generator of `device` (so that
    torch.manual_seed makes calls repeat), as the [2] float32 tensor the
    libraries take."""
    return torch.randint(*SEED_BITS_RANGE, SEED_SHAPE, dtype=SEED_BITS_DTYPE,
                         device=device).view(TORCH_DTYPES[SEED_DTYPE])


def philox4x32(counter, key):
    """Philox4x32-10 of `counter` (four int64 tensors holding 32-bit words)
    under `key` (two such words): the four output words."""
    c = list(counter)
    k0, k1 = key
    for round_ in range(_ROUNDS):
        if round_:
            k0 = (k0 + _WEYL[0]) & _WORD
            k1 = (k1 + _WEYL[1]) & _WORD
        # 32 x 32 -> 64-bit products: int64 wraps, its bits stay the
        # product's.
        p0 = c[0] * _MULTIPLIERS[0]
        p1 = c[2] * _MULTIPLIERS[1]
        c = [((p1 >> 32) & _WORD) ^ c[1] ^ k0, p1 & _WORD,
             ((p0 >> 32) & _WORD) ^ c[3] ^ k1, p0 & _WORD]
    return c


def uniform(seed, rows, columns, stream, dtype):
    """The [rows, columns] draw of `stream` under `seed` (a [2] float32
    tensor), of `dtype`, on the seed's device."""
    words = seed.detach().view(torch.int32).to(torch.int64) & _WORD
    key = (words[0], words[1])
    index = torch.arange(rows * columns, dtype=torch.int64,
                         device=seed.device)
    zero = torch.zeros_like(index)
    w = philox4x32((index & _WORD, index >> 32, zero + stream, zero), key)[0]
    draw = (w >> 8).to(torch.float32) * 2.0**-24
    return draw.to(dtype).view(rows, columns)
