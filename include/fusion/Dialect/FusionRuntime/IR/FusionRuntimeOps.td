//===- FusionRuntimeOps.td - the host side of the GPU backends -*- tablegen -*-===//
//
// The layer between the fusion ops with their lowering decisions and the
// LLVM dialect: host code whose kernel launches and GEMM calls are ops that
// name their kernel by symbol and carry their contract, verified against the
// kernel and the chip, before fusion-lower-runtime-to-llvm turns them into
// calls of the fusion runtime's C ABI (runtime/include/fusion_runtime.h).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSIONRUNTIME_IR_FUSIONRUNTIMEOPS_TD
#define FUSION_DIALECT_FUSIONRUNTIME_IR_FUSIONRUNTIMEOPS_TD

include "fusion/Dialect/Fusion/IR/FusionAttrs.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"

def FusionRuntime_Dialect : Dialect {
  let name = "fusion_rt";
  let cppNamespace = "::mlir::fusion_rt";
  let summary = "Host code of fusion's GPU backends: kernel launches and "
                "GEMM calls as ops with verified contracts";
  let description = [{
    Produced by `fusion-lower-to-gpu` inside the host `llvm.func` of each
    entry point, consumed by `fusion-lower-runtime-to-llvm`. Each op
    returns the runtime's `i32` status; the host code checks it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::fusion::FusionDialect"];
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// On a kernel (gpu.func, or its llvm.func lowering): the indices of
    /// its `!llvm.ptr` arguments that point to TMA tensor maps, which a
    /// launch passes by value (the 128-byte CUtensorMap, as
    /// `!llvm.array<16 x i64>`) and the kernel reads in parameter space
    /// (`fusion-lower-tensor-map-args`).
    static ::llvm::StringRef getTensorMapArgsAttrName() {
      return "fusion_rt.tensor_map_args";
    }
    /// The type a launch passes a tensor map as.
    static ::mlir::Type getTensorMapType(::mlir::MLIRContext *context);
  }];
}

class FusionRuntime_Op<string mnemonic, list<Trait> traits = []>
    : Op<FusionRuntime_Dialect, mnemonic, traits>;

def FusionRuntime_LaunchOp : FusionRuntime_Op<"launch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "launch a generated kernel on a stream";
  let description = [{
    Launches `kernel`, a `gpu.func` of a `gpu.module` of the enclosing
    module, on a `grid_x` x `grid_y` grid of `block`-thread blocks with
    `shared` bytes of dynamic shared memory, on `stream`. `args` are the
    kernel's arguments as the C ABI passes them: a memref argument of rank
    r as its expanded descriptor (allocated and aligned pointer, offset, r
    sizes, r strides), a tensor-map argument (`fusion_rt.tensor_map_args`,
    or lowered, an `llvm.byval` one) by value, every other argument as it
    is.

    A `persistent` launch is of a kernel whose blocks stride over `grid_x`
    work items (blockIdx, blockIdx + gridDim, ...): it gets no more blocks
    than the stream's device holds at once (its occupancy times the
    multiprocessors), and no more than `grid_x`.

    An `overlap_predecessor` launch may start the kernel while the stream's
    previous kernel still runs (programmatic dependent launch, sm_90): the
    kernel's threads wait for that grid (`nvvm.griddepcontrol wait`)
    before they touch global memory, so its launch and set-up overlap the
    previous kernel's tail.

    The verifier checks the launch against the kernel: it exists and is a
    kernel, `block` is its `known_block_size`, the arguments match its
    signature, `shared` fits the block of the module's `#fusion.target`,
    and an `overlap_predecessor` kernel waits for its predecessor.

    ```mlir
    %status = fusion_rt.launch @fusion_kernels::@f_0_epilogue
        grid(%gx, %c1) block 256 shared 0 stream(%stream)
        args(%out, %out, %groups : !llvm.ptr, !llvm.ptr, i64) : i32
    %status = fusion_rt.launch @fusion_kernels::@f_0_gemm
        grid(%tiles, %c1) block 384 shared 132608 persistent
        overlap_predecessor stream(%stream)
        args(%x, %w : !llvm.array<16 x i64>, !llvm.array<16 x i64>) : i32
    ```
  }];
  let arguments = (ins SymbolRefAttr:$kernel,
                       I64:$grid_x, I64:$grid_y,
                       I32Attr:$block, I32Attr:$shared,
                       LLVM_DefaultPointer:$stream,
                       Variadic<AnyType>:$args,
                       UnitAttr:$persistent,
                       UnitAttr:$overlap_predecessor);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $kernel `grid` `(` $grid_x `,` $grid_y `)` `block` $block
    `shared` $shared (`persistent` $persistent^)?
    (`overlap_predecessor` $overlap_predecessor^)? `stream` `(` $stream `)`
    (`args` `(` $args^ `:` type($args) `)`)? attr-dict `:` type($status)
  }];
}

