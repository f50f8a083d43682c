// Inputs that crash MLIR 22's parser are refused before parsing, with a
// located error (docs/known-issues.md): a dense array of index
// (Inputs/dense-index-array.mlir, shared/reliability/parser-dense-array-index.mlir).
// RUN: not fusion-opt %S/Inputs/dense-index-array.mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// RUN: not fusion-compile %S/Inputs/dense-index-array.mlir --target=cpu --emit=mlir -o %t.mlir 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: dense-index-array.mlir:1:40: error: dense arrays of 'index' are not supported (elements must be i1 to i64, f32 or f64): MLIR 22's parser crashes on them, so the input is refused before parsing (docs/known-issues.md)
// INDEX-NEXT: func.func private @f() attributes {a = array<index: 1>}
// INDEX-NEXT: {{^ +\^$}}
//
// NUL bytes are whitespace to MLIR's lexer, so they hide nothing (found by
// the fuzzer: `array\0\0<index: 1>`).
// RUN: printf 'func.func private @f() attributes {a = array\000\000<index: 1>}\n' > %t.nul.mlir
// RUN: not fusion-opt %t.nul.mlir 2>&1 | FileCheck %s --check-prefix=NUL
// NUL: nul.mlir:1:40: error: dense arrays of 'index' are not supported
//
// Other dense arrays, and the words in a comment or a string, are parsed as
// usual:
// array<index: 1>.
// RUN: fusion-opt %s | FileCheck %s
// CHECK: func.func private @f() attributes {a = array<i64: 1>, b = array<f32: 2.000000e+00>, index_array = "array<index: 1>"}
func.func private @f() attributes {a = array<i64: 1>, b = array<f32: 2.0>, index_array = "array<index: 1>"}
