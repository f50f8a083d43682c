"""The draws of `fusion.random_uniform` (dropout's) in PyTorch: the seed a
call passes, and the same draw computed from it with tensor ops, which the
tests compare the libraries' with and which fusion.compile's backward
recomputes the forward's dropout from.

A draw's element (m, n) of stream s under a seed is word i mod 4 of
Philox4x32-10 (Random123's) of the counter (b mod 2^32, b // 2^32, s, 0),
i = m * N + n and b = i // 4 (one block of four words draws four
consecutive elements), keyed by the seed's 64 bits; the value is
(w >> 8) * 2^-24 in float32 for that word w, rounded to the draw's dtype
(`fusion.random_uniform`'s definition, lib/Codegen/Math/Philox.cpp)."""
import math

import torch

from .program import SEED_DTYPE, SEED_SHAPE
from .dtypes import TORCH_DTYPES, rounded

_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_WEYL = (0x9E3779B9, 0xBB67AE85)
_ROUNDS = 10
_WORD = 0xFFFFFFFF


# A seed's bits as PyTorch draws them: randint(low, high, SEED_SHAPE,
# dtype=SEED_BITS_DTYPE) viewed as SEED_DTYPE (fusion.compile's call, its
# C++ call (python_bindings/ModuleCall.cpp, given the bounds) and the
# graphs of torch.compile, fusion/dynamo.py, draw it alike).
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
    block = index >> 2
    zero = torch.zeros_like(block)
    words = torch.stack(philox4x32(
        (block & _WORD, block >> 32, zero + stream, zero), key))
    w = words.gather(0, (index & 3)[None])[0]
    draw = (w >> 8).to(torch.float32) * 2.0**-24
    return draw.to(dtype).view(rows, columns)


def dropout_keeps(seed, shape, p, dtype, stream=0):
    """The elements that a dropout of `p` over a `shape` value ([...,
    features], its rows the leading dimensions) keeps: those whose draw of
    `stream` under `seed` is above p as `dtype` holds it (fusion's
    dropout, as PyTorch compares a draw with p)."""
    rows = math.prod(shape[:-1])
    draw = uniform(seed, rows, shape[-1], stream, dtype)
    return draw.view(*shape) > rounded(p, dtype)
