//===- KernelSupport.h - what every kernel builder uses ---------*- C++ -*-===//
//
// The helpers the kernel builders share: element sizes, f32 widening and
// narrowing, thread-block constants, and the small builder of kernel bodies
// (i64 index math in arith, memory through llvm ops).
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_KERNELSUPPORT_H
#define FUSION_CODEGEN_KERNELS_KERNELSUPPORT_H

#include "fusion/Codegen/Kernels/LaunchContract.h"
#include "fusion/Codegen/Math/Tf32.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::fusion {

/// An f32 scalar function of an element and one element per operand: the
/// column vectors' first, then the row operands'.
using ScalarFn = std::function<Value(OpBuilder &, Location, Value, ValueRange)>;

/// Threads per block of the elementwise and statistics kernels, and per
/// warp.
constexpr int64_t kBlockSize = 256;
constexpr int32_t kWarpSize = 32;

/// Bytes of one element of a float type.
inline int64_t elementBytes(Type elementType) {
  return elementType.getIntOrFloatBitWidth() / 8;
}

/// `value` (a float or a vector of floats) extended to f32, or truncated
/// from f32 to `elementType`; unchanged when already of that type.
Value widenToF32(OpBuilder &builder, Location loc, Value value);
Value narrowTo(OpBuilder &builder, Location loc, Value value, Type elementType);

/// Elements each thread of an elementwise kernel handles: 16 bytes when the
/// row length allows it, else 1.
int64_t getVectorWidth(Type elementType, int64_t columns);

/// A per-column vector operand of a kernel: one element of `elementType` for
/// each column, or a single one that every column reads (a single-value
/// parameter, which the dialect's column operands broadcast).
struct ColumnOperand {
  Type elementType;
  bool single = false;

  /// The column operand a `tensor<N x T>` or `tensor<1 x T>` value is.
  static ColumnOperand of(Value vector);
};
SmallVector<ColumnOperand> columnOperandsOf(ValueRange vectors);

/// How a kernel reads a row operand of an [M, N] matrix: an [M, groups]
/// matrix (groups dividing N) from its buffer, or a fusion.random_uniform
/// draw of `groups` columns, computed where it is read from the [2] f32
/// seed that its buffer is: no matrix of random numbers is stored.
struct RowOperandSource {
  int64_t groups;
  std::optional<int64_t> drawStream;

  bool isDraw() const { return drawStream.has_value(); }
};
/// The source of each row operand `rows` (a draw where a
/// fusion.random_uniform defines it).
SmallVector<RowOperandSource> rowOperandSourcesOf(ValueRange rows);

/// Element `index` (m * G + g) of the draw of `stream` under `key`, rounded
/// to `elementType` as a stored draw is, as f32.
Value drawElement(OpBuilder &builder, Location loc,
                  std::pair<Value, Value> key, int64_t stream, Value index,
                  Type elementType);
/// Elements `first` to `first + count - 1` of that draw, a run that starts
/// at a multiple of `count` in a row of `rowLength` elements, each as
/// drawElement gives it (one Philox block for each aligned group of up to
/// four: buildUniformRun).
SmallVector<Value> drawRun(OpBuilder &builder, Location loc,
                           std::pair<Value, Value> key, int64_t stream,
                           Value first, int64_t count, int64_t rowLength,
                           Type elementType);

/// The shape of the matrices a kernel works on.
struct MatrixShape {
  Type elementType;
  int64_t columns;
  int64_t vectorWidth;
};

/// Creates `gpu.func @name(argTypes) kernel` of `blockSize` threads at the
/// builder's insertion point and sets the builder into its body.
gpu::GPUFuncOp createKernel(OpBuilder &builder, Location loc, StringRef name,
                            TypeRange argTypes, int64_t blockSize = kBlockSize);

/// Where `kernel`'s chip launches kernels early (programmatic dependent
/// launch, sm_90): its threads wait here until the stream's previous grid
/// has finished and its writes are visible (griddepcontrol.wait), and
/// `launch` allows the runtime to start the kernel while the previous grid
/// still runs. So the launch's latency, and whatever the kernel does before
/// this point (shared-memory set-up, never global memory), overlaps the
/// previous kernel's end. Elsewhere nothing.
///
/// No kernel signals its dependents early (launch_dependents): they
/// launch as its last blocks exit. Signalled at the start, a batch norm's
/// normalizing pass waited on the SMs beside the finalize kernel and took
/// 9-11 us longer.
void emitPredecessorWait(OpBuilder &builder, Location loc,
                         gpu::GPUFuncOp kernel, LaunchContract &launch);

/// Runs `body` under `if (condition)` and ends the kernel.
void emitGuarded(OpBuilder &builder, Location loc, Value condition,
                 function_ref<void()> body);

/// The most elements of a row a row program's thread keeps in registers, so
/// that the row is read from memory once: 16 chunks of f32, 8 of 16-bit
/// types. The steps share their f32 conversions of 16-bit chunks, so each
/// element holds a register whatever its type: 128 bf16 elements a thread
/// spilled 1244 bytes in softmax(gelu(layer_norm(y))) of 4096 columns, whose
/// whole op took 2.2x as long as with the row read for each step.
constexpr int64_t kMaxCachedElements = 64;

