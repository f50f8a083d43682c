// Every op of the fused_linear epilogue allow-list lowers on the GPU, with
// both strategies.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx -o - | FileCheck %s
// RUN: fusion-compile %S/../../Dialect/Fusion/epilogue-ops.mlir --emit=ptx --strategy=tiled -o - | FileCheck %s
// CHECK: .visible .entry