def FusionRuntime_GemmOp : FusionRuntime_Op<"cublaslt_gemm"> {
  let summary = "out = alpha * x.w^T (+ bias) through cuBLASLt";
  let description = [{
    `out[M, N] = alpha * x[M, K] * w[N, K]^T (+ bias[N])`, all tensors of
    `element_type`, products in `precision`, f32 accumulation, on `stream`;
    `bias` may be a null pointer. `rows` is M. With `weight_layout in_out`
    the weight is stored `[K, N]`: `out = alpha * x * w (+ bias)`. `out`'s
    rows are `out_stride` elements apart (default N): a grouped GEMM
    multiplies each part of its weight into its columns of the output.

    ```mlir
    %status = fusion_rt.cublaslt_gemm f32 in tf32, %stream, %x, %w, %bias,
        %out, rows %m, n 256, k 512, alpha 1.0 : i32
    %status2 = fusion_rt.cublaslt_gemm f32 in tf32 weight_layout in_out,
        %stream, %x, %v, %bias, %out, rows %m, n 256, k 512, alpha 1.0 : i32
    ```
  }];
  let arguments = (ins Fusion_ElementTypeAttr:$element_type,
                       Fusion_PrecisionAttr:$precision,
                       DefaultValuedAttr<Fusion_WeightLayoutAttr,
                           "::mlir::fusion::WeightLayout::out_in">:$weight_layout,
                       LLVM_DefaultPointer:$stream, LLVM_DefaultPointer:$x,
                       LLVM_DefaultPointer:$w, LLVM_DefaultPointer:$bias,
                       LLVM_DefaultPointer:$out, I64:$rows,
                       ConfinedAttr<I64Attr, [IntPositive]>:$n,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k,
                       F32Attr:$alpha,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$out_stride);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $element_type `in` $precision
    (`weight_layout` $weight_layout^)? `,` $stream `,` $x `,` $w `,` $bias `,`
    $out `,` `rows` $rows `,` `n` $n `,` `k` $k `,` `alpha` $alpha
    (`out_stride` $out_stride^)? attr-dict `:` type($status)
  }];
}

def FusionRuntime_CheckSizeOp : FusionRuntime_Op<"check_size"> {
  let summary = "a size argument of the call is at least `minimum`";
  let description = [{
    Succeeds when `value` (a size the caller passes, such as the batch) is
    at least `minimum`; else the status is the runtime's invalid-argument
    error, whose message names `what`.

    ```mlir
    %status = fusion_rt.check_size "batch" %rows at_least 2 : i32
    ```
  }];
  let arguments = (ins StrAttr:$what, I64:$value,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$minimum);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $what $value `at_least` $minimum attr-dict `:` type($status)
  }];
  let hasVerifier = 1;
}

