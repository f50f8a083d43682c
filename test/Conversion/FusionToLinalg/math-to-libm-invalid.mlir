// fusion-math-to-libm refuses a special function whose C library name the
// module holds as something else.
// RUN: fusion-opt %s --fusion-math-to-libm -split-input-file -verify-diagnostics

func.func @j0f(%a: f64) -> f64 {
  return %a : f64
}

func.func @calls(%a: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls the C library's 'j0f', but the module's symbol of that name is not its f32 function of one f32}}
  %0 = fusion.special "bessel_j0"(%a) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
  return %0 : f32
}

// -----

// The C library's function declared before with its type is called, not
// declared again (a second declaration would be a redefinition error).
func.func private @y0f(f32) -> f32

func.func @declared(%a: f32) -> f32 {
  %0 = fusion.special "bessel_y0"(%a) libdevice "__nv_y0f" libm "y0f" : (f32) -> f32
  return %0 : f32
}
