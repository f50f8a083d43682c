//===- LaunchContract.h - how host code launches a built kernel -*- C++ -*-===//
//
// Every kernel builder returns its gpu.func with the contract of its launch:
// grid, block, dynamic shared memory and where each argument comes from.
// Host lowering materializes the contract and re-derives none of it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_KERNELS_LAUNCHCONTRACT_H
#define FUSION_CODEGEN_KERNELS_LAUNCHCONTRACT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <array>
#include <optional>

namespace mlir::fusion {

/// An i64 quantity of a launch, from its row count M (the batch):
/// `factor * ceil(M * rowScale / divisor)`, where the divisor is a constant
/// or the value of the launch operand `divisorOperand`. With `rowScale` 0 it
/// is `factor` alone.
struct RowExpr {
  int64_t factor = 1;
  int64_t rowScale = 0;
  int64_t divisor = 1;
  std::optional<unsigned> divisorOperand;

  static RowExpr constant(int64_t value) { return {value, 0, 1, {}}; }
  static RowExpr rows() { return {1, 1, 1, {}}; }
  /// factor * ceil(M * rowScale / divisor).
  static RowExpr ceilDiv(int64_t rowScale, int64_t divisor,
                         int64_t factor = 1) {
    return {factor, rowScale, divisor, {}};
  }
  /// ceil(M / operand).
  static RowExpr ceilDivByOperand(unsigned operand) {
    return {1, 1, 1, operand};
  }
};

/// Where one kernel argument comes from. A launch's operands are the
/// buffers (pointers) and host-planned i64 values its caller hands over, in
/// the order the builder documents.
struct KernelArgument {
  enum class Kind {
    Operand,    ///< the operand as it is
    Descriptor, ///< a dense row-major memref of `shape` at the operand
    Value,      ///< the i64 `value`
    /// A TMA tensor map of the [shape[0], shape[1]] row-major matrix of
    /// `elementType` at the operand, in boxes of `box` (rows, columns), or
    /// with `lastBlockRows` of the rows of the batch's last block row of
    /// that many rows (M - blockM * (ceil(M / blockM) - 1)), 128-byte
    /// swizzled, passed by value.
    TensorMap,
  };
  Kind kind;
  unsigned operand = 0;
  SmallVector<RowExpr, 2> shape;
  RowExpr value;
  Type elementType;
  std::array<int64_t, 2> box = {0, 0};
  int64_t lastBlockRows = 0;

  static KernelArgument fromOperand(unsigned operand) {
    return {Kind::Operand, operand, {}, {}};
  }
  static KernelArgument descriptor(unsigned operand,
                                   SmallVector<RowExpr, 2> shape) {
    return {Kind::Descriptor, operand, std::move(shape), {}};
  }
  static KernelArgument fromValue(RowExpr value) {
    return {Kind::Value, 0, {}, value};
  }
  static KernelArgument tensorMap(unsigned operand,
                                  SmallVector<RowExpr, 2> shape,
                                  Type elementType,
                                  std::array<int64_t, 2> box) {
    return {Kind::TensorMap, operand, std::move(shape), {}, elementType, box};
  }
  /// A tensor map whose boxes are the last block row of `blockRows`-row
  /// blocks by `boxColumns`: the rows a tile there loads without reading
  /// past the matrix.
  static KernelArgument lastBlockRowTensorMap(unsigned operand,
                                              SmallVector<RowExpr, 2> shape,
                                              Type elementType,
                                              int64_t blockRows,
                                              int64_t boxColumns) {
    KernelArgument argument =
        tensorMap(operand, std::move(shape), elementType, {0, boxColumns});
    argument.lastBlockRows = blockRows;
    return argument;
  }
};

struct LaunchContract {
  RowExpr gridX = RowExpr::constant(1), gridY = RowExpr::constant(1);
  /// The kernel's blocks stride over `gridX` work items, and the runtime
  /// launches no more blocks than the device holds at once.
  bool persistent = false;
  /// The kernel's threads wait for the stream's previous grid to finish
  /// (emitPredecessorWait) before they touch global memory: the runtime may
  /// launch it while that grid still runs (programmatic dependent launch).
  bool overlapsPredecessor = false;
  int64_t blockSize;
  int64_t dynamicSharedBytes = 0;
  SmallVector<KernelArgument> arguments;
};

/// A built kernel and how to launch it.
struct Kernel {
  gpu::GPUFuncOp func;
  LaunchContract launch;
};

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_KERNELS_LAUNCHCONTRACT_H
