// The PTX of the Hopper kernels (backend 3): sm_90a, tensor maps as 128-byte
// grid-constant parameters, the producer's TMA loads completing on
// mbarriers, the consumers' waits and wgmmas, setmaxnreg, named consumer
// barriers, no local memory; the output stored from the accumulators
// in 16-byte chunks (traded within each quad of lanes), the ring left to
// the next tile's loads.
// REQUIRES: cuda-toolkit
// RUN: fusion-compile %s --emit=ptx --target=sm_90 --strategy=wgmma -o - | FileCheck %s --implicit-check-not="bra.uni DONE"
// RUN: fusion-compile %S/../../../examples/linear_scale_batch_norm.mlir --emit=ptx --target=sm_90 --strategy=wgmma --precision=fp32 -o - | FileCheck %s --check-prefix=FP32
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir --emit=ptx --target=sm_90 --strategy=wgmma --precision=tf32 -o - | FileCheck %s --check-prefix=TF32
// The whole library links: the entry point and the runtime's tensor-map
// encoder it calls.
// RUN: rm -rf %t && mkdir -p %t && fusion-compile %s --target=sm_90 --strategy=wgmma -o %t/m.so
// RUN: nm %t/m.so | FileCheck %s --check-prefix=LIBRARY
// LIBRARY-DAG: T __fusion_rt_tensor_map
// LIBRARY-DAG: T bf16

// CHECK: .target sm_90a
// Dynamic shared memory is PTX's extern array, which follows every static
// shared variable (the mbarriers), not a one-byte static variable among
// them (fusion-extern-dynamic-shared-memory).
// CHECK: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// CHECK-NOT: .shared .align 16 .b8 __dynamic_shmem__0;
// CHECK: .entry bf16_0_gemm(
// CHECK-NEXT: .param .align 64 .b8 bf16_0_gemm_param_0[128],
// CHECK-NEXT: .param .align 64 .b8 bf16_0_gemm_param_1[128],
// CHECK: .maxntid 384, 1, 1
// CHECK-NEXT: .minnctapersm 1
// CHECK-NOT: .local
// The set-up (barriers, tensor-map prefetches) overlaps the stream's
// previous kernel; then every thread waits for it, and only then the
// producer's loads and the consumers' loads and stores begin. No early
// signal to the next kernel.
// CHECK: mbarrier.init.shared.b64
// CHECK: prefetch.tensormap
// CHECK-NOT: cp.async.bulk.tensor
// CHECK-NOT: ld.global
// CHECK-NOT: st.global
// CHECK: bar.sync 0;
// CHECK-NEXT: griddepcontrol.wait;
// CHECK-NOT: griddepcontrol.launch_dependents
// The producer's and the consumers' code, in whatever block order LLVM
// chose.
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-DAG: mbarrier.arrive.expect_tx.shared.b64
// CHECK-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// A barrier wait is a loop on try_wait's predicate, left by a branch
// that ptxas treats as divergent (not an inline `@P bra.uni`, which asserts
// that the warp's lanes leave together).
// CHECK-DAG: mbarrier.try_wait.parity.shared.b64 [[DONE:%p[0-9]+]]
// CHECK-DAG: not.pred [[PENDING:%p[0-9]+]], [[DONE]];
// CHECK-DAG: @[[PENDING]] bra $L__BB
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK-DAG: bar.sync 1, 256;
// CHECK-DAG: wgmma.fence.sync.aligned;
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-DAG: wgmma.commit_group.sync.aligned;
// CHECK-DAG: wgmma.wait_group.sync.aligned 1;
// CHECK-DAG: mbarrier.arrive.shared.b64
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: st.global.v4.b32
func.func @bf16(%x: tensor<?x256xbf16>, %w: tensor<512x256xbf16>, %b: tensor<512xbf16>) -> tensor<?x512xbf16> {
  %0 = fusion.linear %x, %w, %b : tensor<?x256xbf16>, tensor<512x256xbf16>, tensor<512xbf16> -> tensor<?x512xbf16>
  return %0 : tensor<?x512xbf16>
}

// 3xTF32: the splitters' proxy fence before the wgmmas read w's
// remainders, the K slice from zero (scale-d false), k8 tf32 wgmmas of
// m64n128, and a wait for them (the loop's latch may be laid out before its
// body); the batch norm's column moments summed across the lanes holding a
// column (butterfly distances 16, 8, 4) and merged after consumer barriers.
// FP32: .entry linear_scale_batch_norm_0_gemm(
// FP32-DAG: fence.proxy.async.shared::cta;
// FP32-DAG: bar.sync 1, 256;
// FP32-DAG: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// FP32-DAG: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// FP32-DAG: wgmma.wait_group.sync.aligned 0;
// FP32-DAG: setp.ne.b32 p, 0, 0;
// FP32-DAG: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32

// TF32: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
