//===- GemmPaths.cpp - the batch dispatch of a fused op's host code -------===//

#include "GemmPaths.h"

#include "fusion/Codegen/Config/GemmKernelRules.h"

using namespace mlir;
using namespace mlir::fusion;

/// The kernels of `entries` (named `kind`_rows_le_N), then of `config`
/// (named `kind`) for the rest.
static SmallVector<GemmKernelCase>
kernelCases(ArrayRef<BatchGemmConfigAttr> entries, GemmConfigAttr config,
            StringRef kind, StringRef lastKind) {
  SmallVector<GemmKernelCase> cases;
  for (BatchGemmConfigAttr entry : entries)
    cases.push_back({entry.getMaxRows(), entry.getConfig(),
                     (kind + "_rows_le_" + Twine(entry.getMaxRows())).str()});
  cases.push_back({kAnyRows, config, lastKind.str()});
  return cases;
}

/// The paths of a generated GEMM of `config` and batch configs `entries`
/// for batches up to `maxRows`.
static SmallVector<GemmPath>
planGeneratedPaths(FusedLinearOp op, GemmConfigAttr config,
                   ArrayRef<BatchGemmConfigAttr> entries, int64_t maxRows) {
  LoweringAttr lowering = LoweringAttr::of(op);
  SmallVector<GemmPath> paths;
  // Batches below the tile reductions' min_rows end a batch config (the
  // verifier checks): that one's and those before write the output.
  if (TileReductionsAttr tiles = lowering.getTileReductions();
      tiles && tiles.getMinRows() > 1) {
    int64_t unreducedRows = tiles.getMinRows() - 1;
    auto unreduced =
        llvm::partition_point(entries, [&](BatchGemmConfigAttr entry) {
          return entry.getMaxRows() < unreducedRows;
        });
    paths.push_back(
        {GemmPath::Kind::WritesOutput, unreducedRows,
         kernelCases(ArrayRef(entries.begin(), unreduced),
                     unreduced->getConfig(), "gemm",
                     ("gemm_rows_le_" + Twine(unreducedRows)).str())});
    entries = ArrayRef(std::next(unreduced), entries.end());
  }
  if (EpilogueBatchNormAttr epilogue = lowering.getEpilogueBatchNorm()) {
    int64_t finishedRows = epilogue.getMaxRows();
    ArrayRef<BatchGemmConfigAttr> all = lowering.getBatches();
    GemmPath finishing{
        GemmPath::Kind::FinishesBatchNorm, finishedRows,
        kernelCases(getFinishingBatchConfigs(all, finishedRows),
                    getGemmConfigForRows(lowering.getGemm(), all, finishedRows),
                    "gemm_batch_norm", "gemm_batch_norm")};
    // A static batch that the kernel finishes takes no other path.
    int64_t staticRows = op.getInput().getType().getDimSize(0);
    if (!ShapedType::isDynamic(staticRows) && staticRows <= finishedRows) {
      finishing.maxRows = kAnyRows;
      return {std::move(finishing)};
    }
    paths.push_back(std::move(finishing));
    entries = ArrayRef(llvm::partition_point(entries,
                                             [&](BatchGemmConfigAttr entry) {
                                               return entry.getMaxRows() <=
                                                      finishedRows;
                                             }),
                       entries.end());
  }
  paths.push_back({GemmPath::Kind::General, maxRows,
                   kernelCases(entries, config, "gemm", "gemm")});
  return paths;
}

SmallVector<GemmPath> mlir::fusion::planGemmPaths(FusedLinearOp op) {
  LoweringAttr lowering = LoweringAttr::of(op);
  GemmConfigAttr config = lowering.getGemm();
  ArrayRef<BatchGemmConfigAttr> entries = lowering.getBatches();
  if (config.isGenerated())
    return planGeneratedPaths(op, config, entries, kAnyRows);
  // Batches up to the last batch config's rows take the generated kernels
  // (their last config for the largest), larger ones cuBLASLt's GEMM.
  SmallVector<GemmPath> paths;
  if (!entries.empty())
    paths =
        planGeneratedPaths(op, entries.back().getConfig(), entries.drop_back(),
                           entries.back().getMaxRows());
  paths.push_back({GemmPath::Kind::Cublas, kAnyRows, {}});
  return paths;
}

SmallVector<RowProgramCase> mlir::fusion::planRowProgramCases(int64_t minRows) {
  if (minRows <= 1)
    return {{kAnyRows, true, "rows"}};
  int64_t unreducedRows = minRows - 1;
  return {{unreducedRows, false, ("rows_le_" + Twine(unreducedRows)).str()},
          {kAnyRows, true, "rows"}};
}
