// fusion-lower-to-linalg refuses a special function with a formula, which
// fusion-inline-special-functions inlines before it.
// RUN: fusion-opt %s --fusion-lower-to-linalg -verify-diagnostics

func.func @formula(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = fusion.elementwise %x : tensor<4x8xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'fusion.special' op has a formula, which fusion-inline-special-functions inlines before the lowering to linalg}}
    %s = fusion.special "square"(%a) : (f32) -> f32 {
    ^bb0(%b: f32):
      %t = arith.mulf %b, %b : f32
      fusion.yield %t : f32
    }
    fusion.yield %s : f32
  }
  return %y : tensor<4x8xf32>
}
