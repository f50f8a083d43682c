//===- FusionRandomOps.cpp - fusion ops that draw random numbers ----------===//

#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"

using namespace mlir;
using namespace mlir::fusion;

#define GET_OP_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.cpp.inc"

LogicalResult RandomUniformOp::verify() {
  auto seed = cast<RankedTensorType>(getSeed().getType());
  if (seed.getShape() != ArrayRef<int64_t>{2} || !seed.getElementType().isF32())
    return emitOpError("seed must be a tensor<2xf32> (64 bits), got ") << seed;
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.isDynamicDim(1) || result.getDimSize(1) == 0)
    return emitOpError("result ")
           << result << " must have a static, nonzero column dimension";
  auto rows = cast<RankedTensorType>(getRowsOf().getType());
  if (rows.getDimSize(0) != result.getDimSize(0))
    return emitOpError("rows_of ")
           << rows << " has other rows than the result " << result;
  return success();
}
