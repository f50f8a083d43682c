// Every verifier rule, one case each.
// RUN: fusion-opt %s -split-input-file -verify-diagnostics

func.func @linear_in_features(%x: tensor<?x1024xf32>, %w: tensor<256x512xf32>) {
  // expected-error @+1 {{weight in_features 512 does not match input K 1024}}
  %0 = fusion.linear %x, %w : tensor<?x1024xf32>, tensor<256x512xf32> -> tensor<?x256xf32>
  return
}

// -----

// A weight stored [in_features, out_features]: its first dimension is K.
func.func @linear_in_out_in_features(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{weight in_features 4 (stored [in_features, out_features]) does not match input K 8}}
  %0 = fusion.linear %x, %w weight_layout in_out : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @linear_in_out_result_columns(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{result has 8 columns but the weight has out_features 4}}
  %0 = fusion.linear %x, %w weight_layout in_out : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x8xf32>
  return
}

// -----

func.func @linear_unknown_weight_layout(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>) {
  // expected-error @+1 {{unknown weight layout 'k_n' (expected out_in or in_out)}}
  %0 = fusion.linear %x, %w weight_layout k_n : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_dynamic_k(%x: tensor<?x?xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{input 'tensor<?x?xf32>' must have a static column dimension}}
  %0 = fusion.linear %x, %w : tensor<?x?xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_dynamic_weight(%x: tensor<?x8xf32>, %w: tensor<?x8xf32>) {
  // expected-error @+1 {{weight 'tensor<?x8xf32>' must have a static shape}}
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_weight_element(%x: tensor<?x8xf32>, %w: tensor<4x8xbf16>) {
  // expected-error @+1 {{weight element type 'bf16' does not match the input element type 'f32'}}
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xbf16> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_bias_size(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{bias has 5 elements but there are 4 columns}}
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<5xf32> -> tensor<?x4xf32>
  return
}

// -----

// A bias is no column operand: one value for all columns is refused.
func.func @linear_bias_single(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{bias has 1 elements but there are 4 columns}}
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<1xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_bias_element(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{bias element type 'f16' does not match the input element type 'f32'}}
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf16> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_bias_dynamic(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<?xf32>) {
  // expected-error @+1 {{bias has ? elements but there are 4 columns}}
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<?xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_result_element(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{result element type 'f16' does not match the input element type 'f32'}}
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf16>
  return
}

// -----

func.func @linear_result_rows(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{result has 3 rows but the input has ?}}
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @linear_result_columns(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{result has 5 columns but the weight has out_features 4}}
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x5xf32>
  return
}

// -----

func.func @linear_rank(%x: tensor<2x?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = fusion.linear %x, %w : tensor<2x?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @linear_element_type(%x: tensor<?x8xf64>, %w: tensor<4x8xf64>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = fusion.linear %x, %w : tensor<?x8xf64>, tensor<4x8xf64> -> tensor<?x4xf64>
  return
}

// -----

func.func @mul_scalar_not_finite(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{multiplier must be finite, got 0x7FF0000000000000 : f64}}
  %0 = fusion.mul_scalar %x, 0x7FF0000000000000 : tensor<?x4xf32>
  return
}

// -----

func.func @mul_scalar_dynamic_columns(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{input 'tensor<?x?xf32>' must have a static column dimension}}
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x?xf32>
  return
}

// -----

func.func @mul_scale_size(%x: tensor<?x4xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{scale has 8 elements but there are 4 columns (or one value for all)}}
  %0 = fusion.mul %x, %s : tensor<?x4xf32>, tensor<8xf32>
  return
}

// -----

func.func @mul_scale_element(%x: tensor<?x4xf32>, %s: tensor<4xbf16>) {
  // expected-error @+1 {{scale element type 'bf16' does not match the input element type 'f32'}}
  %0 = fusion.mul %x, %s : tensor<?x4xf32>, tensor<4xbf16>
  return
}

// -----

func.func @mul_dynamic_columns(%x: tensor<?x?xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{input 'tensor<?x?xf32>' must have a static column dimension}}
  %0 = fusion.mul %x, %s : tensor<?x?xf32>, tensor<4xf32>
  return
}