def FusionRuntime_CheckBufferOp : FusionRuntime_Op<"check_buffer"> {
  let summary = "a caller's buffer holds `bytes` on the stream's device";
  let description = [{
    Succeeds when `ptr` is device memory of the stream's device, 16-byte
    aligned, with `bytes` from there allocated; else the status is the
    runtime's invalid-argument error, whose message names `what` (such as
    "input #0").

    ```mlir
    %status = fusion_rt.check_buffer "input #0" %x bytes %n stream(%s) : i32
    ```
  }];
  let arguments = (ins StrAttr:$what, LLVM_DefaultPointer:$ptr, I64:$bytes,
                       LLVM_DefaultPointer:$stream);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $what $ptr `bytes` $bytes `stream` `(` $stream `)` attr-dict `:`
    type($status)
  }];
  let hasVerifier = 1;
}

def FusionRuntime_AllocOp : FusionRuntime_Op<"alloc"> {
  let summary = "a workspace of `bytes` for the call, stored at `slot`";
  let description = [{
    Allocates `bytes` of device memory ordered on `stream` (zero bytes: a
    null pointer) and stores its pointer at `slot`, where the host code's
    failure path finds it to free.

    ```mlir
    %status = fusion_rt.alloc %bytes into %slot stream(%s) : i32
    ```
  }];
  let arguments = (ins I64:$bytes, LLVM_DefaultPointer:$slot,
                       LLVM_DefaultPointer:$stream);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $bytes `into` $slot `stream` `(` $stream `)` attr-dict `:` type($status)
  }];
}

def FusionRuntime_FreeOp : FusionRuntime_Op<"free"> {
  let summary = "frees a workspace of `fusion_rt.alloc` on the stream";
  let description = [{
    Frees `ptr` (null: nothing) ordered on `stream`.

    ```mlir
    %status = fusion_rt.free %workspace stream(%s) : i32
    ```
  }];
  let arguments = (ins LLVM_DefaultPointer:$ptr, LLVM_DefaultPointer:$stream);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $ptr `stream` `(` $stream `)` attr-dict `:` type($status)
  }];
}

def FusionRuntime_CopyOp : FusionRuntime_Op<"copy"> {
  let summary = "copies `bytes` from device memory to device memory";
  let description = [{
    Copies `bytes` from `source` to `target`, ordered on `stream`: a result
    returned as an argument is, or a value returned twice.

    ```mlir
    %status = fusion_rt.copy %bytes from %x to %out stream(%s) : i32
    ```
  }];
  let arguments = (ins I64:$bytes, LLVM_DefaultPointer:$source,
                       LLVM_DefaultPointer:$target,
                       LLVM_DefaultPointer:$stream);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $bytes `from` $source `to` $target `stream` `(` $stream `)` attr-dict `:`
    type($status)
  }];
}

def FusionRuntime_EncodeTensorMapOp
    : FusionRuntime_Op<"encode_tensor_map"> {
  let summary = "the TMA tensor map of a row-major matrix, for this call";
  let description = [{
    Encodes into `map` (128 bytes, 64-byte aligned) the TMA tensor map of
    the row-major [`rows`, `columns`] matrix of `element_type` at `base`,
    read in boxes of `box_rows` x `box_columns` elements, 128-byte
    swizzled, zeros past its edges. A box row is whole 16-byte chunks of
    at most the 128 bytes of the swizzle; `box_rows` (a value: the last
    block row of a batch may take fewer) is 1 to 256 at run time.

    ```mlir
    %status = fusion_rt.encode_tensor_map %map, <bf16> %x rows %m columns %k
        box(%box_rows, 64) : i32
    ```
  }];
  let arguments = (ins LLVM_DefaultPointer:$map,
                       Fusion_ElementTypeAttr:$element_type,
                       LLVM_DefaultPointer:$base, I64:$rows, I64:$columns,
                       I32:$box_rows, I32Attr:$box_columns);
  let results = (outs I32:$status);
  let assemblyFormat = [{
    $map `,` $element_type $base `rows` $rows `columns` $columns
    `box` `(` $box_rows `,` $box_columns `)` attr-dict `:` type($status)
  }];
  let hasVerifier = 1;
}

#endif // FUSION_DIALECT_FUSIONRUNTIME_IR_FUSIONRUNTIMEOPS_TD
