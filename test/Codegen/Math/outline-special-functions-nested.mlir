// fusion-outline-special-functions scheduled on a function: its functions
// would go into the module around it, which another pass instance owns, so
// the pass refuses with the op's location.
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-outline-special-functions))' -verify-diagnostics
func.func @nested(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op needs a symbol table within the op that fusion-outline-special-functions runs on (a module), for its out-of-line function}}
  %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
  ^bb0(%t: f32):
    %l = math.log %t : f32
    fusion.yield %l : f32
  }
  return %0 : f32
}
