// RUN: fusion-opt %s --split-input-file --verify-diagnostics --fusion-embed-kernel-image | FileCheck %s

// CHECK-NOT: gpu.binary
// CHECK-NOT: gpu.container_module
// CHECK: llvm.mlir.global internal constant @__fusion_kernels_image("ABC\00") {addr_space = 0 : i32, alignment = 16 : i64}
// CHECK-NOT: llvm.mlir.global external
module attributes {gpu.container_module} {
  llvm.mlir.global external constant @__fusion_kernels_image() : i8
  gpu.binary @fusion_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "ABC\00">]
}

// -----

// expected-error @+1 {{no gpu.binary @fusion_kernels (run gpu-module-to-binary first)}}
module {
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{must hold exactly one object to embed}}
  gpu.binary @fusion_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "A">, #gpu.object<#nvvm.target<chip = "sm_90">, "B">]
}
