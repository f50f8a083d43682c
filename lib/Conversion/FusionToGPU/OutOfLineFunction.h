//===- OutOfLineFunction.h - rare branches' code, once a module -*- C++ -*-===//
//
// The expansions of libdevice's functions (fusion-expand-remainders,
// fusion-expand-trigonometry) compute the common arguments inline and call
// the original op, in a function LLVM may not inline, for the rare ones:
// libdevice's code, inlined for each of a GEMM epilogue's elements (128 a
// thread in the wgmma kernel), misses the instruction cache.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CONVERSION_FUSIONTOGPU_OUTOFLINEFUNCTION_H
#define FUSION_CONVERSION_FUSIONTOGPU_OUTOFLINEFUNCTION_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::fusion {

/// The symbol table that a pass running on `root` adds `op`'s out-of-line
/// function to: the nearest one around `op`, where `root` holds it (one
/// around `root` is another pass instance's to change). Otherwise null,
/// with an error at `op` naming `passName`.
Operation *getOwnedSymbolTable(Operation *op, Operation *root,
                               StringRef passName);

/// The f32 function `name` of `arity` f32 arguments that returns
/// `buildBody`'s value of them, internal and marked `no_inline`, made in
/// `symbolTable` once.
LLVM::LLVMFuncOp getOrCreateOutOfLineFunction(
    OpBuilder &builder, Location loc, Operation *symbolTable, StringRef name,
    unsigned arity,
    function_ref<Value(OpBuilder &, Location, ValueRange)> buildBody);

/// `fast` where `condition` holds, else the call `outOfLine(arguments)`, in
/// an `scf.if` whose else branch alone holds the call.
Value buildFastPathOrCall(OpBuilder &builder, Location loc, Value condition,
                          Value fast, LLVM::LLVMFuncOp outOfLine,
                          ValueRange arguments);

} // namespace mlir::fusion

#endif // FUSION_CONVERSION_FUSIONTOGPU_OUTOFLINEFUNCTION_H
