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
    // expected-error @+1 {{'math.log' op has fastmath<fast> but in a special function's body only arith.divf, math.erf, math.exp, math.sin, math.cos and math.tanh may carry fastmath flags, and only afn}}
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

// -----

func.func @not_libm(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op C library function 'erfinvf' of 'erfinv' is not one of its f32 special functions (j0f, j1f, lgammaf, tgammaf, y0f, y1f)}}
  %0 = fusion.special "erfinv"(%x) libdevice "__nv_erfinvf" libm "erfinvf" : (f32) -> f32
  return %0 : f32
}

// -----

func.func @libm_without_libdevice(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls the C library's 'j0f' on the CPU but not libdevice's '__nv_j0f' on GPUs}}
  %0 = fusion.special "bessel_j0"(%x) libm "j0f" : (f32) -> f32
  return %0 : f32
}

// -----

func.func @libm_of_another_function(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls the C library's 'j0f' on the CPU but not libdevice's '__nv_j0f' on GPUs}}
  %0 = fusion.special "bessel_j0"(%x) libdevice "__nv_j1f" libm "j0f" : (f32) -> f32
  return %0 : f32
}

// -----

func.func @libm_and_formula(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op has a formula, which no target computes where libdevice's and the C library's 'lgammaf' are named}}
  %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" libm "lgammaf" : (f32) -> f32 {
  ^bb0(%a: f32):
    fusion.yield %a : f32
  }
  return %0 : f32
}

// -----

func.func @no_formula(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op 'erfinv' has no formula, and names no C library function for the CPU}}
  %0 = fusion.special "erfinv"(%x) libdevice "__nv_erfinvf" : (f32) -> f32
  return %0 : f32
}

// -----

func.func @libm_arity(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls libdevice's '__nv_y0f' with 2 inputs, but libdevice's special functions take one}}
  %0 = fusion.special "bessel_y0"(%x, %x) libdevice "__nv_y0f" libm "y0f" : (f32, f32) -> f32
  return %0 : f32
}

// -----

func.func @nothing_computes_it(%x: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op 'mystery' has no formula, and names no C library function for the CPU}}
  %0 = fusion.special "mystery"(%x) : (f32) -> f32
  return %0 : f32
}
