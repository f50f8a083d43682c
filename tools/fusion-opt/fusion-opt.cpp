//===- fusion-opt.cpp - fusion optimizer driver ---------------------------===//
//
// MlirOptMain with the fusion dialect and the upstream dialects and passes the
// project's pipelines use.
//
//===----------------------------------------------------------------------===//

#include "fusion/Conversion/Passes.h"
#include "fusion/Dialect/Fusion/IR/FusionDialect.h"
#include "fusion/Dialect/Fusion/Transforms/Passes.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"
#include "fusion/Pipelines/Pipelines.h"
#include "TestPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::fusion::registerFusionTransformsPasses();
  mlir::fusion::registerFusionConversionPasses();
  mlir::fusion::registerFusionPipelines();
  mlir::fusion::test::registerFusionTestPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::fusion::FusionDialect,
                  mlir::fusion_rt::FusionRuntimeDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fusion optimizer driver\n", registry));
}
