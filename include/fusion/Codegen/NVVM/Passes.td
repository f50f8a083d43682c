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

def OpaqueBf16Widening
    : Pass<"fusion-opaque-bf16-widening", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Widen bf16 to f32 in wgmma kernels by operations LLVM does "
                "not narrow arithmetic through";
  let description = [{
    LLVM's optimizer narrows `fptrunc(op(fpext a, fpext b))` into the
    16-bit op (`mul.rn.bf16`, `max.NaN.bf16`): exact, but in a kernel that
    issues wgmma, ptxas then serializes the wgmma pipeline ("(C7514)
    wgmma.mma_async instructions are serialized due to non wgmma
    instructions reading accumulator registers"): the whole main loop
    slowed for an epilogue's rounding (PyTorch's bf16 intermediates: the
    `x / 2` of a bf16 linear's output, then summed, or a maximum over the
    features).

    In each `llvm.func` with an `nvvm.wgmma.mma_async`, after
    `convert-arith-to-llvm`, every `llvm.fpext` from bf16 to f32 (scalars
    and vectors) becomes its bits shifted into the high half of an i32
    (`bitcast`, `zext`, `shl 16`, `bitcast`): exact, and the one
    instruction `cvt.f32.bf16` is, but not an `fpext` to the optimizer, so
    the arithmetic around it stays f32 and the pipeline asynchronous.
    Other kernels keep their 16-bit arithmetic. f16 is left as it is: its
    rounding alone (`cvt.rn.f16.f32` of an accumulator, then
    `cvt.f32.f16`) draws the same serialization, whatever the arithmetic.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // FUSION_CODEGEN_NVVM_PASSES_TD
