//===- Passes.td - fusion conversion passes ----------------*- tablegen -*-===//

#ifndef FUSION_CONVERSION_PASSES_TD
#define FUSION_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFusionToLinalg : Pass<"fusion-lower-to-linalg"> {
  let summary = "Lower every fusion op to linalg/tensor/arith/math: the CPU "
                "reference, the executable specification of the dialect";
  let description = [{
    Each op becomes `linalg.generic`s on tensors computing exactly the
    semantics the dialect documents, so that with upstream bufferization
    and the LLVM lowering it runs on the CPU through `mlir-runner`
    (`--fusion-lower-to-cpu` is that pipeline). The GPU backends are
    compared against it. A `fusion.special` without a formula (the C
    library's function) stays, for `fusion-math-to-libm`; one with a
    formula must have been inlined (`fusion-inline-special-functions`).

    - GEMMs accumulate in f32; for f32 tensors the operands are first
      rounded to the op's `precision` (tf32: round-to-nearest, ties away,
      to a 10-bit mantissa, as `cvt.rna.tf32.f32`; bf16/f16: to that type).
    - Elementwise ops and the epilogue region are applied per element on
      f32 values; an unfused op on bf16/f16 tensors rounds its result, as
      PyTorch does, a fused op rounds once at the end.
    - Batch norm takes the column mean, then the biased variance as the mean
      of squared deviations (two passes, no cancellation), normalizes with
      `rsqrt(var + eps)`, and updates the running statistics with the
      unbiased variance `M / (M - 1) * var`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ConvertFusionToGPU : Pass<"fusion-lower-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower fusion ops to generated host code that calls cuBLASLt "
                "(backend 1) or generated tiled tensor-core GEMM kernels "
                "(backend 2), plus generated epilogue kernels";
  let description = [{
    Every public function of fusion ops becomes an `llvm.func` with the C ABI
    of `runtime/include/fusion_runtime.h`:
    `i32 @name(ptr stream, [i64 batch], ptr input..., ptr output...)`. It
    checks its arguments (null, misaligned, too small or wrong-device
    buffers, batch size) through the runtime, then per op:

    - `fused_linear`: `__fusion_rt_gemm` (cuBLASLt, with the bias, added in
      the compute type, and `alpha`), writing the result buffer; then,
      unless the epilogue is the identity, one elementwise kernel applying
      the epilogue region in place with 16-byte vector loads and stores.
    - a training batch-norm stage: a column-statistics kernel (Welford per
      thread over a chunk of rows, on the epilogue's output) reads the GEMM
      output once, a finalize kernel merges the chunks in fixed order (Chan)
      and updates the running statistics, and the normalizing kernel applies
      epilogue and normalization in place: passes over the M x N output are
      GEMM write, statistics read, normalize read + write.
    - standalone elementwise ops and batch norms: the same kernels from an
      input buffer to an output buffer.

    How each `fused_linear` runs is its `fusion.lowering` (set by
    `fusion-select-gemm-config`, or by hand): `cublaslt` as above; with a
    generated config (`mma_sync`, `simt`) the op is instead one generated GEMM
    kernel (`TiledGemmKernel.cpp`): thread-block tiles fed by a multi-stage
    `nvgpu.device_async_copy` (cp.async) pipeline into XOR-swizzled shared
    memory, `nvgpu.ldmatrix` + `nvgpu.mma.sync` per warp (m16n8k16 for
    bf16/f16 tensors and for f32 tensors in bf16/f16, their operands rounded
    in registers; m16n8k8 tf32 for f32 in tf32; three m16n8k8 tf32 products
    of split operands, fp32-accurate, for f32 in fp32), f32 accumulators, and
    alpha, bias and the epilogue region applied on the accumulator
    registers; the output tile is staged through shared memory and leaves
    in 16-byte stores. For a training batch
    norm the same kernel also writes each block row's column moments
    (one thread a column, over the output tile staged in shared memory);
    the finalize kernel merges them in fixed order and one normalizing pass
    follows. The tiling, pipeline depth and MMA kind are the config's.
    With a `wgmma` config (sm_90) the op is one warp-specialized Hopper
    kernel (`WgmmaGemmKernel.cpp`): a producer warpgroup's TMA loads
    (`nvgpu.tma.async.load`, tensor maps the host encodes per call and
    passes by value) fill a ring of 128-byte-swizzled stages, full/empty
    `nvgpu.mbarrier` pairs hand them to consumer warpgroups, which multiply
    with `nvvm.wgmma.mma_async` (bf16, f16, tf32; 3xTF32 from operands split
    in shared memory) and run the same epilogue as the sm_80 kernel.
    Kernels target the chip of the module's `fusion.target`; a module with
    wgmma kernels targets its arch-specific variant (`sm_90a`).

    Reductions (`fusion.reduce`, of whole rows or of G groups of columns)
    and the ops after them that read the same matrix or their row values
    run as one row program kernel, whose rows are the groups. Where a
    fused op's lowering has `tile_reductions` (set by
    `fusion-select-gemm-config`), the GEMM kernel computes the reductions
    of the row program reading its output from its output tiles into
    partials per span of a tile row (the attribute's span: the tile row, or
    one group where groups tile a tile): a combination of a map; a sum of
    exp(a - s), or of (a - s)^2, with the span's own maximum or mean as the
    shift. It writes the output only if the program's elementwise steps
    read it; the row program merges the partials in column order
    (`TileReductionSteps.cpp`). An op whose readers are no such program,
    or whose tiles reduce other spans, is refused.

    Intermediates and statistics live in one workspace per call
    (`cudaMallocAsync` on the stream). Kernels go into `gpu.module
    @fusion_kernels`; the host code refers to its binary as
    `@__fusion_kernels_image`, which `fusion-embed-kernel-image` fills in
    after `gpu-module-to-binary`. Every dynamic dimension of a function must
    be its batch size.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::fusion_rt::FusionRuntimeDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LowerFusionRuntimeToLLVM
    : Pass<"fusion-lower-runtime-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Turn fusion_rt launches and GEMM calls into calls of the "
                "fusion runtime's C ABI";
  let description = [{
    `fusion_rt.launch` becomes an array of pointers to its arguments (the
    kernel parameter array of `cuLaunchKernel`) and a call of
    `__fusion_rt_launch(image, name, grid_x, grid_y, block, shared, flags,
    stream, args)`, whose flags are the launch's `persistent` and
    `overlap_predecessor` (fusion_runtime.h's FUSION_LAUNCH_*), the kernel
    named by a string constant and found
    in the embedded `@__fusion_kernels_image`; `fusion_rt.cublaslt_gemm`
    becomes `__fusion_rt_gemm` with the runtime's codes of its element type
    and precision. Both keep their `i32` status.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // FUSION_CONVERSION_PASSES_TD
