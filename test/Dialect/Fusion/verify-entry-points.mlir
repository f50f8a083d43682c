// What fusion-compile can build a library from passes unchanged.
// RUN: fusion-opt %s --fusion-verify-entry-points | FileCheck %s
// A smaller constant limit refuses the constant below.
// RUN: fusion-opt %s --fusion-verify-entry-points="max-constant-bytes=15" -verify-diagnostics

// CHECK-LABEL: func.func @entry(
// CHECK-SAME: tensor<?x8xf32>, %{{.*}}: tensor<4x8xbf16>, %{{.*}}: tensor<4xf16>) -> tensor<?x8xf32>
// Private functions are no entry points: any types.
// CHECK-LABEL: func.func private @helper(%{{.*}}: f64) -> f64
func.func @entry(%x: tensor<?x8xf32>, %w: tensor<4x8xbf16>, %s: tensor<4xf16>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'arith.constant' op has a constant of type 'tensor<4xf32>' (16 bytes) that is too large to materialize (the limit is 15 bytes)}}
  %c = arith.constant dense<2.0> : tensor<4xf32>
  return %x : tensor<?x8xf32>
}
func.func private @helper(%s: f64) -> f64 {
  return %s : f64
}
