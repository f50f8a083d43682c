// fusion-outline-powers scheduled on a function: the out-of-line power
// would go into the module around it, which another pass instance owns,
// so the pass refuses with the powf's location.
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-outline-powers))' -verify-diagnostics
func.func @nested(%x: f32, %y: f32) -> f32 {
  // expected-error @+1 {{'math.powf' op needs a symbol table within the op that fusion-outline-powers runs on (a module), for its out-of-line function}}
  %0 = math.powf %x, %y : f32
  return %0 : f32
}
