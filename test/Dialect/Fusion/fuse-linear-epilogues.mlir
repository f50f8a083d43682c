// RUN: fusion-opt %s --fusion-fuse-linear-epilogues -split-input-file | FileCheck %s
// RUN: fusion-opt %s --fusion-fuse-linear-epilogues=f32-precision=tf32 -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: not fusion-opt %s --fusion-fuse-linear-epilogues=f32-precision=fp64 2>&1 | FileCheck %s --check-prefix=BAD-OPTION
// BAD-OPTION: for the --f32-precision option: Cannot find option named 'fp64'!

// A lone linear becomes a fused_linear with an identity epilogue.
// CHECK-LABEL: func.func @linear_alone
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[F:.*]] = fusion.fused_linear %[[X]], %[[W]] bias(%[[B]]) epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT: fusion.yield %[[ACC]] : f32
// CHECK: return %[[F]]
// TF32-LABEL: func.func @linear_alone
// TF32: fusion.fused_linear {{.*}} precision tf32 epilogue
func.func @linear_alone(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// The f32-precision option leaves half-precision linears at their default.
// TF32-LABEL: func.func @bf16_keeps_default
// TF32: fusion.fused_linear %{{.*}}, %{{.*}} epilogue
func.func @bf16_keeps_default(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<?x4xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x8xbf16>, tensor<4x8xbf16> -> tensor<?x4xbf16>
  return %0 : tensor<?x4xbf16>
}

// -----

// CHECK-LABEL: func.func @linear_mul_leaky_relu
// CHECK: %[[F:.*]] = fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue(%[[S:.*]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32):
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[SLOPE:.*]] = arith.constant 1.000000e-01 : f32
// CHECK: %[[M1:.*]] = arith.mulf %[[ACC]], %[[TWO]] : f32
// CHECK: %[[M2:.*]] = arith.mulf %[[M1]], %[[COL]] : f32
// CHECK: %[[NEG:.*]] = arith.mulf %[[M2]], %[[SLOPE]] : f32
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[M2]], %[[ZERO]] : f32
// CHECK: %[[R:.*]] = arith.select %[[POS]], %[[M2]], %[[NEG]] : f32
// CHECK: fusion.yield %[[R]] : f32
// CHECK-NOT: fusion.mul
// CHECK-NOT: fusion.leaky_relu
// CHECK: return %[[F]]
func.func @linear_mul_leaky_relu(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                                 %s: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
  %2 = fusion.mul %1, %s : tensor<?x4xf32>, tensor<4xf32>
  %3 = fusion.leaky_relu %2, negative_slope = 0.1 : tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}

// -----

// A single value (KernelBench 68's `min(y, c) - c`) joins the epilogue as a
// [1] column operand, read by every column.
// CHECK-LABEL: func.func @linear_single_value
// CHECK: %[[F:.*]] = fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue(%{{.*}}) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: %[[MIN:.*]] = arith.minimumf %[[ACC]], %[[C]] : f32
// CHECK-NEXT: %[[SUB:.*]] = arith.subf %[[MIN]], %[[C]] : f32
// CHECK-NEXT: fusion.yield %[[SUB]] : f32
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: return %[[F]]
func.func @linear_single_value(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                               %c: tensor<1xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %1 = fusion.elementwise %0 columns(%c : tensor<1xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %col: f32):
    %2 = arith.minimumf %v, %col : f32
    %3 = arith.subf %2, %col : f32
    fusion.yield %3 : f32
  }
  return %1 : tensor<?x4xf32>
}

// -----

