// Every rule of the host code's checks and tensor maps.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics

llvm.func @host(%n: i64) -> i32 {
  // expected-error @+1 {{'fusion_rt.check_size' op must name the size it checks}}
  %0 = fusion_rt.check_size "" %n at_least 1 : i32
  llvm.return %0 : i32
}

// -----

llvm.func @host(%n: i64) -> i32 {
  // expected-error @+1 {{'fusion_rt.check_size' op attribute 'minimum' failed to satisfy constraint}}
  %0 = fusion_rt.check_size "batch" %n at_least -1 : i32
  llvm.return %0 : i32
}

// -----

llvm.func @host(%s: !llvm.ptr, %p: !llvm.ptr, %n: i64) -> i32 {
  // expected-error @+1 {{'fusion_rt.check_buffer' op must name the buffer it checks}}
  %0 = fusion_rt.check_buffer "" %p bytes %n stream(%s) : i32
  llvm.return %0 : i32
}

// -----

// A box row past the 128 bytes of the swizzle.
llvm.func @host(%map: !llvm.ptr, %p: !llvm.ptr, %n: i64, %box: i32) -> i32 {
  // expected-error @+1 {{'fusion_rt.encode_tensor_map' op box rows of 64 elements (256 bytes) are not 1 to 8 whole 16-byte chunks of the 128-byte swizzle}}
  %0 = fusion_rt.encode_tensor_map %map, <f32> %p rows %n columns %n box(%box, 64) : i32
  llvm.return %0 : i32
}

// -----

// A box row of a part of a 16-byte chunk.
llvm.func @host(%map: !llvm.ptr, %p: !llvm.ptr, %n: i64, %box: i32) -> i32 {
  // expected-error @+1 {{'fusion_rt.encode_tensor_map' op box rows of 4 elements (8 bytes) are not 1 to 8 whole 16-byte chunks of the 128-byte swizzle}}
  %0 = fusion_rt.encode_tensor_map %map, <bf16> %p rows %n columns %n box(%box, 4) : i32
  llvm.return %0 : i32
}

// -----

llvm.func @host(%map: !llvm.ptr, %p: !llvm.ptr, %n: i64, %box: i32) -> i32 {
  // expected-error @+1 {{'fusion_rt.encode_tensor_map' op box rows of 0 elements (0 bytes) are not 1 to 8 whole 16-byte chunks of the 128-byte swizzle}}
  %0 = fusion_rt.encode_tensor_map %map, <f16> %p rows %n columns %n box(%box, 0) : i32
  llvm.return %0 : i32
}
