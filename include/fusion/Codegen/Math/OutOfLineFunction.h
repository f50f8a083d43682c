//===- OutOfLineFunction.h - rare branches' code, once a module -*- C++ -*-===//
//
// The expansions of libdevice's functions (fusion-expand-remainders,
// fusion-expand-trigonometry) compute the common arguments inline and call
// the original op, in a function LLVM may not inline, for the rare ones;
// libdevice's powf (fusion-outline-powers) and special functions
// (fusion-outline-special-functions) are called so for every element: long
// code, inlined for each of a GEMM epilogue's elements (128 a thread in the
// wgmma kernel), misses the instruction cache and costs ptxas minutes.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_MATH_OUTOFLINEFUNCTION_H
#define FUSION_CODEGEN_MATH_OUTOFLINEFUNCTION_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// The symbol table around `op` that a pass `passName` running on `root`
/// may add functions to: one within `root` (one around it is another pass
/// instance's to change); otherwise an error at `op` and failure.
FailureOr<Operation *> getOutOfLineSymbolTable(Operation *op, Operation *root,
                                               StringRef passName);

/// The f32 function `name` of `arity` f32 arguments that returns
/// `buildBody`'s value of them, internal and marked `no_inline`, made once
/// in the symbol table around `op`, for a pass `passName` running on
/// `root`. The table must be within `root` (one around it is another pass
/// instance's to change); otherwise an error at `op` and failure.
FailureOr<LLVM::LLVMFuncOp> getOrCreateOutOfLineFunction(
    Operation *op, Operation *root, StringRef passName, StringRef name,
    unsigned arity,
    function_ref<Value(OpBuilder &, Location, ValueRange)> buildBody);

/// A new such function, named `name` or, should the symbol table have
/// one, a unique name made from it.
FailureOr<LLVM::LLVMFuncOp> createOutOfLineFunction(
    Operation *op, Operation *root, StringRef passName, StringRef name,
    unsigned arity,
    function_ref<Value(OpBuilder &, Location, ValueRange)> buildBody);

/// Whether `op` is in the out-of-line function `name` (which the passes
/// leave as it is).
bool isInOutOfLineFunction(Operation *op, StringRef name);

/// `fast` where `condition` holds, else the call `outOfLine(arguments)`, in
/// an `scf.if` whose else branch alone holds the call.
Value buildFastPathOrCall(OpBuilder &builder, Location loc, Value condition,
                          Value fast, LLVM::LLVMFuncOp outOfLine,
                          ValueRange arguments);

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_MATH_OUTOFLINEFUNCTION_H
