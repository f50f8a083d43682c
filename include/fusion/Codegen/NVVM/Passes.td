//===- Passes.td - fix-ups of NVVM kernels -----------------*- tablegen -*-===//

#ifndef FUSION_CODEGEN_NVVM_PASSES_TD
#define FUSION_CODEGEN_NVVM_PASSES_TD

include "mlir/Pass/PassBase.td"

def EmbedKernelImage : Pass<"fusion-embed-kernel-image", "::mlir::ModuleOp"> {
  let summary = "Turn the gpu.binary of the generated kernels into the LLVM "
                "global the host code loads them from";
  let description = [{
    Replaces `gpu.binary @fusion_kernels` (one object, from
    `gpu-module-to-binary`) by the definition of
    `@__fusion_kernels_image`, an internal constant byte array holding the
    object, for `__fusion_rt_launch` to load.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LowerTensorMapArgs
    : Pass<"fusion-lower-tensor-map-args", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make the tensor-map arguments of lowered kernels byval "
                "grid constants";
  let description = [{
    On each `llvm.func` kernel (after `convert-gpu-to-nvvm`) with a
    `fusion_rt.tensor_map_args` attribute, the listed `!llvm.ptr` arguments
    become `llvm.byval = !llvm.array<16 x i64>`, `llvm.align = 64`,
    `nvvm.grid_constant` parameters: the launch passes the 128-byte
    CUtensorMap by value, and the kernel's TMA instructions read it in
    parameter space through its generic address (as CUDA's
    `const __grid_constant__ CUtensorMap`), so a tensor map needs no device
    memory and no copy per call. `convert-gpu-to-nvvm` keeps only `llvm.`
    argument attributes, hence this step after it. The attribute is
    removed.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def ExternDynamicSharedMemory
    : Pass<"fusion-extern-dynamic-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare the kernels' dynamic shared memory as PTX's "
                "`.extern .shared` array";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to an internal
    zero-length `llvm.mlir.global` in address space 3, which the NVPTX
    backend prints as a one-byte static variable
    (`.shared .align 16 .b8 __dynamic_shmem__0;`). ptxas then lays it out
    among the kernel's static shared variables (the mbarriers), in an order
    it is free to choose, and the dynamic bytes of the launch follow all of
    them: a kernel that addresses its dynamic shared memory from that
    variable may overlap its own static variables. Made an external
    declaration, it prints as `.extern .shared .align 16 .b8
    __dynamic_shmem__0[];`, CUDA's `extern __shared__` array, which PTX
    places after every static variable, at the start of the launch's dynamic
    bytes.

    Every zero-length array global of address space 3 becomes an external
    declaration; other globals are left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def OpaqueHalfConversions
    : Pass<"fusion-opaque-half-conversions", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Keep the 16-bit conversions of wgmma kernels from "
                "serializing their wgmma pipeline";
  let description = [{
    ptxas keeps the wgmmas of a kernel asynchronous only while no other
    instruction reads their accumulators within a pipeline stage; else it
    waits for each one ("(C7514) wgmma.mma_async instructions are
    serialized due to non wgmma instructions reading accumulator
    registers"), the whole main loop slowed for an epilogue. Two patterns
    of 16-bit epilogues (PyTorch's rounded intermediates: the `x / 2` of a
    linear's output before a sum, a maximum over the features) drew it:

    - LLVM narrows `fptrunc(op(fpext a, fpext b))` into the 16-bit op
      (`mul.rn.bf16`, `max.NaN.bf16`, exact);
    - ptxas, in f16, fuses the rounding `cvt.rn.f16.f32` of an accumulator
      into its reads, whatever follows.

    In each `llvm.func` with an `nvvm.wgmma.mma_async`, after
    `convert-arith-to-llvm`:

    - every `llvm.fpext` from bf16 to f32 becomes its bits shifted into the
      high half of an i32 (`bitcast`, `zext`, `shl 16`, `bitcast`: exact,
      the one instruction `cvt.f32.bf16` is), and from f16 PTX's
      `cvt.f32.f16` as inline assembly: neither is an `fpext` to the
      optimizer, so the arithmetic after it stays f32;
    - every `llvm.fptrunc` from f32 to f16 first adds -0.0 in inline PTX
      (`add.rn.f32`: exact for every value, zeros' signs and NaNs
      unchanged; one FADD an element), which ptxas does not fold into the
      rounding.

    Scalars and vectors (lane by lane for the inline PTX). Other kernels
    keep their 16-bit arithmetic and conversions.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // FUSION_CODEGEN_NVVM_PASSES_TD
