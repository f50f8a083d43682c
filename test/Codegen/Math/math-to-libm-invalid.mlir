// fusion-math-to-libm refuses a special function whose C library name the
// module holds as something else: a function of other types, one of
// another dialect, a definition.
// RUN: fusion-opt %s --fusion-math-to-libm -split-input-file -verify-diagnostics

func.func @j0f(%a: f64) -> f64 {
  return %a : f64
}

func.func @calls(%a: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls the C library's 'j0f', but the module's symbol of that name is not a declaration of its f32 function of one f32}}
  %0 = fusion.special "bessel_j0"(%a) libdevice "__nv_j0f" libm "j0f" : (f32) -> f32
  return %0 : f32
}

// -----

llvm.func @j1f(f32) -> f32

func.func @llvm_symbol(%a: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls the C library's 'j1f', but the module's symbol of that name is not a declaration}}
  %0 = fusion.special "bessel_j1"(%a) libdevice "__nv_j1f" libm "j1f" : (f32) -> f32
  return %0 : f32
}

// -----

func.func @lgammaf(%a: f32) -> f32 {
  return %a : f32
}

func.func @defined(%a: f32) -> f32 {
  // expected-error @+1 {{'fusion.special' op calls the C library's 'lgammaf', but the module's symbol of that name is not a declaration}}
  %0 = fusion.special "lgamma"(%a) libdevice "__nv_lgammaf" libm "lgammaf" : (f32) -> f32
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
