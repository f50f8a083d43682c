#!/usr/bin/env python3
"""A reference for compute-sanitizer's synccheck on Hopper: Triton's own
TMA + mbarrier + wgmma pipelines (the GPU machine's Triton, no fusion code),
so that a synccheck failure of fusion's wgmma kernels can be told apart from
the tool's handling of these instructions (docs/known-issues.md).

  synccheck_reference.py CASE M K N
      CASE: pipelined (TMA loads into a multi-stage ring, async wgmma) or
      specialized (the same, persistent, with Triton's warp specialization:
      a producer warp and consumer warpgroups, as fusion's kernel).
      Checks the bf16 product against float64 and prints `ok` or the error.

Run it under `compute-sanitizer --tool synccheck` with K past the ring
(K = 520, 8192) and within it (K = 64).
"""
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

BLOCK_M, BLOCK_N, BLOCK_K, STAGES = 128, 128, 64, 4


@triton.jit
def pipelined_kernel(a_desc, b_desc, c_desc, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, STAGES: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M
    off_n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=STAGES):
        a = a_desc.load([off_m, k * BLOCK_K])
        b = b_desc.load([off_n, k * BLOCK_K])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


@triton.jit
def specialized_kernel(a_desc, b_desc, c_desc, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, STAGES: tl.constexpr,
                       SMS: tl.constexpr):
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    slices = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles, SMS, flatten=True,
                         warp_specialize=True, num_stages=STAGES):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(slices):
            a = a_desc.load([off_m, k * BLOCK_K])
            b = b_desc.load([off_n, k * BLOCK_K])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(tl.bfloat16))


def main():
    case, m, k, n = sys.argv[1], *map(int, sys.argv[2:5])
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K])
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K])
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N])
    if case == "pipelined":
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
        pipelined_kernel[grid](a_desc, b_desc, c_desc, m, n, k, BLOCK_M,
                               BLOCK_N, BLOCK_K, STAGES, num_warps=8)
    else:
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        tiles = triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N)
        specialized_kernel[(min(sms, tiles),)](
            a_desc, b_desc, c_desc, m, n, k, BLOCK_M, BLOCK_N, BLOCK_K,
            STAGES, sms, num_warps=8)
    torch.cuda.synchronize()
    ref = a.double() @ b.double().t()
    error = ((c.double() - ref).norm() / ref.norm()).item()
    print(f"{case} {m}x{k}x{n}: " + ("ok" if error < 1e-2 else
                                     f"FAILED, relative error {error:.1e}"))


if __name__ == "__main__":
    main()
