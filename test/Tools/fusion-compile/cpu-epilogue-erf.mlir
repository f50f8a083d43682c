// math.erf (GELU's) in an epilogue compiles into a CPU library
// (shared/reliability/cpu-epilogue-erf.mlir: it used to stop at "missing
// LLVMTranslationDialectInterface ... math.erf"); the CPU reference calls
// libm's erff.
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %S/Inputs/cpu-epilogue-erf.mlir --target=cpu -o %t/erf.so
// RUN: nm -D %t/erf.so | FileCheck %s
// CHECK: U erff
// CHECK: T f