/// The threads a reduction of `chunks` chunks of `vectorWidth` elements of a
/// row (or group) spreads over: a block of kBlockSize for long ones (1024
/// chunks, or 4096 elements: 512 chunks of a 16-bit type, whose warp would
/// hold more of the row than kMaxCachedElements), so that a few long rows
/// still fill the GPU, a warp for shorter ones, and for short ones (small
/// groups, pooling windows, merges of a few partials) the fewest lanes, a
/// power of two, that give each a chunk, so that no lane idles.
inline int64_t threadsPerReduction(int64_t chunks, int64_t vectorWidth) {
  if (chunks >= 1024 || chunks * vectorWidth >= 4096)
    return kBlockSize;
  int64_t lanes = 1;
  while (lanes < chunks && lanes < kWarpSize)
    lanes *= 2;
  return lanes;
}

/// Shared memory for the warp totals of a reduction over `threads` threads,
/// if it spans several warps: a workgroup attribution of `kernel`.
Value addReductionScratch(OpBuilder &builder, Location loc,
                          gpu::GPUFuncOp kernel, int64_t threads);

/// Combines `value` across each aligned group of `lanes` consecutive lanes
/// of a warp (a power of two, at most a warp) with an XOR butterfly: every
/// lane of the group gets the same bits. The whole warp must call it.
Value reduceAcrossLanes(OpBuilder &builder, Location loc, ReductionKind kind,
                        Value value, int64_t lanes);

/// Combines `value` across the `threads` consecutive threads (aligned lanes
/// of a warp, a warp or the block) reducing one row, of which `lane` is the
/// index: a butterfly in each warp, then the warp totals through `scratch`
/// in warp order; every thread gets the total, the same bits on every run.
/// All threads of the warp (of the block, for several warps) must call it.
Value reduceAcrossThreads(OpBuilder &builder, Location loc, ReductionKind kind,
                          Value value, Value lane, int64_t threads,
                          Value scratch);

/// The index arithmetic of kernel bodies that address memrefs (the GEMM
/// kernels and their epilogue), with the builder and location they share.
class IndexEmitter {
public:
  IndexEmitter(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

protected:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value add(Value l, int64_t r) { return r ? add(l, idx(r)) : l; }
  Value sub(Value l, Value r) { return arith::SubIOp::create(b, loc, l, r); }
  Value sub(Value l, int64_t r) { return sub(l, idx(r)); }
  Value mul(Value l, int64_t r) {
    return r == 1 ? l : arith::MulIOp::create(b, loc, l, idx(r)).getResult();
  }
  Value div(Value l, int64_t r) {
    return arith::DivUIOp::create(b, loc, l, idx(r));
  }
  Value rem(Value l, int64_t r) {
    return arith::RemUIOp::create(b, loc, l, idx(r));
  }
  Value lessThan(Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, l, r);
  }
  Value equal(Value l, int64_t r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, l, idx(r));
  }
  Value both(Value l, Value r) { return arith::AndIOp::create(b, loc, l, r); }
  Value select(Value cond, Value t, Value f) {
    return arith::SelectOp::create(b, loc, cond, t, f);
  }
  Value f32(double v) { return buildF32Constant(b, loc, v); }
  Value widen(Value v) { return widenToF32(b, loc, v); }
  /// Runs `body` under `if (cond)`.
  void guarded(Value cond, function_ref<void()> body);
  /// The shared-memory address space.
  Attribute workgroup() {
    return gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  }
  /// A `shape` x `type` view at byte `offset` of the i8 shared memref
  /// `bytes`.
  Value viewOf(Value bytes, Value offset, ArrayRef<int64_t> shape, Type type);

  OpBuilder &b;
  Location loc;
};