// -----

func.func @leaky_relu_not_finite(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{negative_slope must be finite, got 0x7FF8000000000000 : f64}}
  %0 = fusion.leaky_relu %x, negative_slope = 0x7FF8000000000000 : tensor<?x4xf32>
  return
}

// -----

func.func @leaky_relu_dynamic_columns(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{input 'tensor<?x?xf32>' must have a static column dimension}}
  %0 = fusion.leaky_relu %x, negative_slope = 0.1 : tensor<?x?xf32>
  return
}

// -----

func.func @batch_norm_dynamic_columns(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{input 'tensor<?x?xf32>' must have a static column dimension}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @batch_norm_result_type(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result type 'tensor<8x4xf32>' does not match the input type 'tensor<?x4xf32>'}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @batch_norm_weight_size(%x: tensor<?x4xf32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{weight has 3 elements but there are 4 columns}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> weight(%g) : (tensor<?x4xf32>, tensor<3xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_bias_element(%x: tensor<?x4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{bias element type 'f16' does not match the input element type 'f32'}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> bias(%b) : (tensor<?x4xf32>, tensor<4xf16>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_running_var_size(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<2xf32>) {
  // expected-error @+1 {{running_var has 2 elements but there are 4 columns}}
  %0 = fusion.batch_norm %x, <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) : (tensor<?x4xf32>, tensor<4xf32>, tensor<2xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_mean_without_var(%x: tensor<?x4xf32>, %rm: tensor<4xf32>) {
  // The pretty form cannot express this; the generic form can.
  // expected-error @+1 {{running_mean and running_var must be given together}}
  %0 = "fusion.batch_norm"(%x, %rm) <{config = #fusion.batch_norm<inference, epsilon = 1.0e-05, momentum = 0.1>, operandSegmentSizes = array<i32: 1, 0, 0, 1, 0>, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_inference_needs_stats(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{batch_norm in inference mode requires running statistics}}
  %0 = fusion.batch_norm %x, <inference, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_single_row(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{batch_norm in training mode needs more than one row per column, got M = 1}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @batch_norm_missing_updates(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  // expected-error @+1 {{expected 2 updated running statistics results (training mode with running stats), got 0}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_extra_updates(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  // The pretty form takes an inference op's vectors for batch statistics;
  // the generic form can name them updates.
  // expected-error @+1 {{expected 0 updated running statistics results (no running stats to update), got 2}}
  %0:3 = "fusion.batch_norm"(%x, %rm, %rv) <{config = #fusion.batch_norm<inference, epsilon = 1.0e-05, momentum = 0.1>, operandSegmentSizes = array<i32: 1, 0, 0, 1, 1>, resultSegmentSizes = array<i32: 1, 2, 0>}> : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @batch_norm_update_type(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  // expected-error @+1 {{updated running statistic type 'tensor<4xf16>' does not match the running statistic type 'tensor<4xf32>'}}
  %0:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf16>)
  return
}

// -----

func.func @batch_norm_inference_batch_stats(%x: tensor<?x4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  // expected-error @+1 {{batch statistics require training mode}}
  %0:3 = fusion.batch_norm %x, <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @fused_linear_inference_batch_stats(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  // An inference stage's vectors are batch statistics, as batch_norm's.
  // expected-error @+1 {{batch statistics require training mode}}
  %0:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @batch_norm_one_batch_stat(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{expected 2 batch statistics results (mean and inverse standard deviation), got 1}}
  %0:2 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @batch_norm_batch_stats_type(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{batch statistics element type 'f16' is neither f32 nor the input element type 'f32'}}
  %0:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf16>, tensor<4xf16>)
  return
}

// -----

func.func @batch_norm_batch_stats_mixed_types(%x: tensor<?x4xbf16>) {
  // expected-error @+1 {{batch mean type 'f32' and inverse standard deviation type 'bf16' differ}}
  %0:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xbf16>) -> (tensor<?x4xbf16>, tensor<4xf32>, tensor<4xbf16>)
  return
}

// -----

func.func @batch_norm_batch_stats_length(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{batch statistic #0 has 3 elements but there are 4 columns}}
  %0:3 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @batch_norm_negative_epsilon(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{batch_norm epsilon must be finite and >= 0, got -1.000000e-05}}
  %0 = fusion.batch_norm %x, <training, epsilon = -1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @batch_norm_momentum_not_finite(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{batch_norm momentum must be finite, got INF}}
  %0 = fusion.batch_norm %x, <training, epsilon = 1.0e-05, momentum = 0x7FF0000000000000> : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_in_features(%x: tensor<?x16xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{weight in_features 8 does not match input K 16}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x16xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_epilogue_operand(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{epilogue operand #0 has 8 elements but there are 4 columns (or one value for all)}}
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32, %col: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_precision(%x: tensor<?x8xf16>, %w: tensor<4x8xf16>) {
  // expected-error @+1 {{precision bf16 cannot hold 'f16' operands exactly}}
  %0 = fusion.fused_linear %x, %w precision bf16 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf16>, tensor<4x8xf16>) -> tensor<?x4xf16>
  return
}

// -----

func.func @fused_linear_bn_operands_without_stage(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{batch-norm operands require a batch_norm stage}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } bn_weight(%g) : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_updates_without_stage(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{statistics results require a training batch_norm stage}}
  %0:3 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @fused_linear_bn_stage_rules(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{batch_norm in inference mode requires running statistics}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_bn_weight_size(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{bn_weight has 8 elements but there are 4 columns}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> bn_weight(%g) : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_region_arity(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{epilogue has 1 arguments but expects 2 (the accumulator, one per epilogue operand, one per row operand and the dual accumulator)}}
  %0 = fusion.fused_linear %x, %w epilogue(%s) {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_region_arg_type(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>) {
  // expected-error @+1 {{epilogue argument #0 has type 'bf16' but epilogue arguments are f32}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: bf16):
    %c = arith.constant 1.0 : f32
    fusion.yield %c : f32
  } : (tensor<?x8xbf16>, tensor<4x8xbf16>) -> tensor<?x4xbf16>
  return
}

// -----

func.func @fused_linear_region_reciprocal_without_nans(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %one = arith.constant 1.0 : f32
    // expected-error @+1 {{'arith.divf' op has fastmath<nnan,afn> but in a fused_linear epilogue only arith.divf, math.erf, math.exp, math.sin, math.cos and math.tanh may carry fastmath flags, and only afn}}
    %r = arith.divf %one, %acc fastmath<nnan,afn> : f32
    fusion.yield %r : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_region_quotient_with_contraction(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %two = arith.constant 2.0 : f32
    // expected-error @+1 {{'arith.divf' op has fastmath<contract> but in a fused_linear epilogue only arith.divf, math.erf, math.exp, math.sin, math.cos and math.tanh may carry fastmath flags, and only afn}}
    %q = arith.divf %two, %acc fastmath<contract> : f32
    fusion.yield %q : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @elementwise_approximate_log(%y: tensor<?x4xf32>) {
  %0 = fusion.elementwise %y : tensor<?x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.log' op has fastmath<afn> but in an elementwise body only arith.divf, math.erf, math.exp, math.sin, math.cos and math.tanh may carry fastmath flags, and only afn}}
    %e = math.log %v fastmath<afn> : f32
    fusion.yield %e : f32
  }
  return
}

// -----

// sin and cos may be approximate (sin.approx, cos.approx), tan may not:
// it has no approximate form without libdevice's range reduction.
func.func @elementwise_approximate_tangent(%y: tensor<?x4xbf16>) {
  %0 = fusion.elementwise %y : tensor<?x4xbf16> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.tan' op has fastmath<afn> but in an elementwise body only arith.divf, math.erf, math.exp, math.sin, math.cos and math.tanh may carry fastmath flags, and only afn}}
    %e = math.tan %v fastmath<afn> : f32
    fusion.yield %e : f32
  }
  return
}

// -----

func.func @elementwise_erf_without_infinities(%y: tensor<?x4xbf16>) {
  %0 = fusion.elementwise %y : tensor<?x4xbf16> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.erf' op has fastmath<ninf,afn> but in an elementwise body only arith.divf, math.erf, math.exp, math.sin, math.cos and math.tanh may carry fastmath flags, and only afn}}
    %e = math.erf %v fastmath<ninf,afn> : f32
    fusion.yield %e : f32
  }
  return
}

// -----

func.func @fused_linear_region_foreign_op(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'ub.poison' op is not allowed in a fused_linear epilogue (allowed: arith.constant, addf}}
    %p = ub.poison : f32
    fusion.yield %p : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_region_vector_op(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'arith.constant' op result #0 has type 'vector<2xf32>' but fused_linear epilogue values are f32 (i1 for conditions)}}
    %v = arith.constant dense<1.0> : vector<2xf32>
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

// Epilogue ops come from an allow-list (math.round, halfway cases away from
// zero, is not PyTorch's round).
func.func @fused_linear_region_round(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'math.round' op is not allowed in a fused_linear epilogue}}
    %e = math.round %acc : f32
    fusion.yield %e : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

// A 16-bit value is only extended back to f32: no other op computes on it.
func.func @fused_linear_region_bf16_arithmetic(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'arith.truncf' op is read by an op other than arith.extf but in a fused_linear epilogue a 16-bit value is only extended back to f32}}
    %a = arith.truncf %acc : f32 to bf16
    %b = arith.addf %a, %a : bf16
    %c = arith.extf %b : bf16 to f32
    fusion.yield %c : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// Rounding is to nearest, ties to even, as storing a 16-bit value.
func.func @fused_linear_region_truncf_rounding_mode(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'arith.truncf' op has a rounding mode but in a fused_linear epilogue arith.truncf rounds to nearest, ties to even}}
    %a = arith.truncf %acc toward_zero : f32 to bf16
    %c = arith.extf %a : bf16 to f32
    fusion.yield %c : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// arith.extf only undoes an arith.truncf.
func.func @elementwise_extf_of_f32(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fusion.elementwise %x : tensor<?x8xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'arith.extf' op must extend the result of an arith.truncf to f32 in an elementwise body}}
    %b = arith.extf %a : f32 to f64
    %c = arith.truncf %b : f64 to f32
    fusion.yield %c : f32
  }
  return %0 : tensor<?x8xf32>
}

// -----

// shared/reliability/epilogue-f8-truncf.mlir: aborted the GPU lowering.
func.func @fused_linear_region_f8_truncf(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'arith.truncf' op rounds 'f32' to 'f8E4M3FN' but in a fused_linear epilogue arith.truncf rounds f32 to bf16 or f16}}
    %a = arith.truncf %acc : f32 to f8E4M3FN
    %b = arith.extf %a : f8E4M3FN to f32
    fusion.yield %b : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// shared/reliability/gpu-epilogue-i128.mlir: aborted NVPTX.
func.func @fused_linear_region_i128(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?x16xf32> {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'arith.fptosi' op is not allowed in a fused_linear epilogue}}
    %i = arith.fptosi %acc : f32 to i128
    %r = arith.sitofp %i : i128 to f32
    fusion.yield %r : f32
  } : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %0 : tensor<?x16xf32>
}

// -----

// An allowed op on a type other than f32 or i1.
func.func @fused_linear_region_i128_constant(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'arith.constant' op result #0 has type 'i128' but fused_linear epilogue values are f32 (i1 for conditions)}}
    %c = arith.constant 1 : i128
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_region_terminator(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{epilogue must end with fusion.yield}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    llvm.unreachable
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_captures(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %s: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{using value defined outside the region}}
    %1 = arith.mulf %acc, %s : f32
    fusion.yield %1 : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @yield_type(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    %c = arith.constant 1 : i32
    // expected-error @+1 {{operand #0 must be variadic of 32-bit float}}
    "fusion.yield"(%c) : (i32) -> ()
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @yield_count_fused_linear(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  %0:2 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{yields 1 values but its 'fusion.fused_linear' expects 2 (the result's, then one per intermediate result)}}
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @yield_count_elementwise(%y: tensor<?x4xf32>) {
  %0 = fusion.elementwise %y : tensor<?x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{yields 2 values but its 'fusion.elementwise' expects 1}}
    fusion.yield %v, %v : f32, f32
  }
  return
}

// -----

func.func @yield_none(%y: tensor<?x4xf32>) {
  %0 = fusion.elementwise %y : tensor<?x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{yields 0 values but its 'fusion.elementwise' expects 1}}
    "fusion.yield"() : () -> ()
  }
  return
}

// -----

func.func @intermediate_type(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{intermediate result #0 has type 'tensor<?x3xf32>' but must have the result's type 'tensor<?x4xf32>'}}
  %0:2 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc, %acc : f32, f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x3xf32>)
  return
}

// -----

func.func @intermediate_after_stats(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  %0:4 = fusion.fused_linear %x, %w epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
    // expected-error @+1 {{intermediate results (matrices) come before the statistics}}
    : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x4xf32>)
  return
}

// -----

func.func @yield_outside(%v: f32) {
  // expected-error @+1 {{expects parent op to be one of 'fusion.fused_linear, fusion.elementwise, fusion.reduce, fusion.special'}}
  fusion.yield %v : f32
}

// -----

func.func @fused_linear_alpha(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{alpha must be finite, got 0xFFF0000000000000 : f64}}
  %0 = fusion.fused_linear %x, %w alpha 0xFFF0000000000000 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_linear_unknown_precision(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown precision 'fp64' (expected fp32, tf32, bf16 or f16)}}
  %0 = fusion.fused_linear %x, %w precision fp64 epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @relu_vector(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = fusion.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @elementwise_region_arity(%x: tensor<?x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{body has 1 arguments but expects 2 (the input element, one per column operand and one per row operand)}}
  %0 = fusion.elementwise %x columns(%s : tensor<4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @elementwise_region_arg_type(%x: tensor<?x4xf16>, %s: tensor<4xf16>) {
  // expected-error @+1 {{body argument #1 has type 'f16' but body arguments are f32}}
  %0 = fusion.elementwise %x columns(%s : tensor<4xf16>) : tensor<?x4xf16> {
  ^bb0(%v: f32, %c: f16):
    fusion.yield %v : f32
  }
  return
}

// -----

// A column operand of one element of another type is refused as others are.
func.func @elementwise_single_value_element(%x: tensor<?x4xf32>, %s: tensor<1xbf16>) {
  // expected-error @+1 {{column operand #0 element type 'bf16' does not match the input element type 'f32'}}
  %0 = fusion.elementwise %x columns(%s : tensor<1xbf16>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %c: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @elementwise_column_length(%x: tensor<?x4xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{column operand #0 has 8 elements but there are 4 columns (or one value for all)}}
  %0 = fusion.elementwise %x columns(%s : tensor<8xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %c: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @elementwise_column_element_type(%x: tensor<?x4xf32>, %s: tensor<4xbf16>) {
  // expected-error @+1 {{column operand #0 element type 'bf16' does not match the input element type 'f32'}}
  %0 = fusion.elementwise %x columns(%s : tensor<4xbf16>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %c: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @elementwise_dynamic_columns(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{input 'tensor<?x?xf32>' must have a static column dimension}}
  %0 = fusion.elementwise %x : tensor<?x?xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @elementwise_disallowed_op(%x: tensor<?x4xf32>) {
  %0 = fusion.elementwise %x : tensor<?x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.round' op is not allowed in an elementwise body (allowed: arith.constant, addf}}
    %e = math.round %v : f32
    fusion.yield %e : f32
  }
  return
}

// -----

func.func @elementwise_result_type(%x: tensor<?x4xf32>) {
  %0 = fusion.elementwise %x : tensor<?x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'arith.constant' op result #0 has type 'f64' but elementwise body values are f32 (i1 for conditions)}}
    %c = arith.constant 1.0 : f64
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @elementwise_captures(%x: tensor<?x4xf32>, %k: f32) {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = fusion.elementwise %x : tensor<?x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{using value defined outside the region}}
    %m = arith.mulf %v, %k : f32
    fusion.yield %m : f32
  }
  return
}

// -----

func.func @row_operand_element_type(%x: tensor<?x4xf32>, %r: tensor<?x1xbf16>) {
  // expected-error @+1 {{'fusion.elementwise' op row operand #0 element type 'bf16' does not match the input element type 'f32'}}
  %0 = fusion.elementwise %x rows(%r : tensor<?x1xbf16>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %w: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @row_operand_rows(%x: tensor<?x4xf32>, %r: tensor<3x1xf32>) {
  // expected-error @+1 {{'fusion.elementwise' op row operand #0 has 3 rows but the input has ?}}
  %0 = fusion.elementwise %x rows(%r : tensor<3x1xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %w: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @row_operand_groups(%x: tensor<?x4xf32>, %r: tensor<?x3xf32>) {
  // expected-error @+1 {{'fusion.elementwise' op row operand #0 has 3 columns, which do not divide the input's 4 into groups}}
  %0 = fusion.elementwise %x rows(%r : tensor<?x3xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %w: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @row_operand_missing_argument(%x: tensor<?x4xf32>, %r: tensor<?x1xf32>) {
  // expected-error @+1 {{'fusion.elementwise' op body has 1 arguments but expects 2 (the input element, one per column operand and one per row operand)}}
  %0 = fusion.elementwise %x rows(%r : tensor<?x1xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @reduce_groups(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{'fusion.reduce' op result has 4 columns, which do not divide the input's 6 into groups}}
  %0 = fusion.reduce sum %x : tensor<?x6xf32> -> tensor<?x4xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @reduce_result_rows(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{'fusion.reduce' op result has 2 rows but the input has ?}}
  %0 = fusion.reduce max %x : tensor<?x6xf32> -> tensor<2x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @reduce_result_element_type(%x: tensor<?x6xbf16>) {
  // expected-error @+1 {{'fusion.reduce' op result element type 'f32' does not match the input element type 'bf16'}}
  %0 = fusion.reduce max %x : tensor<?x6xbf16> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @reduce_map_arguments(%x: tensor<?x6xf32>, %c: tensor<6xf32>) {
  // expected-error @+1 {{'fusion.reduce' op map has 1 arguments but expects 2 (the input element, one per column operand and one per row operand)}}
  %0 = fusion.reduce sum %x columns(%c : tensor<6xf32>) : tensor<?x6xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @reduce_map_column_operand(%x: tensor<?x6xf32>, %c: tensor<5xf32>) {
  // expected-error @+1 {{'fusion.reduce' op column operand #0 has 5 elements but there are 6 columns (or one value for all)}}
  %0 = fusion.reduce sum %x columns(%c : tensor<5xf32>) : tensor<?x6xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32, %w: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @reduce_map_ops(%x: tensor<?x6xf32>) {
  %0 = fusion.reduce sum %x : tensor<?x6xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.round' op is not allowed in a reduction map}}
    %e = math.round %v : f32
    fusion.yield %e : f32
  }
  return
}

// -----

func.func @reduce_map_f64(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{'fusion.reduce' op map argument #0 has type 'f64' but map arguments are f32}}
  %0 = fusion.reduce sum %x : tensor<?x6xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f64):
    %c = arith.constant 1.0 : f32
    fusion.yield %c : f32
  }
  return
}

// -----

func.func @reduce_kind(%x: tensor<?x6xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, max, min]}}
  %0 = fusion.reduce prod %x : tensor<?x6xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  return
}

// -----

func.func @fused_rows_groups(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %r: tensor<?x3xf32>) {
  // expected-error @+1 {{'fusion.fused_linear' op row operand #0 has 3 columns, which do not divide the input's 4 into groups}}
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %v: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<?x3xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_rows_arguments(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %r: tensor<?x4xf32>) {
  // expected-error @+1 {{'fusion.fused_linear' op epilogue has 1 arguments but expects 2 (the accumulator, one per epilogue operand, one per row operand and the dual accumulator)}}
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @fused_rows_batch_norm(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %r: tensor<?x4xf32>) {
  // expected-error @+1 {{'fusion.fused_linear' op a batch_norm stage needs an epilogue without row operands}}
  %0 = fusion.fused_linear %x, %w epilogue rows(%r) {
  ^bb0(%acc: f32, %v: f32):
    fusion.yield %acc : f32
  } batch_norm <training, epsilon = 1.0e-05, momentum = 0.1>
    : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

// shared/reliability/zero-features-elementwise.mlir: elementwise ops on
// tensor<?x0xbf16> crashed the GPU kernel builders (SIGILL).
func.func @no_columns(%x: tensor<?x0xbf16>) -> tensor<?x0xbf16> {
  // expected-error @+1 {{'fusion.mul_scalar' op input 'tensor<?x0xbf16>' has a zero-sized dimension}}
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x0xbf16>
  return %0 : tensor<?x0xbf16>
}

// -----

// A linear layer of no output features (nn.Linear(16, 0)) crashed the GEMM
// config selection (SIGFPE).
func.func @no_output_features(%x: tensor<?x16xf32>, %w: tensor<0x16xf32>) -> tensor<?x0xf32> {
  // expected-error @+1 {{'fusion.linear' op result 'tensor<?x0xf32>' has a zero-sized dimension}}
  %0 = fusion.linear %x, %w : tensor<?x16xf32>, tensor<0x16xf32> -> tensor<?x0xf32>
  return %0 : tensor<?x0xf32>
}

// -----

// No input features (K = 0).
func.func @no_input_features(%x: tensor<?x0xf32>, %w: tensor<8x0xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'fusion.linear' op input 'tensor<?x0xf32>' has a zero-sized dimension}}
  %0 = fusion.linear %x, %w : tensor<?x0xf32>, tensor<8x0xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @dual_weight_type(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %w2: tensor<5x8xf32>) {
  // expected-error @+1 {{dual_weight has type 'tensor<5x8xf32>' but must have the weight's type 'tensor<4x8xf32>'}}
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @dual_weight_batch_norm(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %w2: tensor<4x8xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>) {
  // expected-error @+1 {{a dual GEMM has no batch_norm stage}}
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32, %dual: f32):
    fusion.yield %acc : f32
  } batch_norm <inference, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv) : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @dual_weight_region_arity(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %w2: tensor<4x8xf32>) {
  // expected-error @+1 {{epilogue has 1 arguments but expects 2}}
  %0 = fusion.fused_linear %x, %w dual_weight(%w2) epilogue {
  ^bb0(%acc: f32):
    fusion.yield %acc : f32
  } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @concat_one_input(%a: tensor<64x32xf32>) {
  // expected-error @+1 {{'fusion.concat' op needs at least two inputs, got 1}}
  %0 = fusion.concat %a dim 0 : (tensor<64x32xf32>) -> tensor<64x32xf32>
  return
}

// -----

func.func @concat_dynamic(%a: tensor<?x32xf32>, %b: tensor<?x32xf32>) {
  // expected-error @+1 {{'fusion.concat' op result must be a static 1-D or 2-D tensor of f32, bf16 or f16, got 'tensor<?x32xf32>'}}
  %0 = fusion.concat %a, %b dim 0 : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<64xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'fusion.concat' op dim 1 is not a dimension of rank 1}}
  %0 = fusion.concat %a, %b dim 1 : (tensor<64xf32>, tensor<16xf32>) -> tensor<80xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<64x32xf32>, %b: tensor<16x32xbf16>) {
  // expected-error @+1 {{'fusion.concat' op input 1 must be a static tensor of the result's rank and element type, got 'tensor<16x32xbf16>'}}
  %0 = fusion.concat %a, %b dim 0 : (tensor<64x32xf32>, tensor<16x32xbf16>) -> tensor<80x32xf32>
  return
}

// -----

func.func @concat_other_dimension(%a: tensor<64x32xf32>, %b: tensor<16x16xf32>) {
  // expected-error @+1 {{'fusion.concat' op input 1 has 16 in dimension 1, the result 32}}
  %0 = fusion.concat %a, %b dim 0 : (tensor<64x32xf32>, tensor<16x16xf32>) -> tensor<80x32xf32>
  return
}

// -----

func.func @concat_joined(%a: tensor<64x32xf32>, %b: tensor<16x32xf32>) {
  // expected-error @+1 {{'fusion.concat' op the inputs join 80 in dimension 0, the result has 96}}
  %0 = fusion.concat %a, %b dim 0 : (tensor<64x32xf32>, tensor<16x32xf32>) -> tensor<96x32xf32>
  return
}
