// compute-sanitizer's synccheck on one wgmma GEMM kernel that two entries
// share: gelu(group_norm(y, 2)) as the PyTorch importer writes it
// (tests/gpu/test_reductions.py's model; weight, bias, then input), and
// the same two group moments with an elementwise step that keeps them in
// its output. Before dynamic shared memory was PTX's extern array, this
// library left the first row of each tile NaN under the tool (benchmark
// run 28). `scripts/gpu/profile_kernel.py sanitize LIB ENTRY 333 bf16
// --tools synccheck` runs an entry under the tool and compares its
// outputs with a run without it.
// fusion-compile synccheck_pair.mlir --strategy=wgmma --target=sm_90 -o LIB
module {
  func.func @group_norm_gelu(%arg0: tensor<1024x72xbf16>, %arg1: tensor<1024xbf16>, %arg2: tensor<?x72xbf16>) -> tensor<?x1024xbf16> {
    %0 = fusion.linear %arg2, %arg0, %arg1 : tensor<?x72xbf16>, tensor<1024x72xbf16>, tensor<1024xbf16> -> tensor<?x1024xbf16>
    %1 = fusion.reduce sum %0 : tensor<?x1024xbf16> -> tensor<?x2xbf16> {
    ^bb0(%in: f32):
      fusion.yield %in : f32
    }
    %2 = fusion.reduce sum %0 rows(%1 : tensor<?x2xbf16>) : tensor<?x1024xbf16> -> tensor<?x2xbf16> {
    ^bb0(%in: f32, %row: f32):
      %cst = arith.constant 5.120000e+02 : f32
      %4 = arith.divf %row, %cst : f32
      %5 = arith.subf %in, %4 : f32
      %6 = arith.mulf %5, %5 : f32
      fusion.yield %6 : f32
    }
    %3 = fusion.elementwise %0 rows(%1, %2 : tensor<?x2xbf16>, tensor<?x2xbf16>) : tensor<?x1024xbf16> {
    ^bb0(%in: f32, %row: f32, %row_0: f32):
      %cst = arith.constant 5.120000e+02 : f32
      %4 = arith.divf %row, %cst : f32
      %5 = arith.subf %in, %4 : f32
      %cst_1 = arith.constant 5.120000e+02 : f32
      %6 = arith.divf %row_0, %cst_1 : f32
      %cst_2 = arith.constant 9.99999974E-6 : f32
      %7 = arith.addf %6, %cst_2 : f32
      %8 = math.rsqrt %7 : f32
      %9 = arith.mulf %5, %8 : f32
      %cst_3 = arith.constant 5.000000e-01 : f32
      %10 = arith.mulf %9, %cst_3 : f32
      %cst_4 = arith.constant 0.707106769 : f32
      %11 = arith.mulf %9, %cst_4 : f32
      %12 = math.erf %11 : f32
      %cst_5 = arith.constant 1.000000e+00 : f32
      %13 = arith.addf %cst_5, %12 : f32
      %14 = arith.mulf %10, %13 : f32
      fusion.yield %14 : f32
    }
    return %3 : tensor<?x1024xbf16>
  }

  func.func @moments_and_y(%x: tensor<?x72xbf16>, %w: tensor<1024x72xbf16>, %b: tensor<1024xbf16>) -> (tensor<?x2xbf16>, tensor<?x2xbf16>, tensor<?x1024xbf16>) {
    %y = fusion.linear %x, %w, %b : tensor<?x72xbf16>, tensor<1024x72xbf16>, tensor<1024xbf16> -> tensor<?x1024xbf16>
    %s = fusion.reduce sum %y : tensor<?x1024xbf16> -> tensor<?x2xbf16> {
    ^bb0(%v: f32):
      fusion.yield %v : f32
    }
    %q = fusion.reduce sum %y rows(%s : tensor<?x2xbf16>) : tensor<?x1024xbf16> -> tensor<?x2xbf16> {
    ^bb0(%v: f32, %m: f32):
      %c = arith.constant 512.0 : f32
      %mean = arith.divf %m, %c : f32
      %d = arith.subf %v, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      fusion.yield %d2 : f32
    }
    %o = fusion.elementwise %y rows(%s, %q : tensor<?x2xbf16>, tensor<?x2xbf16>) : tensor<?x1024xbf16> {
    ^bb0(%v: f32, %m: f32, %v2: f32):
      %a = arith.subf %v, %m : f32
      %o = arith.mulf %a, %v2 : f32
      fusion.yield %o : f32
    }
    return %s, %q, %o : tensor<?x2xbf16>, tensor<?x2xbf16>, tensor<?x1024xbf16>
  }
}
