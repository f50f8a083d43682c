// fusion-expand-remainders scheduled on a function: the out-of-line
// remainder function would go into the module around it, which another
// pass instance owns, so the pass refuses with the remf's location.
// RUN: fusion-opt %s --pass-pipeline='builtin.module(func.func(fusion-expand-remainders))' -verify-diagnostics
func.func @nested(%x: f32, %y: f32) -> f32 {
  // expected-error @+1 {{'arith.remf' op needs a symbol table within the op that fusion-expand-remainders runs on (a module), for its out-of-line function}}
  %0 = arith.remf %x, %y : f32
  return %0 : f32
}
