// fusion-outline-special-functions refuses, at the op, a libdevice name
// that the module already holds as something other than libdevice's f32
// function of one f32.
// RUN: fusion-opt %s --fusion-outline-special-functions -split-input-file -verify-diagnostics

llvm.mlir.global internal @__nv_lgammaf(0.0 : f32) : f32

func.func @global(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls libdevice's '__nv_lgammaf', but the module's symbol of that name is not its f32 function of one f32}}
  %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
  ^bb0(%t: f32):
    fusion.yield %t : f32
  }
  return %0 : f32
}

// -----

llvm.func @__nv_lgammaf(f64) -> f64

func.func @other_type(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls libdevice's '__nv_lgammaf', but the module's symbol of that name is not its f32 function of one f32}}
  %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
  ^bb0(%t: f32):
    fusion.yield %t : f32
  }
  return %0 : f32
}
