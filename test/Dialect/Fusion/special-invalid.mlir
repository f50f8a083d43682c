// Every verifier rule of fusion.special.
// RUN: fusion-opt %s -split-input-file -verify-diagnostics

func.func @no_inputs() -> f32 {
  // expected-error @+1 {{'fusion.special' op 'pi' has no inputs}}
  %0 = fusion.special "pi"() : () -> f32 {
    %c = arith.constant 3.14159274 : f32
    fusion.yield %c : f32
  }
  return %0 : f32
}

// -----

func.func @no_name(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op function name '' is not a nonempty identifier of letters, digits and underscores}}
  %0 = fusion.special ""(%x) : (f32) -> f32 {
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @not_libdevice(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op libdevice function 'lgammaf' of 'lgamma' is not one of libdevice's f32 special functions (__nv_cyl_bessel_i0f,}}
  %0 = fusion.special "lgamma"(%x) libdevice "lgammaf" : (f32) -> f32 {
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @not_identifier(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op function name 'bessel-j0' is not a nonempty identifier}}
  %0 = fusion.special "bessel-j0"(%x) : (f32) -> f32 {
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @f64_variant(%x: f32) -> f32 {
  // expected-error @+1 {{libdevice function '__nv_lgamma' of 'lgamma' is not one of libdevice's f32 special functions}}
  %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgamma" : (f32) -> f32 {
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @libdevice_arity(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls libdevice's '__nv_lgammaf' with 2 inputs, but libdevice's special functions take one}}
  %0 = fusion.special "lgamma"(%x, %x) libdevice "__nv_lgammaf" : (f32, f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @arguments(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op body has 2 arguments but expects 1 (one per input)}}
  %0 = fusion.special "f"(%x) : (f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @argument_type(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op body argument #0 has type 'f64' but body arguments are f32}}
  %0 = fusion.special "f"(%x) : (f32) -> f32 {
  ^bb0(%a: f64):
    %t = arith.truncf %a : f64 to f32
    fusion.yield %t : f32
  }
  return %0 : f32
}

// -----

func.func @disallowed(%x: f32) -> f32 {
  %0 = fusion.special "f"(%x) : (f32) -> f32 {
  ^bb0(%a: f32):
    // expected-error @+1 {{'math.cbrt' op is not allowed in a special function's body}}
    %c = math.cbrt %a : f32
    fusion.yield %c : f32
  }
  return %0 : f32
}

// -----

func.func @fastmath(%x: f32) -> f32 {
  %0 = fusion.special "f"(%x) : (f32) -> f32 {
  ^bb0(%a: f32):
    // expected-error @+1 {{'math.log' op has fastmath<fast> but in a special function's body only arith.divf, math.erf, math.exp, math.sin and math.cos may carry fastmath flags, and only afn}}
    %l = math.log %a fastmath<fast> : f32
    fusion.yield %l : f32
  }
  return %0 : f32
}

// -----

func.func @f64_input(%x: f64) -> f32 {
  // expected-error @+1 {{'fusion.special' op operand #0 must be variadic of 32-bit float, but got 'f64'}}
  %0 = "fusion.special"(%x) ({
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }) {function = "f"} : (f64) -> f32
  return %0 : f32
}
