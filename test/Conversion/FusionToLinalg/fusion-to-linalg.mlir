// RUN: fusion-opt %s --fusion-lower-to-linalg -split-input-file | FileCheck %s

// The GEMM sums the products in 16 interleaved partial sums (K padded with
// zeros to a multiple of 16), then adds the 16.
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[MJR:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[NJR:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG: #[[MNR:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[LANES:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[SUM:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[PX:.*]] = linalg.generic {indexing_maps = [#[[MN]]], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[INSIDE:.*]] = arith.cmpi ule, %[[K:.*]], %[[LAST:.*]] : index
// CHECK: %[[COLUMN:.*]] = arith.minui %[[K]], %[[LAST]] : index
// CHECK: %[[E:.*]] = tensor.extract %[[X]][%{{.*}}, %[[COLUMN]]]
// CHECK: arith.select %[[INSIDE]], %[[E]], %{{.*}} : f32
// CHECK: %[[LX:.*]] = tensor.expand_shape %[[PX]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 1, 16] : tensor<?x16xf32> into tensor<?x1x16xf32>
// CHECK: tensor.extract %[[W]]
// CHECK: %[[LW:.*]] = tensor.expand_shape %{{.*}} : tensor<4x16xf32> into tensor<4x1x16xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<?x4x16xf32>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {indexing_maps = [#[[MJR]], #[[NJR]], #[[MNR]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[LX]], %[[LW]] : {{.*}}) outs(%[[ZERO]] : tensor<?x4x16xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[WW:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[WW]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[LANES]], #[[SUM]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<?x4x16xf32>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[MN]], #[[N]], #[[MN]]], iterator_types = ["parallel", "parallel"]} ins(%[[ACC]], %[[B]] : {{.*}})
// CHECK: arith.addf
// CHECK: return %[[Y]]
// CHECK-NOT: fusion.
func.func @linear(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A K that is a multiple of the 16 lanes is taken as it is: no padding.
// CHECK-LABEL: func.func @linear_whole_lanes
// CHECK-SAME: (%[[X:.*]]: tensor<?x32xf32>, %[[W:.*]]: tensor<4x32xf32>)
// CHECK-NOT: tensor.extract
// CHECK: tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 2, 16] : tensor<?x32xf32> into tensor<?x2x16xf32>
// CHECK: tensor.expand_shape %[[W]] {{\[}}[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @linear_whole_lanes(%x: tensor<?x32xf32>, %w: tensor<4x32xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x32xf32>, tensor<4x32xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A weight stored [in_features, out_features] is read through its transpose.
// CHECK-LABEL: func.func @linear_in_out
// CHECK-SAME: (%[[X:.*]]: tensor<?x32xf32>, %[[W:.*]]: tensor<32x4xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<32x4xf32>) outs(%{{.*}} : tensor<4x32xf32>) permutation = [1, 0]
// CHECK: tensor.expand_shape %[[T]] {{\[}}[0], [1, 2]] output_shape [4, 2, 16] : tensor<4x32xf32> into tensor<4x2x16xf32>
// CHECK-NOT: fusion.
func.func @linear_in_out(%x: tensor<?x32xf32>, %w: tensor<32x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w weight_layout in_out : tensor<?x32xf32>, tensor<32x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Unfused half-precision ops compute in f32 and round their result.
// CHECK-LABEL: func.func @mul_scalar_bf16
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK: %[[M:.*]] = arith.mulf %[[WIDE]], %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @mul_scalar_bf16(%x: tensor<?x4xbf16>) -> tensor<?x4xbf16> {
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// -----

// CHECK-LABEL: func.func @leaky_relu
// CHECK: linalg.generic
// CHECK: %[[NEG:.*]] = arith.mulf %[[IN:.*]], %{{.*}} : f32
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[IN]], %{{.*}} : f32
// CHECK: arith.select %[[POS]], %[[IN]], %[[NEG]] : f32
func.func @leaky_relu(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.leaky_relu %x, negative_slope = 0.1 : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Training batch norm: column sums, mean, squared deviations, variance,
// normalization, and the running-stat updates with M / (M - 1).
// CHECK-LABEL: func.func @batch_norm_training
// CHECK: %[[M:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]]
// CHECK: arith.divf %{{.*}}, %[[M]]
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%{{.*}}, %[[MEAN]]
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[SQ]]
// CHECK: %[[INVSTD:.*]] = linalg.generic {{.*}} ins(%[[VAR]]
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]], %[[INVSTD]] :
// CHECK: %[[M1:.*]] = arith.subf %[[M]], %{{.*}} : f32
// CHECK: %[[BESSEL:.*]] = arith.divf %[[M]], %[[M1]] : f32
// CHECK: %[[RM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]] :
// CHECK: %[[RV:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[VAR]] :
// CHECK: arith.mulf %{{.*}}, %[[BESSEL]]
// CHECK: return %[[Y]], %[[RM]], %[[RV]]
func.func @batch_norm_training(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %y:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The batch statistics are the mean and inverse standard deviation that
// normalize, in f32 or rounded to bf16 (as PyTorch's CPU kernels return
// them).
// CHECK-LABEL: func.func @batch_norm_batch_stats
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]]
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[SQ]]
// CHECK: %[[INVSTD:.*]] = linalg.generic {{.*}} ins(%[[VAR]]
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MEAN]], %[[INVSTD]] :
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[Y]], %[[MEAN]], %[[INVSTD]]
// CHECK-LABEL: func.func @fused_batch_stats_bf16
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]]
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} ins(%[[SQ]]
// CHECK: %[[INVSTD:.*]] = linalg.generic {{.*}} ins(%[[VAR]]
// CHECK: %[[MEAN16:.*]] = linalg.generic {{.*}} ins(%[[MEAN]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK: %[[INVSTD16:.*]] = linalg.generic {{.*}} ins(%[[INVSTD]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK: return %{{.*}}, %[[MEAN16]], %[[INVSTD16]]
func.func @batch_norm_batch_stats(%x: tensor<?x4xbf16>) -> (tensor<?x4xbf16>, tensor<4xf32>, tensor<4xf32>) {
  %y:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x4xbf16>) -> (tensor<?x4xbf16>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xbf16>, tensor<4xf32>, tensor<4xf32>
}
func.func @fused_batch_stats_bf16(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>) -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %0:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1>
    : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> (tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>)
  return %0#0, %0#1, %0#2 : tensor<?x4xbf16>, tensor<4xbf16>, tensor<4xbf16>
}

