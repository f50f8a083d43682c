// The host code's argument checks, workspace, copies and tensor maps
// round-trip.
// RUN: fusion-opt %s | fusion-opt | FileCheck %s

// CHECK-LABEL: llvm.func @host(
// CHECK: fusion_rt.check_size "batch" %{{.*}} at_least 2 : i32
// CHECK: fusion_rt.check_buffer "input #0" %{{.*}} bytes %{{.*}} stream(%{{.*}}) : i32
// CHECK: fusion_rt.alloc %{{.*}} into %{{.*}} stream(%{{.*}}) : i32
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <bf16> %{{.*}} rows %{{.*}} columns %{{.*}} box(%{{.*}}, 64) : i32
// CHECK: fusion_rt.encode_tensor_map %{{.*}}, <f32> %{{.*}} rows %{{.*}} columns %{{.*}} box(%{{.*}}, 8) : i32
// CHECK: fusion_rt.copy %{{.*}} from %{{.*}} to %{{.*}} stream(%{{.*}}) : i32
// CHECK: fusion_rt.free %{{.*}} stream(%{{.*}}) : i32
llvm.func @host(%stream: !llvm.ptr, %rows: i64, %x: !llvm.ptr, %out: !llvm.ptr,
                %slot: !llvm.ptr, %map: !llvm.ptr, %box: i32) -> i32 {
  %0 = fusion_rt.check_size "batch" %rows at_least 2 : i32
  %1 = fusion_rt.check_buffer "input #0" %x bytes %rows stream(%stream) : i32
  %2 = fusion_rt.alloc %rows into %slot stream(%stream) : i32
  %3 = fusion_rt.encode_tensor_map %map, <bf16> %x rows %rows columns %rows box(%box, 64) : i32
  %4 = fusion_rt.encode_tensor_map %map, <f32> %x rows %rows columns %rows box(%box, 8) : i32
  %5 = fusion_rt.copy %rows from %x to %out stream(%stream) : i32
  %6 = fusion_rt.free %x stream(%stream) : i32
  llvm.return %6 : i32
}
