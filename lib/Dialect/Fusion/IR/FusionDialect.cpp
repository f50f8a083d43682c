//===- FusionDialect.cpp - fusion dialect, enums and attributes -----------===//

#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"
#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fusion;

#include "fusion/Dialect/Fusion/IR/FusionDialect.cpp.inc"
#include "fusion/Dialect/Fusion/IR/FusionEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fusion/Dialect/Fusion/IR/FusionAttrs.cpp.inc"

namespace {
/// Every fusion op is pure and its epilogue region is isolated: calls to
/// functions of fusion ops can always be inlined.
struct FusionInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void FusionDialect::initialize() {
  addInterfaces<FusionInlinerInterface>();
  addOperations<
#define GET_OP_LIST
#include "fusion/Dialect/Fusion/IR/FusionOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fusion/Dialect/Fusion/IR/FusionAttrs.cpp.inc"
      >();
}

LogicalResult
BatchNormConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            BatchNormMode mode, APFloat epsilonValue,
                            APFloat momentumValue) {
  double epsilon = epsilonValue.convertToDouble();
  double momentum = momentumValue.convertToDouble();
  if (!std::isfinite(epsilon) || epsilon < 0.0)
    return emitError() << "batch_norm epsilon must be finite and >= 0, got "
                       << epsilon;
  if (!std::isfinite(momentum))
    return emitError() << "batch_norm momentum must be finite, got "
                       << momentum;
  return success();
}

LogicalResult FusionDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  if (attr.getName() == TargetAttr::getAttrName()) {
    if (!isa<TargetAttr>(attr.getValue()))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be a #fusion.target";
    // The configs below are checked against the chip by Codegen.
    return success();
  }
  if (attr.getName() == LoweringAttr::getAttrName()) {
    if (!isa<LoweringAttr>(attr.getValue()) || !isa<FusedLinearOp>(op))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be a #fusion.lowering on a "
                                "fusion.fused_linear";
    // The checks against the op and the chip: Codegen's verifyLowering.
    return success();
  }
  return op->emitError() << "unknown fusion attribute '"
                         << attr.getName().getValue() << "'";
}
