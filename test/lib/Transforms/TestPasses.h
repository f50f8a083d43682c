//===- TestPasses.h - fusion's test-only passes -----------------*- C++ -*-===//

#ifndef FUSION_TEST_LIB_TRANSFORMS_TESTPASSES_H
#define FUSION_TEST_LIB_TRANSFORMS_TESTPASSES_H

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fusion::test {

#define GEN_PASS_DECL
#include "TestPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

} // namespace mlir::fusion::test

#endif // FUSION_TEST_LIB_TRANSFORMS_TESTPASSES_H
