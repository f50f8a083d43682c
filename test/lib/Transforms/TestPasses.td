//===- TestPasses.td - fusion's test-only passes -----------*- tablegen -*-===//
//
// Passes that exist for the test suite, kept out of the compiler's libraries
// as upstream keeps its test passes under test/lib; fusion-opt registers
// them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_TEST_LIB_TRANSFORMS_TESTPASSES_TD
#define FUSION_TEST_LIB_TRANSFORMS_TESTPASSES_TD

include "mlir/Pass/PassBase.td"

def GenerateTestHarness : Pass<"fusion-generate-test-harness", "::mlir::ModuleOp"> {
  let summary = "Add a main function that runs an entry point on "
                "deterministic pseudo-random inputs and prints its results";
  let description = [{
    Creates `func.func @main()` which fills every tensor argument of the
    entry function with pseudo-random values from an integer hash of the
    seed, the argument number and the element index (uniform in [-1, 1),
    or in [0.5, 1.5) for arguments used as running variances), with each
    dynamic dimension set to `rows`; calls the entry; and prints each result
    with `printMemrefF32`. Running the module before and after a
    transformation on the same inputs checks that it keeps the meaning.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "the function to call (required)">,
    Option<"rows", "rows", "int64_t", /*default=*/"37",
           "the size given to dynamic dimensions">,
    Option<"seed", "seed", "int64_t", /*default=*/"1",
           "the seed of the input values">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // FUSION_TEST_LIB_TRANSFORMS_TESTPASSES_TD