/// Emits kernel bodies: i64 index math in arith, memory through llvm ops.
class KernelEmitter {
public:
  KernelEmitter(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  Value i64(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  Value f32(double value) { return buildF32Constant(b, loc, value); }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value mul(Value l, Value r) { return arith::MulIOp::create(b, loc, l, r); }
  Value lessThan(Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, l, r);
  }

  Value id(gpu::Dimension dim, bool block) {
    Value index = block ? gpu::BlockIdOp::create(b, loc, dim).getResult()
                        : gpu::ThreadIdOp::create(b, loc, dim).getResult();
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }
  Value gridDim(gpu::Dimension dim) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                      gpu::GridDimOp::create(b, loc, dim));
  }
  /// blockIdx.x * kBlockSize + threadIdx.x.
  Value globalThreadX() {
    return add(mul(id(gpu::Dimension::x, true), i64(kBlockSize)),
               id(gpu::Dimension::x, false));
  }

  Value address(Value base, Type elementType, Value index) {
    return LLVM::GEPOp::create(b, loc,
                               LLVM::LLVMPointerType::get(b.getContext()),
                               elementType, base, ValueRange{index});
  }
  Value load(Type type, Value base, Type elementType, Value index,
             unsigned alignment) {
    return LLVM::LoadOp::create(b, loc, type, address(base, elementType, index),
                                alignment);
  }
  void store(Value value, Value base, Type elementType, Value index,
             unsigned alignment) {
    LLVM::StoreOp::create(b, loc, value, address(base, elementType, index),
                          alignment);
  }
  /// One element of a column vector, as f32.
  Value loadColumn(Value column, Type elementType, Value n) {
    return widen(load(elementType, column, elementType, n,
                      elementBytes(elementType)));
  }

  /// Column `n`'s element of column operand `operand` at `base`, as f32.
  Value loadColumn(const ColumnOperand &operand, Value base, Value n) {
    return loadColumn(base, operand.elementType, operand.single ? i64(0) : n);
  }

  /// `width` consecutive elements from `base[index]` as they are stored (a
  /// vector, or a scalar for width 1); `index` is a multiple of `width` and
  /// `base` 16-byte aligned.
  Value loadChunk(Value base, Type elementType, Value index, int64_t width) {
    unsigned bytes = elementBytes(elementType);
    if (width == 1)
      return load(elementType, base, elementType, index, bytes);
    return load(VectorType::get({width}, elementType), base, elementType, index,
                std::min<unsigned>(16, width * bytes));
  }
  /// The elements of a loaded chunk, as f32 lanes.
  SmallVector<Value> chunkLanes(Value chunk) {
    Value widened = widen(chunk);
    auto vectorType = dyn_cast<VectorType>(widened.getType());
    if (!vectorType)
      return {widened};
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < vectorType.getNumElements(); ++lane)
      lanes.push_back(vector::ExtractOp::create(b, loc, widened, lane));
    return lanes;
  }
  /// `width` consecutive elements from `base[index]`, as f32 lanes; `index`
  /// is a multiple of `width` and `base` 16-byte aligned.
  SmallVector<Value> loadLanes(Value base, Type elementType, Value index,
                               int64_t width) {
    return chunkLanes(loadChunk(base, elementType, index, width));
  }
  /// The elements of column operand `operand` at `base` for the `width`
  /// consecutive columns from `column` (a multiple of `width`), as f32
  /// lanes.
  SmallVector<Value> loadColumnLanes(const ColumnOperand &operand, Value base,
                                     Value column, int64_t width) {
    if (operand.single)
      return SmallVector<Value>(width, loadColumn(operand, base, column));
    return loadLanes(base, operand.elementType, column, width);
  }
  /// The key of the draw whose seed is at `seed`.
  std::pair<Value, Value> drawKey(Value seed);
  /// The elements of an [M, groups] row operand at `base` (of `source`)
  /// that cover the `width` consecutive columns from `column` (a multiple
  /// of `width`) of row `row` of an [M, columns] matrix, as f32 lanes.
  SmallVector<Value> loadRowLanes(const RowOperandSource &source, Value base,
                                  Type elementType, Value row, Value column,
                                  int64_t width, int64_t columns) {
    int64_t groups = source.groups, groupSize = columns / groups;
    std::optional<std::pair<Value, Value>> key;
    if (source.isDraw())
      key = drawKey(base);
    auto elementAt = [&](Value index) {
      if (key)
        return drawElement(b, loc, *key, *source.drawStream, index,
                           elementType);
      return widen(load(elementType, base, elementType, index,
                        elementBytes(elementType)));
    };
    if (groupSize == 1) { // A whole matrix, laid out as the input.
      Value first = add(mul(row, i64(columns)), column);
      if (!key)
        return loadLanes(base, elementType, first, width);
      // `column` is a multiple of `width`.
      return drawRun(b, loc, *key, *source.drawStream, first, width, columns,
                     elementType);
    }
    Value rowStart = mul(row, i64(groups));
    auto loadAt = [&](Value n) {
      Value g = arith::DivUIOp::create(b, loc, n, i64(groupSize));
      return elementAt(add(rowStart, g));
    };
    if (groupSize % width == 0) // The lanes share one group.
      return SmallVector<Value>(width, loadAt(column));
    SmallVector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane)
      lanes.push_back(loadAt(add(column, i64(lane))));
    return lanes;
  }

  void storeLanes(ArrayRef<Value> lanes, Value base, Type elementType,
                  Value index) {
    int64_t width = lanes.size();
    if (width == 1) {
      store(narrow(lanes.front(), elementType), base, elementType, index,
            elementBytes(elementType));
      return;
    }
    Value vector = vector::BroadcastOp::create(
        b, loc, VectorType::get({width}, b.getF32Type()), f32(0.0));
    for (auto [lane, value] : llvm::enumerate(lanes))
      vector = vector::InsertOp::create(b, loc, value, vector, lane);
    store(narrow(vector, elementType), base, elementType, index, 16);
  }

  Value widen(Value value) { return widenToF32(b, loc, value); }
  Value narrow(Value value, Type elementType) {
    return narrowTo(b, loc, value, elementType);
  }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_KERNELSUPPORT_H