// A training batch_norm becomes the stage; its running stats become results.
// CHECK-LABEL: func.func @linear_batch_norm
// CHECK: %[[F:.*]]:3 = fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%{{.*}}) {
// CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> bn_weight(%{{.*}}) bn_bias(%{{.*}}) running_stats(%{{.*}}, %{{.*}})
// CHECK-NOT: fusion.batch_norm
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
func.func @linear_batch_norm(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %s: tensor<4xf32>, %g: tensor<4xf32>,
                             %beta: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.mul %0, %s : tensor<?x4xf32>, tensor<4xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> weight(%g) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A batch norm's batch statistics (a training step saves them with its
// input for the backward pass) become the grown op's last results, after
// the updated running statistics.
// CHECK-LABEL: func.func @linear_batch_norm_batch_stats
// CHECK: %[[F:.*]]:6 = fusion.fused_linear
// CHECK: fusion.yield %[[E:.*]], %[[E]] : f32, f32
// CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{[^)]*}})
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: fusion.batch_norm
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2, %[[F]]#3, %[[F]]#4, %[[F]]#5
func.func @linear_batch_norm_batch_stats(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.relu %0 : tensor<?x4xf32>
  %y:5 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %1, %y#1, %y#2, %y#3, %y#4
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An op after the batch norm that reads its batch mean stays outside: ops
// after a batch-norm stage do not join it.
// CHECK-LABEL: func.func @batch_mean_reader_stays_outside
// CHECK: %[[F:.*]]:3 = fusion.fused_linear
// CHECK: fusion.mul %[[F]]#0, %[[F]]#1
func.func @batch_mean_reader_stays_outside(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %y:3 = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  %1 = fusion.mul %y#0, %y#1 : tensor<?x4xf32>, tensor<4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A value that another op reads too (a training step saves it for the
// backward pass) stays in the fused op as an intermediate result, yielded
// after the result's value: the GEMM output is not written for it and read
// back, and nothing is computed twice.
// CHECK-LABEL: func.func @shared_intermediate
// CHECK: %[[F:.*]]:2 = fusion.fused_linear %{{.*}}, %{{.*}} epilogue {
// CHECK: %[[M:.*]] = arith.mulf
// CHECK: %[[L:.*]] = arith.select
// CHECK: fusion.yield %[[L]], %[[M]] : f32, f32
// CHECK: } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NOT: fusion.leaky_relu
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @shared_intermediate(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x4xf32>
  return %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// In a 16-bit model, a value that others read too is stored rounded, so the
// epilogue reads it rounded as well: every reader sees one value (a row's
// maximum, computed from the stored GEMM output, is one of the row's values).
// CHECK-LABEL: func.func @stored_16_bit_value_read_rounded
// CHECK: %[[F:.*]]:2 = fusion.fused_linear %{{.*}}, %{{.*}} epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK: %[[T:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[E]], %{{.*}} : f32
// CHECK: fusion.yield %[[M]], %[[ACC]] : f32, f32
// CHECK: fusion.reduce max %[[F]]#1
func.func @stored_16_bit_value_read_rounded(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>)
    -> (tensor<?x4xbf16>, tensor<?x1xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x8xbf16>, tensor<4x8xbf16> -> tensor<?x4xbf16>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xbf16>
  %2 = fusion.reduce max %0 : tensor<?x4xbf16> -> tensor<?x1xbf16> {
  ^bb0(%in: f32):
    fusion.yield %in : f32
  }
  return %1, %2 : tensor<?x4xbf16>, tensor<?x1xbf16>
}

// -----

// Every reader of a stored 16-bit value reads it rounded, the last one
// absorbed too (no reader is left to store it for by then): model fuzzer
// seed 5202, a norm's numerator and its clamped denominator read the GEMM
// output an ulp apart.
// CHECK-LABEL: func.func @last_reader_of_stored_value_read_rounded
// CHECK: fusion.fused_linear
// CHECK-NEXT: ^bb0(%[[ACC:[a-z0-9_]+]]: f32,
// CHECK: %[[T:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[E]]
// CHECK-NOT: %[[ACC]]
// CHECK: arith.addf %[[E]]
// CHECK-NOT: %[[ACC]]
// CHECK: arith.addf %[[E]]
// CHECK: fusion.yield
func.func @last_reader_of_stored_value_read_rounded(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %b: tensor<4xbf16>)
    -> (tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x4xbf16>) {
  %0 = fusion.linear %x, %w : tensor<?x8xbf16>, tensor<4x8xbf16> -> tensor<?x4xbf16>
  %1 = fusion.elementwise %0 columns(%b : tensor<4xbf16>) : tensor<?x4xbf16> {
  ^bb0(%in: f32, %col: f32):
    %s = arith.addf %in, %col : f32
    fusion.yield %s : f32
  }
  %2 = fusion.elementwise %0 columns(%b : tensor<4xbf16>) : tensor<?x4xbf16> {
  ^bb0(%in: f32, %col: f32):
    %s = arith.addf %in, %col : f32
    %a = math.absf %s : f32
    fusion.yield %a : f32
  }
  %3 = fusion.elementwise %0 columns(%b : tensor<4xbf16>) : tensor<?x4xbf16> {
  ^bb0(%in: f32, %col: f32):
    %s = arith.addf %in, %col : f32
    %n = arith.negf %s : f32
    fusion.yield %n : f32
  }
  return %1, %2, %3 : tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x4xbf16>
}

// -----

// A 16-bit value only the epilogue reads stays f32 until the result is
// rounded once; f32 values are never rounded.
// CHECK-LABEL: func.func @unstored_16_bit_value_not_rounded
// CHECK: fusion.fused_linear
// CHECK-NOT: arith.truncf
// CHECK: return
// CHECK-LABEL: func.func @stored_f32_value_not_rounded
// CHECK: fusion.fused_linear
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @unstored_16_bit_value_not_rounded(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>)
    -> tensor<?x4xbf16> {
  %0 = fusion.linear %x, %w : tensor<?x8xbf16>, tensor<4x8xbf16> -> tensor<?x4xbf16>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xbf16>
  %2 = fusion.leaky_relu %1, negative_slope = 0.1 : tensor<?x4xbf16>
  return %2 : tensor<?x4xbf16>
}
func.func @stored_f32_value_not_rounded(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.mul_scalar %0, 2.0 : tensor<?x4xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Intermediates carry through the growth that follows, and each chain value
// read elsewhere adds one: the relu of the GEMM output (an op of its own
// chain), the output itself, and the batch norm's input, yielded again for
// its intermediate.
// CHECK-LABEL: func.func @saved_values_then_batch_norm
// CHECK: %[[F:.*]]:7 = fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) epilogue(%{{.*}}) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32):
// CHECK: %[[N:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ACC]]
// CHECK: %[[M:.*]] = arith.mulf %[[ACC]], %[[COL]] : f32
// CHECK: %[[E:.*]] = math.tanh %[[M]] : f32
// CHECK: fusion.yield %[[E]], %[[N]], %[[ACC]], %[[M]], %[[E]] : f32, f32, f32, f32, f32
// CHECK: } batch_norm <training, epsilon = 1.000000e-05, momentum = 1.000000e-01> running_stats(%{{[^)]*}})
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: fusion.
// CHECK: return %[[F]]#0, %[[F]]#2, %[[F]]#3, %[[F]]#4, %[[F]]#1, %[[F]]#5, %[[F]]#6
func.func @saved_values_then_batch_norm(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>,
                                        %s: tensor<4xf32>, %rm: tensor<4xf32>, %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fusion.linear %x, %w, %b : tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %n = fusion.relu %0 : tensor<?x4xf32>
  %1 = fusion.mul %0, %s : tensor<?x4xf32>, tensor<4xf32>
  %2 = fusion.elementwise %1 : tensor<?x4xf32> {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    fusion.yield %t : f32
  }
  %y:3 = fusion.batch_norm %2, <training, epsilon = 1.0e-05, momentum = 0.1> running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %0, %1, %2, %n, %y#1, %y#2
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A reader nested in an op of the block (here in an scf.if before the
// consumer) counts where that op stands: the grown op stays where the
// linear was, and the nested reader takes the intermediate result.
// CHECK-LABEL: func.func @reader_in_a_region
// CHECK: %[[F:.*]]:2 = fusion.fused_linear
// CHECK: fusion.yield %{{.*}}, %[[ACC:.*]] : f32, f32
// CHECK: scf.if
// CHECK-NEXT: scf.yield %[[F]]#1
// CHECK: return %{{.*}}, %[[F]]#0
func.func @reader_in_a_region(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %c: i1,
                              %other: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %r = scf.if %c -> tensor<?x4xf32> {
    scf.yield %0 : tensor<?x4xf32>
  } else {
    scf.yield %other : tensor<?x4xf32>
  }
  %1 = fusion.relu %0 : tensor<?x4xf32>
  return %r, %1 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A batch norm of an intermediate takes the result's place (the stage
// normalizes the result), and the former result becomes an intermediate:
// here the relu, taken in first, while the GEMM output that only the batch
// norm read any more is no intermediate.
// CHECK-LABEL: func.func @batch_norm_of_an_intermediate
// CHECK: %[[F:.*]]:2 = fusion.fused_linear
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ACC]]
// CHECK-NEXT: fusion.yield %[[ACC]], %[[R]] : f32, f32
// CHECK-NEXT: } batch_norm <training
// CHECK-NEXT: return %[[F]]#1, %[[F]]#0
func.func @batch_norm_of_an_intermediate(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.relu %0 : tensor<?x4xf32>
  %2 = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Not fused: the elementwise op's row operand is computed from the GEMM
// output by a reduction that comes before it, so no place suits the grown
// op (before the reduction the row operand does not exist yet, after it the
// reduction would read a value not yet computed).
// CHECK-LABEL: func.func @operand_after_other_user
// CHECK: %[[F:.*]] = fusion.fused_linear
// CHECK: %[[R:.*]] = fusion.reduce max %[[F]]
// CHECK: fusion.elementwise %[[F]] rows(%[[R]]
func.func @operand_after_other_user(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %r = fusion.reduce max %0 : tensor<?x4xf32> -> tensor<?x1xf32> {
  ^bb0(%v: f32):
    fusion.yield %v : f32
  }
  %1 = fusion.elementwise %0 rows(%r : tensor<?x1xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %m: f32):
    %d = arith.subf %v, %m : f32
    fusion.yield %d : f32
  }
  return %1 : tensor<?x4xf32>
}

// -----

// Ops that read intermediate results join too: one reading an intermediate
// adds one, and a row operand that is one of the op's own matrices (the same
// element) becomes that matrix's yielded value. The GEMM output y is read by
// all three ops, which become one fused op writing two matrices.
// CHECK-LABEL: func.func @reads_other_results
// CHECK: %[[F:.*]]:2 = fusion.fused_linear %{{.*}}, %{{.*}} epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ACC]]
// CHECK: %[[T:.*]] = math.tanh %[[ACC]] : f32
// CHECK: %[[D:.*]] = arith.subf %[[R]], %[[ACC]] : f32
// CHECK: fusion.yield %[[D]], %[[T]] : f32, f32
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-NEXT: return %[[F]]#1, %[[F]]#0
func.func @reads_other_results(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.relu %0 : tensor<?x4xf32>
  %2 = fusion.elementwise %0 : tensor<?x4xf32> {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    fusion.yield %t : f32
  }
  %3 = fusion.elementwise %1 rows(%0 : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %y: f32):
    %d = arith.subf %v, %y : f32
    fusion.yield %d : f32
  }
  return %2, %3 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Not fused: an op reading the input that a batch-norm stage saved (an
// intermediate) stays outside, as ops after the stage do.
// CHECK-LABEL: func.func @after_saved_batch_norm_input
// CHECK: %[[F:.*]]:2 = fusion.fused_linear
// CHECK: fusion.yield %[[ACC:.*]], %[[ACC]] : f32, f32
// CHECK: } batch_norm <training
// CHECK: %[[T:.*]] = fusion.relu %[[F]]#1
// CHECK: return %[[F]]#0, %[[T]]
func.func @after_saved_batch_norm_input(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = fusion.relu %0 : tensor<?x4xf32>
  return %1, %2 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Not fused because nothing follows a batch-norm stage: the scale after it
// needs the normalized value of every row.
// CHECK-LABEL: func.func @after_batch_norm
// CHECK: %[[F:.*]] = fusion.fused_linear
// CHECK: } batch_norm <training
// CHECK: fusion.mul_scalar %[[F]], 2.000000e+00
func.func @after_batch_norm(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.batch_norm %0, <training, epsilon = 1.0e-05, momentum = 0.1> : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %2 = fusion.mul_scalar %1, 2.0 : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// Not fused because the input is no linear: elementwise ops on an argument
// stay as they are.
// CHECK-LABEL: func.func @no_linear
// CHECK: fusion.mul_scalar
// CHECK: fusion.leaky_relu
// CHECK-NOT: fusion.fused_linear
func.func @no_linear(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.mul_scalar %x, 2.0 : tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.1 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// A per-column operand defined after the linear: the fused op moves down to
// where all its operands are available.
// CHECK-LABEL: func.func @operand_defined_later
// CHECK: %[[S:.*]] = arith.constant dense<3.000000e+00> : tensor<4xf32>
// CHECK: fusion.fused_linear %{{.*}}, %{{.*}} epilogue(%[[S]])
func.func @operand_defined_later(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %s = arith.constant dense<3.0> : tensor<4xf32>
  %1 = fusion.mul %0, %s : tensor<?x4xf32>, tensor<4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// Dynamic M, no bias, bf16 and f16 all fuse.
// CHECK-LABEL: func.func @half_types
// CHECK: fusion.fused_linear
// CHECK: } : ({{.*}}) -> tensor<?x4xbf16>
// CHECK: fusion.fused_linear
// CHECK: } : ({{.*}}) -> tensor<3x4xf16>
// CHECK-NOT: fusion.{{(linear|mul_scalar|leaky_relu) }}
func.func @half_types(%x: tensor<?x8xbf16>, %w: tensor<4x8xbf16>, %y: tensor<3x8xf16>, %v: tensor<4x8xf16>)
    -> (tensor<?x4xbf16>, tensor<3x4xf16>) {
  %0 = fusion.linear %x, %w : tensor<?x8xbf16>, tensor<4x8xbf16> -> tensor<?x4xbf16>
  %1 = fusion.leaky_relu %0, negative_slope = 0.2 : tensor<?x4xbf16>
  %2 = fusion.linear %y, %v : tensor<3x8xf16>, tensor<4x8xf16> -> tensor<3x4xf16>
  %3 = fusion.mul_scalar %2, 0.5 : tensor<3x4xf16>
  return %1, %3 : tensor<?x4xbf16>, tensor<3x4xf16>
}

// -----

// relu fuses as PyTorch's `x < 0 ? 0 : x` (-0.0 and NaN pass unchanged).
// CHECK-LABEL: func.func @relu
// CHECK: fusion.fused_linear
// CHECK: ^bb0(%[[ACC:.*]]: f32):
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[NEG:.*]] = arith.cmpf olt, %[[ACC]], %[[ZERO]] : f32
// CHECK: %[[R:.*]] = arith.select %[[NEG]], %[[ZERO]], %[[ACC]] : f32
// CHECK: fusion.yield %[[R]] : f32
// CHECK-NOT: fusion.relu
func.func @relu(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.relu %0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// Two general elementwise ops fuse into one epilogue, their bodies appended
// in order; their column operands become epilogue operands.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<4x8xf32>, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[F:.*]] = fusion.fused_linear %[[X]], %[[W]] epilogue(%[[A]], %[[B]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[CA:.*]]: f32, %[[CB:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.erf %[[ACC]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[E]], %[[CA]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[M]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[CB]] : f32
// CHECK-NEXT: fusion.yield %[[S]] : f32
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK-NOT: fusion.elementwise
// CHECK: return %[[F]]
func.func @elementwise_chain(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %a: tensor<4xf32>,
                             %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.elementwise %0 columns(%a : tensor<4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %c: f32):
    %e = math.erf %v : f32
    %m = arith.mulf %e, %c : f32
    fusion.yield %m : f32
  }
  %2 = fusion.elementwise %1 columns(%b : tensor<4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %c: f32):
    %t = math.tanh %v : f32
    %s = arith.addf %t, %c : f32
    fusion.yield %s : f32
  }
  return %2 : tensor<?x4xf32>
}

// -----

// An elementwise op on an argument stays as it is; one on a linear result
// that the return also reads joins the epilogue, the linear result kept as
// an intermediate result.
// CHECK-LABEL: func.func @elementwise_on_argument
// CHECK: %[[E0:.*]] = fusion.elementwise %{{.*}} : tensor<?x4xf32> {
// CHECK: %[[F:.*]]:2 = fusion.fused_linear
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[ACC]] : f32
// CHECK-NEXT: fusion.yield %[[E]], %[[ACC]] : f32, f32
// CHECK-NOT: fusion.elementwise
// CHECK: return %[[E0]], %[[F]]#0, %[[F]]#1
func.func @elementwise_on_argument(%y: tensor<?x4xf32>, %x: tensor<?x8xf32>, %w: tensor<4x8xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %0 = fusion.elementwise %y : tensor<?x4xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    fusion.yield %e : f32
  }
  %1 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %2 = fusion.elementwise %1 : tensor<?x4xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    fusion.yield %e : f32
  }
  return %0, %2, %1 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// An elementwise op with row operands (a residual matrix, a statistic per
// row) joins the epilogue too: its row operands become the fused op's, their
// block arguments after the column operands', which a later op's column
// operand is placed before.
// CHECK-LABEL: func.func @elementwise_with_rows
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<?x1xf32>, %[[C:.*]]: tensor<4xf32>)
// CHECK: %[[F:.*]] = fusion.fused_linear %[[X]], %[[W]] epilogue(%[[C]]) rows(%[[R]], %[[S]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[COL:.*]]: f32, %[[RES:.*]]: f32, %[[STAT:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[ACC]], %[[RES]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.subf %[[A]], %[[STAT]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[B]], %[[COL]] : f32
// CHECK-NEXT: fusion.yield %[[D]] : f32
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
// CHECK-NOT: fusion.elementwise
func.func @elementwise_with_rows(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                                 %r: tensor<?x4xf32>, %s: tensor<?x1xf32>,
                                 %c: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.elementwise %0 rows(%r, %s : tensor<?x4xf32>, tensor<?x1xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %res: f32, %stat: f32):
    %a = arith.addf %v, %res : f32
    %b = arith.subf %a, %stat : f32
    fusion.yield %b : f32
  }
  %2 = fusion.elementwise %1 columns(%c : tensor<4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %col: f32):
    %d = arith.mulf %v, %col : f32
    fusion.yield %d : f32
  }
  return %2 : tensor<?x4xf32>
}

// -----

// A batch norm after an epilogue with row operands stays a batch_norm: the
// statistics kernels read no row operands.
// CHECK-LABEL: func.func @batch_norm_after_rows
// CHECK: %[[F:.*]] = fusion.fused_linear %{{.*}}, %{{.*}} epilogue rows(%{{.*}}) {
// CHECK: fusion.batch_norm %[[F]]
func.func @batch_norm_after_rows(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>,
                                 %r: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = fusion.elementwise %0 rows(%r : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %res: f32):
    %a = arith.addf %v, %res : f32
    fusion.yield %a : f32
  }
  %2 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1>
      : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// A weight stored [in_features, out_features] keeps its layout through the
// fusion, a batch norm's stage included.
// CHECK-LABEL: func.func @linear_in_out_gelu_batch_norm
// CHECK: %[[F:.*]]:3 = fusion.fused_linear %{{.*}}, %{{.*}} bias(%{{.*}}) weight_layout in_out epilogue {
// CHECK: } batch_norm <training
// CHECK-NOT: fusion.linear
func.func @linear_in_out_gelu_batch_norm(%x: tensor<?x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>,
                                         %g: tensor<4xf32>, %beta: tensor<4xf32>, %rm: tensor<4xf32>,
                                         %rv: tensor<4xf32>)
    -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = fusion.linear %x, %w, %b weight_layout in_out : tensor<?x8xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %1 = fusion.leaky_relu %0, negative_slope = 0.5 : tensor<?x4xf32>
  %y:3 = fusion.batch_norm %1, <training, epsilon = 1.0e-05, momentum = 0.1> weight(%g) bias(%beta) running_stats(%rm, %rv)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %y#0, %y#1, %y#2 : tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Dropout as the importer writes it: a draw of the GEMM input's rows, made
// after the linear, read as a row operand. The fused op moves to the
// comparison, after the draw, which becomes its row operand (computed
// where the epilogue reads it).
// CHECK-LABEL: func.func @dropout_draw
// CHECK: %[[U:.*]] = fusion.random_uniform
// CHECK-NEXT: %[[F:.*]] = fusion.fused_linear %{{.*}}, %{{.*}} epilogue rows(%[[U]]) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[D:.*]]: f32):
// CHECK: arith.cmpf ogt, %[[D]]
// CHECK-NOT: fusion.elementwise
func.func @dropout_draw(%seed: tensor<2xf32>, %x: tensor<?x8xf32>,
                        %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %u = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%x : tensor<?x8xf32>) stream 0 : tensor<?x4xf32>
  %1 = fusion.elementwise %0 rows(%u : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %d: f32):
    %p = arith.constant 0.5 : f32
    %z = arith.constant 0.0 : f32
    %keep = arith.cmpf ogt, %d, %p : f32
    %r = arith.select %keep, %v, %z : f32
    fusion.yield %r : f32
  }
  return %1 : tensor<?x4xf32>
}

// -----

// Not fused: a draw whose rows are taken from the linear's own result
// needs the GEMM before it (the importer takes them from its input).
// CHECK-LABEL: func.func @draw_of_the_gemms_rows
// CHECK: %[[L:.*]] = fusion.fused_linear
// CHECK: fusion.random_uniform seed(%{{.*}}) rows_of(%[[L]]
// CHECK: fusion.elementwise %[[L]]
func.func @draw_of_the_gemms_rows(%seed: tensor<2xf32>, %x: tensor<?x8xf32>,
                                  %w: tensor<4x8xf32>) -> tensor<?x4xf32> {
  %0 = fusion.linear %x, %w : tensor<?x8xf32>, tensor<4x8xf32> -> tensor<?x4xf32>
  %u = fusion.random_uniform seed(%seed : tensor<2xf32>) rows_of(%0 : tensor<?x4xf32>) stream 0 : tensor<?x4xf32>
  %1 = fusion.elementwise %0 rows(%u : tensor<?x4xf32>) : tensor<?x4xf32> {
  ^bb0(%v: f32, %d: f32):
    %p = arith.constant 0.5 : f32
    %z = arith.constant 0.0 : f32
    %keep = arith.cmpf ogt, %d, %p : f32
    %r = arith.select %keep, %v, %z : f32
    fusion.yield %r : f32
  }
  return %1 : tensor<?x4xf32>
}
