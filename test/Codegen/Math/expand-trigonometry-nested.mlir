// fusion-expand-trigonometry scheduled on a function: the out-of-line
// sine would go into the module around it, which another pass instance
// owns, so the pass refuses with the op's location.
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-expand-trigonometry))' -verify-diagnostics
func.func @nested(%x: f32) -> f32 {
  // expected-error @+1 {{'math.sin' op needs a symbol table within the op that fusion-expand-trigonometry runs on (a module), for its out-of-line function}}
  %0 = math.sin %x : f32
  return %0 : f32
}