// -----

// Inference uses the running statistics and computes none.
// CHECK-LABEL: func.func @batch_norm_inference
// CHECK-NOT: "reduction"
// CHECK: math.rsqrt
// CHECK: return
func.func @batch_norm_inference(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = fusion.batch_norm %x, <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// The GEMM rounds f32 operands to tf32 as the GPU kernels do (round to
// nearest, ties away; a NaN quiet); the epilogue applies alpha, the bias,
// then the cloned region.
// CHECK-LABEL: func.func @fused_linear_tf32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %{{.*}} : i32
// CHECK: %[[KEPT:.*]] = arith.andi %[[UP]], %{{.*}} : i32
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %[[KEPT]] : i32 to f32
// CHECK: %[[IS_NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[QUIET_NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: arith.select %[[IS_NAN]], %[[QUIET_NAN]], %[[ROUNDED]] : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: ^bb0(%[[SUM:.*]]: f32, %[[BIAS:.*]]: f32, %[[COL:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SCALED:.*]] = arith.mulf %[[SUM]], %{{.*}} : f32
// CHECK: %[[BIASED:.*]] = arith.addf %[[SCALED]], %[[BIAS]] : f32
// CHECK: %[[R:.*]] = arith.mulf %[[BIASED]], %[[COL]] : f32
// CHECK: linalg.yield %[[R]]
func.func @fused_linear_tf32(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w bias(%b) precision tf32 alpha 0.5 epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    %1 = arith.mulf %acc, %col : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// bf16 precision on f32 operands: round through bf16; the fused result of a
// bf16 op is rounded once, after the batch-norm stage.
// CHECK-LABEL: func.func @fused_linear_bf16_precision
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-LABEL: func.func @fused_bf16_batch_norm
// CHECK: math.rsqrt
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return
func.func @fused_linear_bf16_precision(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.fused_linear %x, %w precision bf16 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
func.func @fused_bf16_batch_norm(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<?x4xbf16> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// -----

// Ops of other dialects are left alone.
// CHECK-LABEL: func.func @other_ops
// CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<4xf32>
func.func @other_ops(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Intermediate results: one map of the epilogue per yielded value (the
// result's, then each intermediate's), each rounded to the element type.
// CHECK-LABEL: func.func @fused_linear_intermediates
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<?x4xf32>)
// CHECK: %[[T:.*]] = math.tanh
// CHECK-NEXT: linalg.yield %[[T]] : f32
// CHECK: %[[I:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<?x4xf32>)
// CHECK: %[[M:.*]] = arith.mulf
// CHECK-NEXT: math.tanh
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: %[[IB:.*]] = linalg.generic {{.*}} ins(%[[I]] : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4xbf16>)
// CHECK: arith.truncf
// CHECK: %[[EB:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4xbf16>)
// CHECK: arith.truncf
// CHECK: return %[[EB]], %[[IB]]
func.func @fused_linear_intermediates(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>)
    -> (tensor<?x4xbf16>, tensor<?x4xbf16>) {
  %y:2 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant 2.0 : f32
    %0 = arith.mulf %acc, %c : f32
    %1 = math.tanh %0 : f32
    fusion.yield %1, %0 : f32, f32
  } : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> (tensor<?x4xbf16>, tensor<?x4xbf16>)
  return %y#0, %y#1 : tensor<?x4xbf16>, tensor<?x4xbf16>
}
