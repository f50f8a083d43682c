//===- GemmEpilogue.cpp - the epilogue of the generated GEMM kernels ------===//

#include "fusion/Codegen/Kernels/GemmEpilogue.h"
#include "fusion/Codegen/Math/Philox.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace mlir::fusion;

GemmSharedLayout GemmKernelProblem::sharedLayout() const {
  int64_t vectors = (hasBias ? 1 : 0) + columns.size() +
                    (batchNorm ? batchNorm->afterColumns.size() : 0);
  return GemmSharedLayout::of(config, elementBytes(elementType), vectors,
                              statistics, batchNorm.has_value(), dualWeight);
}

GemmEpilogueArguments
GemmEpilogueArguments::take(const GemmKernelProblem &problem,
                            ValueRange kernelArgs) {
  GemmEpilogueArguments args;
  unsigned next = 0;
  args.bias = problem.hasBias ? kernelArgs[next++] : Value();
  args.out = problem.storesOutput ? kernelArgs[next++] : Value();
  for (size_t i = 0; i < problem.intermediates.size(); ++i)
    args.intermediates.push_back(kernelArgs[next++]);
  for (size_t i = 0; i < problem.columns.size(); ++i)
    args.columns.push_back(kernelArgs[next++]);
  for (size_t i = 0; i < problem.rows.size(); ++i)
    args.rowOperands.push_back(kernelArgs[next++]);
  if (const std::optional<GemmBatchNorm> &bn = problem.batchNorm) {
    if (bn->operands.weight)
      args.bnWeight = kernelArgs[next++];
    if (bn->operands.bias)
      args.bnBias = kernelArgs[next++];
    if (bn->operands.runningStats)
      for (Value *stat :
           {&args.runningMean, &args.runningVar, &args.newMean, &args.newVar})
        *stat = kernelArgs[next++];
    if (bn->operands.batchStatType) {
      args.batchMean = kernelArgs[next++];
      args.batchInvStd = kernelArgs[next++];
    }
    for (size_t i = 0; i < bn->afterColumns.size(); ++i)
      args.afterColumns.push_back(kernelArgs[next++]);
  } else if (problem.statistics) {
    args.mean = kernelArgs[next++];
    args.m2 = kernelArgs[next++];
  }
  for (const GemmRowReduction &reduction : problem.rowReductions)
    for (unsigned i = 0; i < reduction.partialCount(); ++i)
      args.partials.push_back(kernelArgs[next++]);
  if (problem.biasInParts)
    for (size_t i = 1; i < problem.weightParts.size(); ++i)
      args.biasParts.push_back(kernelArgs[next++]);
  return args;
}

unsigned mlir::fusion::completeGemmLaunch(const GemmKernelProblem &problem,
                                          SmallVectorImpl<Type> &argTypes,
                                          LaunchContract &launch) {
  unsigned operand = 2;
  Type type = problem.elementType;
  int64_t n = problem.n;
  int64_t dynamic = ShapedType::kDynamic;
  auto addMemRef = [&](ArrayRef<int64_t> shape, Type elementType,
                       SmallVector<RowExpr, 2> extents) {
    argTypes.push_back(MemRefType::get(shape, elementType));
    launch.arguments.push_back(
        KernelArgument::descriptor(operand++, std::move(extents)));
  };
  RowExpr rows = RowExpr::rows();
  auto addVector = [&](int64_t size, Type elementType) {
    addMemRef({size}, elementType, {RowExpr::constant(size)});
  };
  if (problem.hasBias)
    addVector(problem.biasInParts ? problem.partWidth(0) : n, type);
  if (problem.storesOutput)
    addMemRef({dynamic, n}, type, {rows, RowExpr::constant(n)});
  for (size_t i = 0; i < problem.intermediates.size(); ++i)
    addMemRef({dynamic, n}, type, {rows, RowExpr::constant(n)});
  auto addColumnOperand = [&](const ColumnOperand &column) {
    addVector(column.single ? 1 : n, column.elementType);
  };
  llvm::for_each(problem.columns, addColumnOperand);
  for (const RowOperandSource &source : problem.rows) {
    if (source.isDraw()) // Its seed.
      addVector(2, Float32Type::get(type.getContext()));
    else
      addMemRef({dynamic, source.groups}, type,
                {rows, RowExpr::constant(source.groups)});
  }
  // The moments of each block row of each column.
  GemmConfigAttr config = problem.config;
  if (const std::optional<GemmBatchNorm> &bn = problem.batchNorm) {
    const BatchNormOperands &present = bn->operands;
    int vectors = present.weight + present.bias + 4 * present.runningStats;
    for (int i = 0; i < vectors; ++i)
      addMemRef({n}, present.statType, {RowExpr::constant(n)});
    if (present.batchStatType)
      for (int i = 0; i < 2; ++i)
        addMemRef({n}, present.batchStatType, {RowExpr::constant(n)});
    llvm::for_each(bn->afterColumns, addColumnOperand);
  } else if (problem.statistics) {
    for (int i = 0; i < 2; ++i)
      addMemRef({dynamic}, Float32Type::get(type.getContext()),
                {RowExpr::ceilDiv(1, config.getBlockM(), n)});
  }
  for (const GemmRowReduction &reduction : problem.rowReductions)
    for (unsigned i = 0; i < reduction.partialCount(); ++i)
      addMemRef({dynamic, problem.partialColumns()},
                Float32Type::get(type.getContext()),
                {rows, RowExpr::constant(problem.partialColumns())});
  if (problem.biasInParts)
    for (size_t i = 1; i < problem.weightParts.size(); ++i)
      addVector(problem.partWidth(i), type);
  // A block a tile; clusters take whole clusters' tiles (rasterizeGemmTile),
  // and with split_k each block of a cluster a share of one tile's K.
  int64_t cluster = config.getClusterM();
  launch.gridX =
      RowExpr::ceilDiv(1, config.getBlockM() * cluster,
                       config.getClusterSize() * countColumnTiles(config, n));
  launch.blockSize = config.getThreads();
  launch.dynamicSharedBytes = problem.sharedLayout().total;
  return operand;
}

GemmTilePosition mlir::fusion::rasterizeGemmTile(OpBuilder &b, Location loc,
                                                 Value tile, Value rows,
                                                 int64_t n, GemmConfigAttr c,
                                                 Value clusterRank) {
  auto idx = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  GemmTilePosition position;
  int64_t tilesN = countColumnTiles(c, n);
  position.blockRowTiles =
      arith::CeilDivUIOp::create(b, loc, rows, idx(c.getBlockM()));
  // Rows of the clusters' tiles (of the blocks' tiles when unclustered).
  Value clusterRows =
      c.isClustered() ? arith::CeilDivUIOp::create(
                            b, loc, rows, idx(c.getBlockM() * c.getClusterM()))
                      : position.blockRowTiles;
  Value groupTiles = idx(c.getGroupM() * tilesN);
  Value group = arith::DivUIOp::create(b, loc, tile, groupTiles);
  Value firstRow = arith::MulIOp::create(b, loc, group, idx(c.getGroupM()));
  Value groupRows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, clusterRows, firstRow),
      idx(c.getGroupM()));
  Value inGroup = arith::RemUIOp::create(b, loc, tile, groupTiles);
  position.tileM = arith::AddIOp::create(
      b, loc, firstRow, arith::RemUIOp::create(b, loc, inGroup, groupRows));
  if (c.isClustered())
    position.tileM = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, position.tileM, idx(c.getClusterM())),
        clusterRank);
  position.tileN = arith::DivUIOp::create(b, loc, inGroup, groupRows);
  position.rowBase =
      arith::MulIOp::create(b, loc, position.tileM, idx(c.getBlockM()));
  position.columnBase =
      arith::MulIOp::create(b, loc, position.tileN, idx(c.getBlockN()));
  return position;
}

/// Accumulator runs an epilogue computes before it stores them (see
/// storesInBatches in emit): 4 runs (8 values) and the next batch's loads
/// leave the wgmma kernel's tf32 gelu(y) + x 128 bytes of spills a thread
/// (without the loads ahead, 84; 8 runs, 200), bf16's none.
constexpr size_t kStoreBatchRuns = 4;

GemmEpilogueEmitter::GemmEpilogueEmitter(OpBuilder &builder, Location loc,
                                         const GemmKernelProblem &problem,
                                         const GemmTile &tile,
                                         GemmEpilogueArguments args)
    : IndexEmitter(builder, loc), p(problem), c(problem.config),
      layout(problem.sharedLayout()), elementType(problem.elementType),
      chunkElements(kGemmChunkBytes / elementBytes(problem.elementType)),
      t(tile), args(std::move(args)) {}

void GemmEpilogueEmitter::loadColumnConstants() {
  SmallVector<Value> sources;
  // Whether each source is a single value that every column reads.
  SmallVector<bool> single;
  if (args.bias) {
    sources.push_back(args.bias);
    single.push_back(false);
  }
  auto addColumns = [&](ValueRange values, ArrayRef<ColumnOperand> operands) {
    sources.append(values.begin(), values.end());
    for (const ColumnOperand &operand : operands)
      single.push_back(operand.single);
  };
  addColumns(args.columns, p.columns);
  if (p.batchNorm)
    addColumns(args.afterColumns, p.batchNorm->afterColumns);
  if (sources.empty())
    return;
  columnConstants = sharedView(
      layout.constants, {static_cast<int64_t>(sources.size()), c.getBlockN()},
      b.getF32Type());
  // Columns past N hold 0; their outputs are never stored.
  for (int64_t first = 0; first < c.getBlockN(); first += t.threads) {
    Value column = add(t.thread, first);
    Value globalColumn = add(t.columnBase, column);
    Value ok = lessThan(globalColumn, idx(p.n));
    Value safe = select(ok, globalColumn, idx(0));
    auto store = [&] {
      for (auto [i, source] : llvm::enumerate(sources)) {
        Value v = i == 0 && !args.biasParts.empty()
                      ? loadBiasInParts(globalColumn)
                      : widen(memref::LoadOp::create(
                            b, loc, source, single[i] ? idx(0) : safe));
        memref::StoreOp::create(b, loc, select(ok, v, f32(0.0)),
                                columnConstants, ValueRange{idx(i), column});
      }
    };
    if (first + t.threads <= c.getBlockN())
      store();
    else
      guarded(lessThan(column, idx(c.getBlockN())), store);
  }
}

Value GemmEpilogueEmitter::loadBiasInParts(Value column) {
  Value value = f32(0.0);
  for (size_t part = 0; part < p.weightParts.size(); ++part) {
    Value source = part == 0 ? args.bias : args.biasParts[part - 1];
    int64_t first = p.partOffset(part);
    Value inPart = both(lessThan(column, idx(first + p.partWidth(part))),
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                              column, idx(first)));
    Value local = select(inPart, sub(column, first), idx(0));
    value = select(inPart, widen(memref::LoadOp::create(b, loc, source, local)),
                   value);
  }
  return value;
}

/// emit's walk over the runs: each run's results from its accumulators,
/// column constants and row operands, stored as it goes where the output
/// leaves by batches of runs, the intermediates by batches always.
struct GemmEpilogueEmitter::RunWalk {
  RunWalk(GemmEpilogueEmitter &e, Value firstRow, Value firstColumn,
          ArrayRef<AccumulatorRun> runs, bool storesInBatches)
      : e(e), firstRow(firstRow), firstColumn(firstColumn), runs(runs),
        storesInBatches(storesInBatches),
        // Batches load their row operands a batch ahead: the next batch's
        // loads come before this batch's stores, which they could not
        // pass, so that their latency overlaps this batch's work.
        runsAhead(storesInBatches ? kStoreBatchRuns : 0),
        rowValues(runs.size()), intermediateValues(e.p.intermediates.size()) {
    // Loaded once ahead of the runs, or by batches as they go.
    if (!storesInBatches)
      for (const AccumulatorRun &run : runs)
        for (size_t j = 0; j < run.values.size(); ++j)
          (void)constants(columnOf(run, j));
  }

  /// Runs that go down a column (operands = w_x) share its constants.
  int64_t columnOf(const AccumulatorRun &run, size_t j) const {
    return run.column + (e.c.swapsOperands() ? 0 : static_cast<int64_t>(j));
  }

  /// Bias and epilogue columns of the thread's column `offset`, from shared
  /// memory: loaded once ahead of the runs, or by batches as they go,
  /// which forget them once stored. The wgmma kernel's 64 columns a thread
  /// of bias and shift, all loaded ahead beside its 128 accumulators,
  /// spilled 504 bytes a thread in tf32 gelu(y + shift).
  ArrayRef<Value> constants(int64_t offset) {
    auto [it, inserted] = constantsAt.try_emplace(offset);
    if (inserted && e.columnConstants) {
      Value column = e.add(firstColumn, offset);
      int64_t vectors = (e.args.bias ? 1 : 0) + e.args.columns.size();
      for (int64_t i = 0; i < vectors; ++i)
        it->second.push_back(memref::LoadOp::create(
            e.b, e.loc, e.columnConstants, ValueRange{e.idx(i), column}));
    }
    return it->second;
  }

  /// Run `i`'s results (and its intermediates' values), its row operands
  /// and those of the runs ahead loaded first.
  SmallVector<Value> compute(size_t i) {
    for (; loaded < runs.size() && loaded <= i + runsAhead; ++loaded)
      rowValues[loaded] =
          e.loadRowOperands(firstRow, firstColumn, runs[loaded], loaded);
    const AccumulatorRun &run = runs[i];
    SmallVector<Value> results;
    for (SmallVector<SmallVector<Value>> &values : intermediateValues)
      values.emplace_back();
    OpBuilder &b = e.b;
    Location loc = e.loc;
    for (auto [j, accumulator] : llvm::enumerate(run.values)) {
      ArrayRef<Value> columnValues = constants(columnOf(run, j));
      Value v = accumulator;
      if (e.p.alpha != 1.0)
        v = arith::MulFOp::create(b, loc, v, e.f32(e.p.alpha));
      if (e.args.bias)
        v = arith::AddFOp::create(b, loc, v, columnValues.front());
      SmallVector<Value> operands(columnValues.drop_front(e.args.bias ? 1 : 0));
      llvm::append_range(operands, rowValues[i][j]);
      if (!run.dualValues.empty())
        operands.push_back(run.dualValues[j]);
      results.push_back(e.p.epilogue(b, loc, v, operands));
      for (auto [values, fn] : llvm::zip(intermediateValues, e.p.intermediates))
        values.back().push_back(fn(b, loc, v, operands));
    }
    // Each intermediate's values leave by batches of runs whatever the
    // output's path, so that they add a batch's values to what the
    // registers hold.
    if (!e.p.intermediates.empty() &&
        (i + 1 - intermediatesStored == kStoreBatchRuns ||
         i + 1 == runs.size()))
      storeIntermediates(i + 1);
    return results;
  }

  /// Keeps run results for the Direct path; stores a batch of them once
  /// complete where the output leaves by batches.
  void keep(SmallVector<Value> results) {
    directResults.push_back(std::move(results));
    if (!storesInBatches || directResults.size() - stored != kStoreBatchRuns)
      return;
    e.storeFragments(firstRow, firstColumn, runs.slice(stored, kStoreBatchRuns),
                     ArrayRef(directResults).drop_front(stored), e.args.out);
    stored = directResults.size();
    constantsAt.clear();
  }

  void storeIntermediates(size_t end) {
    ArrayRef<AccumulatorRun> batch =
        runs.slice(intermediatesStored, end - intermediatesStored);
    for (auto [values, target] :
         llvm::zip(intermediateValues, e.args.intermediates)) {
      e.storeFragments(firstRow, firstColumn, batch, values, target);
      values.clear();
    }
    intermediatesStored = end;
  }

  GemmEpilogueEmitter &e;
  Value firstRow, firstColumn;
  ArrayRef<AccumulatorRun> runs;
  bool storesInBatches;
  size_t runsAhead;
  std::map<int64_t, SmallVector<Value>> constantsAt;
  std::vector<SmallVector<SmallVector<Value>>> rowValues;
  size_t loaded = 0, stored = 0;
  /// The Direct path's results of the runs (stored up to `stored`).
  SmallVector<SmallVector<Value>> directResults;
  /// Each intermediate's values of the runs since the last batch stored.
  std::vector<SmallVector<SmallVector<Value>>> intermediateValues;
  size_t intermediatesStored = 0;
};

void GemmEpilogueEmitter::emit(Value firstRow, Value firstColumn,
                               ArrayRef<AccumulatorRun> runs) {
  rowStatistics.clear();
  // A staged tile leaves in 16-byte row chunks instead of the
  // accumulators' scattered runs.
  bool staged = t.outputPath == GemmOutputPath::Staged;
  assert((staged || !p.readsStagedTile()) && "the epilogue reads its tile");
  Value staging;
  if (staged) {
    t.barrier();
    staging =
        sharedView(0, {c.getBlockM(), layout.stagingRowElements}, elementType);
  }
  // Results computed all ahead of the stores keep 128 values a thread live
  // beside the epilogue's temporaries and row operand loads (which ptxas
  // may not sink below the stores: the pointers may alias), spilling the
  // accumulators; storing each batch of runs before the next is computed
  // bounds them. 16-bit outputs trade pairs across a quad of runs before
  // they store, which a batch holds whole
  // where the runs list each quad together (the wgmma kernel's do; the
  // tiled kernel's quads are a warp tile's columns apart). Statistics and
  // row reductions read every run's results: those keep one batch.
  bool storesInBatches = p.storesOutput && !p.statistics &&
                         !p.reducesRowsInRegisters() &&
                         (elementBytes(elementType) == 4 || c.isWgmma());
  assert((!c.swapsOperands() ||
          (!staged && !p.batchNorm && p.rowReductions.empty())) &&
         "operands = w_x: no staged tile or reductions");
  RunWalk walk(*this, firstRow, firstColumn, runs, storesInBatches);
  for (auto [i, run] : llvm::enumerate(runs)) {
    SmallVector<Value> results = walk.compute(i);
    if (!staged) {
      walk.keep(std::move(results));
      continue;
    }
    int64_t width = results.size();
    Value vector = vector::FromElementsOp::create(
        b, loc, VectorType::get({width}, b.getF32Type()), results);
    vector::StoreOp::create(
        b, loc, narrowTo(b, loc, vector, elementType), staging,
        ValueRange{add(firstRow, run.row), add(firstColumn, run.column)},
        /*nontemporal=*/false, llvm::Align(width * elementBytes(elementType)));
  }
  if (staged)
    return finishStagedTile(staging);
  ArrayRef<SmallVector<Value>> results = walk.directResults;
  if (p.batchNorm)
    return emitBatchNormFromRegisters(firstRow, firstColumn, runs, results);
  if (p.storesOutput)
    storeFragments(firstRow, firstColumn, runs.drop_front(walk.stored),
                   results.drop_front(walk.stored), args.out);
  if (p.statistics)
    emitStatisticsFromRegisters(firstRow, firstColumn, runs, results);
  if (p.reducesRowsInRegisters())
    emitRowPartialsFromRegisters(firstRow, firstColumn, runs, results);
}

void GemmEpilogueEmitter::finishStagedTile(Value staging) {
  t.barrier();
  if (p.batchNorm)
    return emitBatchNormFromStagedTile(staging);
  if (p.storesOutput)
    storeStagedTile(staging);
  if (p.statistics)
    emitStatistics(staging);
  if (!p.rowReductions.empty())
    emitRowPartials(staging);
}

SmallVector<SmallVector<Value>>
GemmEpilogueEmitter::loadRowOperands(Value firstRow, Value firstColumn,
                                     const AccumulatorRun &run,
                                     size_t runNumber) {
  int64_t width = run.values.size();
  Value row = add(firstRow, run.row);
  Value column = add(firstColumn, run.column);
  SmallVector<SmallVector<Value>> values(width);
  if (args.rowOperands.empty())
    return values;
  // Rows and columns past the matrix (a ragged last tile) read its last
  // elements instead: their results are never stored.
  Value lastRow = arith::SubIOp::create(b, loc, t.rows, idx(1));
  // A run down a column (operands = w_x) loads an element a row, each
  // alone: the swapped tiles take small batches, whose row operands are
  // small.
  // A draw's key, from the seed its operand holds, and the index of its
  // element (m, g) of its [M, G] matrix, `m * G + g` (index values).
  auto drawKey = [&](Value operand) {
    return philoxKey(
        b, loc, memref::LoadOp::create(b, loc, operand, ValueRange{idx(0)}),
        memref::LoadOp::create(b, loc, operand, ValueRange{idx(1)}));
  };
  auto drawIndex = [&](const RowOperandSource &source, Value rowOfElement,
                       Value group) -> Value {
    return arith::IndexCastUIOp::create(
        b, loc, b.getI64Type(),
        add(arith::MulIOp::create(b, loc, rowOfElement, idx(source.groups)),
            group));
  };
  if (c.swapsOperands()) {
    Value globalColumn =
        arith::MinUIOp::create(b, loc, add(t.columnBase, column), idx(p.n - 1));
    for (auto [operand, source] : llvm::zip(args.rowOperands, p.rows)) {
      Value group = div(globalColumn, p.n / source.groups);
      std::optional<std::pair<Value, Value>> key;
      if (source.isDraw())
        key = drawKey(operand);
      for (int64_t j = 0; j < width; ++j) {
        Value rowOfElement = arith::MinUIOp::create(
            b, loc, add(t.rowBase, add(row, j)), lastRow);
        values[j].push_back(
            key ? drawElement(b, loc, *key, *source.drawStream,
                              drawIndex(source, rowOfElement, group),
                              elementType)
                : widen(memref::LoadOp::create(
                      b, loc, operand, ValueRange{rowOfElement, group})));
      }
    }
    return values;
  }
  Value globalRow =
      arith::MinUIOp::create(b, loc, add(t.rowBase, row), lastRow);
  Value globalColumn = add(t.columnBase, column);
  for (auto [index, operandAndSource] :
       llvm::enumerate(llvm::zip(args.rowOperands, p.rows))) {
    Value operand = std::get<0>(operandAndSource);
    const RowOperandSource &source = std::get<1>(operandAndSource);
    int64_t groups = source.groups;
    if (providedOperand == index) {
      SmallVector<Value> provided = providedRows(runNumber);
      assert(provided.size() == static_cast<size_t>(width) &&
             "provided values of another run");
      for (int64_t j = 0; j < width; ++j)
        values[j].push_back(widen(provided[j]));
      continue;
    }
    if (source.isDraw()) {
      std::pair<Value, Value> key = drawKey(operand);
      int64_t groupColumns = p.n / groups;
      if (groupColumns == 1) {
        // A run of consecutive elements (its first column a multiple of
        // its width; columns past the matrix draw elements never stored).
        SmallVector<Value> run =
            drawRun(b, loc, key, *source.drawStream,
                    drawIndex(source, globalRow, globalColumn), width, p.n,
                    elementType);
        for (int64_t j = 0; j < width; ++j)
          values[j].push_back(run[j]);
        continue;
      }
      for (int64_t j = 0; j < width; ++j) {
        Value at = arith::MinUIOp::create(b, loc, add(globalColumn, j),
                                          idx(p.n - 1));
        values[j].push_back(drawElement(
            b, loc, key, *source.drawStream,
            drawIndex(source, globalRow, div(at, groupColumns)),
            elementType));
      }
      continue;
    }
    // A full [M, N] operand whose rows hold whole runs is read a run at a
    // time: the run's first column is a multiple of its width, and the
    // runtime's buffers are 16-byte aligned.
    if (groups == p.n && width > 1 && p.n % width == 0) {
      Value first =
          arith::MinUIOp::create(b, loc, globalColumn, idx(p.n - width));
      Value vector = vector::LoadOp::create(
          b, loc, VectorType::get({width}, elementType), operand,
          ValueRange{globalRow, first}, /*nontemporal=*/false,
          llvm::Align(
              std::min(width * elementBytes(elementType), kGemmChunkBytes)));
      for (int64_t j = 0; j < width; ++j)
        values[j].push_back(
            widen(vector::ExtractOp::create(b, loc, vector, j)));
      continue;
    }
    int64_t groupColumns = p.n / groups;
    auto load = [&](Value at) {
      Value clamped = arith::MinUIOp::create(b, loc, at, idx(p.n - 1));
      return widen(memref::LoadOp::create(
          b, loc, operand, ValueRange{globalRow, div(clamped, groupColumns)}));
    };
    // A row statistic: once for all runs of the row.
    if (groups == 1) {
      Value &value = rowStatistics[{index, run.row}];
      if (!value)
        value = load(globalColumn);
      for (int64_t j = 0; j < width; ++j)
        values[j].push_back(value);
      continue;
    }
    // A run within one group reads its element once.
    if (groupColumns % width == 0) {
      Value value = load(globalColumn);
      for (int64_t j = 0; j < width; ++j)
        values[j].push_back(value);
      continue;
    }
    for (int64_t j = 0; j < width; ++j)
      values[j].push_back(load(add(globalColumn, j)));
  }
  return values;
}

void GemmEpilogueEmitter::storeFragments(Value firstRow, Value firstColumn,
                                         ArrayRef<AccumulatorRun> runs,
                                         ArrayRef<SmallVector<Value>> results,
                                         Value target) {
  if (c.swapsOperands())
    return storeColumnFragments(firstRow, firstColumn, runs, results, target);
  // A lane's pair runs of 16-bit outputs fill a quarter of a 32-byte
  // sector each; traded within the quad, they leave as whole 16-byte
  // chunks.
  std::vector<bool> stored(runs.size());
  for (const std::array<size_t, 4> &quad : pairQuadsOf(runs)) {
    SmallVector<Value> pairs;
    for (size_t member : quad) {
      pairs.push_back(results[member][0]);
      pairs.push_back(results[member][1]);
      stored[member] = true;
    }
    const AccumulatorRun &run = runs[quad.front()];
    storeQuadChunks(add(firstRow, run.row), add(firstColumn, run.column), pairs,
                    target);
  }
  for (auto [i, run] : llvm::enumerate(runs))
    if (!stored[i])
      storeRun(add(firstRow, run.row), add(firstColumn, run.column), results[i],
               target);
}

SmallVector<std::array<size_t, 4>>
GemmEpilogueEmitter::pairQuadsOf(ArrayRef<AccumulatorRun> runs) {
  SmallVector<std::array<size_t, 4>> quads;
  // Chunks never straddle N when it is a multiple of 8.
  if (elementBytes(elementType) != 2 || p.n % chunkElements != 0)
    return quads;
  std::map<std::pair<int64_t, int64_t>, size_t> runAt;
  for (auto [i, run] : llvm::enumerate(runs))
    runAt[{run.row, run.column}] = i;
  for (const AccumulatorRun &run : runs) {
    if (run.values.size() != 2 || run.row % 16 != 0 || run.column % 16 != 0)
      continue;
    static constexpr std::pair<int64_t, int64_t> offsets[] = {
        {0, 0}, {0, 8}, {8, 0}, {8, 8}};
    std::array<size_t, 4> quad;
    bool whole = true;
    for (auto [member, offset] : llvm::enumerate(offsets)) {
      auto it =
          runAt.find({run.row + offset.first, run.column + offset.second});
      whole = whole && it != runAt.end() && runs[it->second].values.size() == 2;
      if (!whole)
        break;
      quad[member] = it->second;
    }
    if (whole)
      quads.push_back(quad);
  }
  return quads;
}

/// The 8x8 matrix of 16-bit elements whose row l / 4, columns 2 (l % 4),
/// +1 lane l holds in `packed` (i32), transposed: lane l then holds row
/// l / 4, columns 2 (l % 4), +1 of the transpose. The whole warp runs it.
static Value transposeMatrix(OpBuilder &b, Location loc, Value packed) {
  return LLVM::InlineAsmOp::create(
             b, loc, b.getI32Type(), ValueRange{packed},
             "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;", "=r,r",
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

void GemmEpilogueEmitter::storeColumnFragments(
    Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
    ArrayRef<SmallVector<Value>> results, Value target) {
  // A lane's runs: rows firstRow + run.row, +1 (firstRow = 2 (l % 4)) of
  // column firstColumn + run.column (firstColumn = the 8-column block's
  // first + l / 4); a quad of runs at rows r, r + 8 and columns c, c + 8
  // is four 8x8 matrices of the warp, which transposed are in
  // storePackedQuadChunks's order.
  Value laneRow = div(rem(t.thread, kWarpSize), 4);
  std::vector<bool> stored(runs.size());
  for (const std::array<size_t, 4> &quad : pairQuadsOf(runs)) {
    SmallVector<Value> packed;
    for (size_t member : quad) {
      packed.push_back(transposeMatrix(
          b, loc, packPair(results[member][0], results[member][1])));
      stored[member] = true;
    }
    // Transposed, lane l holds row run.row + l / 4 (+ 8), columns
    // run.column + 2 (l % 4), +1 (+ 8) of the block's columns.
    const AccumulatorRun &run = runs[quad.front()];
    Value blockColumn = sub(add(firstColumn, run.column), laneRow);
    storePackedQuadChunks(add(laneRow, run.row), add(blockColumn, firstRow),
                          packed, target);
  }
  for (auto [i, run] : llvm::enumerate(runs)) {
    if (stored[i])
      continue;
    for (auto [e, value] : llvm::enumerate(results[i]))
      storeRun(add(firstRow, run.row + static_cast<int64_t>(e)),
               add(firstColumn, run.column), value, target);
  }
}

Value GemmEpilogueEmitter::packPair(Value first, Value second) {
  Value pair = narrowTo(
      b, loc,
      vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, b.getF32Type()), {first, second}),
      elementType);
  return vector::ExtractOp::create(
      b, loc,
      vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                pair),
      0);
}

void GemmEpilogueEmitter::storeQuadChunks(Value row, Value column,
                                          ArrayRef<Value> pairs, Value target) {
  // The lane's four pairs, packed: index 2h + j holds row + 8h, columns
  // column + 8j, +1.
  SmallVector<Value> packed;
  for (int64_t i = 0; i < 4; ++i)
    packed.push_back(packPair(pairs[2 * i], pairs[2 * i + 1]));
  storePackedQuadChunks(row, column, packed, target);
}

void GemmEpilogueEmitter::storePackedQuadChunks(Value row, Value column,
                                                ArrayRef<Value> packed,
                                                Value target) {
  Type i32 = b.getI32Type();
  Value quadLane = rem(t.thread, 4);
  Value upper = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                      quadLane, idx(2));
  Value odd = equal(rem(quadLane, 2), 1);
  auto shuffle = [&](Value v, int32_t distance) -> Value {
    auto i32Constant = [&](int32_t c) -> Value {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(c));
    };
    return gpu::ShuffleOp::create(b, loc, v, i32Constant(distance),
                                  i32Constant(kWarpSize), gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  // Round 1, with lane ^ 2: keep the pairs of this lane's row half h, give
  // the other half's. Values then held: [own j=0, own j=1, partner's j=0,
  // partner's j=1], all of row half h.
  SmallVector<Value> half;
  for (int64_t j = 0; j < 2; ++j) {
    Value mine = select(upper, packed[2 + j], packed[j]);
    Value theirs = shuffle(select(upper, packed[j], packed[2 + j]), 2);
    half.push_back(mine);
    half.push_back(theirs);
  }
  // half = [own j0, partner j0, own j1, partner j1]. Round 2, with lane ^ 1:
  // keep this lane's column block j, give the other.
  Value ownKept = select(odd, half[2], half[0]);
  Value partnerKept = select(odd, half[3], half[1]);
  Value ownGot = shuffle(select(odd, half[0], half[2]), 1);
  Value partnerGot = shuffle(select(odd, half[1], half[3]), 1);
  // The chunk's four pairs come from quad lanes t, t ^ 2, t ^ 1, t ^ 3
  // (ownKept, partnerKept, ownGot, partnerGot); in column order, lane s's
  // pair is at position s.
  Value low = select(upper, partnerKept, ownKept);   // from lane t & ~2
  Value high = select(upper, ownKept, partnerKept);  // from lane t | 2
  Value lowGot = select(upper, partnerGot, ownGot);  // from lane (t ^ 1) & ~2
  Value highGot = select(upper, ownGot, partnerGot); // from lane (t ^ 1) | 2
  // Positions 0, 1 (lanes 0, 1) and 2, 3 (lanes 2, 3): an odd lane's own
  // pairs are the second of each.
  SmallVector<Value> ordered = {
      select(odd, lowGot, low), select(odd, low, lowGot),
      select(odd, highGot, high), select(odd, high, highGot)};
  Value chunk = vector::BitCastOp::create(
      b, loc, VectorType::get({chunkElements}, elementType),
      vector::FromElementsOp::create(b, loc, VectorType::get({4}, i32),
                                     ordered));
  Value chunkRow = add(add(t.rowBase, row), select(upper, idx(8), idx(0)));
  // The quad's first column: the lane's minus its 2 (l % 4).
  Value chunkColumn = add(sub(add(t.columnBase, column), mul(quadLane, 2)),
                          select(odd, idx(8), idx(0)));
  guarded(both(lessThan(chunkRow, t.rows), lessThan(chunkColumn, idx(p.n))),
          [&] {
            vector::StoreOp::create(
                b, loc, chunk, target, ValueRange{chunkRow, chunkColumn},
                /*nontemporal=*/false,
                llvm::Align(chunkElements * elementBytes(elementType)));
          });
}

void GemmEpilogueEmitter::storeRun(Value row, Value column,
                                   ArrayRef<Value> results, Value target) {
  Value vector = vector::FromElementsOp::create(
      b, loc,
      VectorType::get({static_cast<int64_t>(results.size())}, b.getF32Type()),
      results);
  storeVector(narrowTo(b, loc, vector, elementType), row, column, target);
}

void GemmEpilogueEmitter::storeVector(Value vector, Value row, Value column,
                                      Value target) {
  int64_t width = cast<VectorType>(vector.getType()).getNumElements();
  Value globalRow = add(t.rowBase, row);
  Value globalColumn = add(t.columnBase, column);
  Value rowOk = lessThan(globalRow, t.rows);
  // Vectors start at multiples of their width: with N one too, a vector is
  // all in or all out of range, and aligned.
  if (p.n % width == 0) {
    guarded(both(rowOk, lessThan(globalColumn, idx(p.n))), [&] {
      vector::StoreOp::create(b, loc, vector, target,
                              ValueRange{globalRow, globalColumn},
                              /*nontemporal=*/false,
                              llvm::Align(width * elementBytes(elementType)));
    });
    return;
  }
  for (int64_t e = 0; e < width; ++e) {
    Value elementColumn = add(globalColumn, e);
    guarded(both(rowOk, lessThan(elementColumn, idx(p.n))), [&] {
      memref::StoreOp::create(b, loc,
                              vector::ExtractOp::create(b, loc, vector, e),
                              target, ValueRange{globalRow, elementColumn});
    });
  }
}

void GemmEpilogueEmitter::storeStagedTile(
    Value staging, function_ref<Value(Value, Value)> transform) {
  int64_t chunksPerRow = c.getBlockN() / chunkElements;
  int64_t chunks = c.getBlockM() * chunksPerRow;
  auto chunkType = VectorType::get({chunkElements}, elementType);
  for (int64_t first = 0; first < chunks; first += t.threads) {
    Value id = add(t.thread, first);
    Value row = div(id, chunksPerRow);
    Value column = mul(rem(id, chunksPerRow), chunkElements);
    Value chunk = vector::LoadOp::create(
        b, loc, chunkType, staging, ValueRange{row, column},
        /*nontemporal=*/false, llvm::Align(kGemmChunkBytes));
    storeVector(transform ? transform(chunk, column) : chunk, row, column,
                args.out);
  }
}

Value GemmEpilogueEmitter::tileRowCount() {
  return arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, t.rows, t.rowBase),
      idx(c.getBlockM()));
}

Value GemmEpilogueEmitter::tileRowCountF32() {
  return arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), tileRowCount()));
}

Value GemmEpilogueEmitter::isWholeTile() {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                               add(t.rowBase, c.getBlockM()), t.rows);
}

SmallVector<Value>
GemmEpilogueEmitter::sweepTileRows(Value wholeTile, size_t count,
                                   function_ref<void(bool masked)> sweep) {
  auto sums = scf::IfOp::create(
      b, loc, SmallVector<Type>(count, b.getF32Type()), wholeTile,
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard branch(b);
  b.setInsertionPointToStart(&sums.getThenRegion().front());
  sweep(/*masked=*/false);
  b.setInsertionPointToStart(&sums.getElseRegion().front());
  sweep(/*masked=*/true);
  return SmallVector<Value>(sums.getResults());
}

Value GemmEpilogueEmitter::momentsIndex(Value globalColumn) {
  return add(arith::MulIOp::create(b, loc, globalColumn, t.blockRowTiles),
             t.tileM);
}

void GemmEpilogueEmitter::emitStatistics(Value staging) {
  sumStagedColumnMoments(
      staging, [&](Value column, Value mean, Value squares, Value) {
        Value index = momentsIndex(add(t.columnBase, column));
        memref::StoreOp::create(b, loc, mean, args.mean, index);
        memref::StoreOp::create(b, loc, squares, args.m2, index);
      });
}

void GemmEpilogueEmitter::sumStagedColumnMoments(
    Value staging, function_ref<void(Value, Value, Value, Value)> finish) {
  // One thread a column of the staged tile: the moments of its valid rows,
  // in two passes (mean, then squared deviations: no cancellation), of the
  // values as stored, which are what the batch norm normalizes.
  Value validRows = tileRowCount();
  Value count = arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), validRows));
  for (int64_t first = 0; first < c.getBlockN(); first += t.threads) {
    Value column = add(t.thread, first);
    Value globalColumn = add(t.columnBase, column);
    guarded(both(lessThan(column, idx(c.getBlockN())),
                 lessThan(globalColumn, idx(p.n))),
            [&] {
              auto sumOver = [&](function_ref<Value(Value)> term) -> Value {
                auto loop = scf::ForOp::create(
                    b, loc, idx(0), validRows, idx(1), ValueRange{f32(0.0)},
                    [&](OpBuilder &nb, Location, Value row, ValueRange sum) {
                      OpBuilder::InsertionGuard guard(b);
                      b.setInsertionPoint(nb.getInsertionBlock(),
                                          nb.getInsertionPoint());
                      Value v = widen(memref::LoadOp::create(
                          b, loc, staging, ValueRange{row, column}));
                      scf::YieldOp::create(b, loc,
                                           ValueRange{arith::AddFOp::create(
                                               b, loc, sum[0], term(v))});
                    });
                return loop.getResult(0);
              };
              Value columnMean = arith::DivFOp::create(
                  b, loc, sumOver([](Value v) { return v; }), count);
              Value squares = sumOver([&](Value v) -> Value {
                Value d = arith::SubFOp::create(b, loc, v, columnMean);
                return arith::MulFOp::create(b, loc, d, d);
              });
              finish(column, columnMean, squares, count);
            });
  }
}

GemmEpilogueEmitter::ColumnLaneSums
GemmEpilogueEmitter::sumOverColumnLanes(SmallVector<Value> slots) {
  Value lane = rem(t.thread, kWarpSize);
  auto i32 = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  ColumnLaneSums sums{std::move(slots), idx(0), Value()};
  for (int32_t distance : {16, 8, 4}) {
    auto partners = [&](Value v) -> Value {
      return gpu::ShuffleOp::create(b, loc, v, i32(distance), i32(kWarpSize),
                                    gpu::ShuffleMode::XOR)
          .getShuffleResult();
    };
    Value bit = rem(div(lane, distance), 2);
    Value upper = equal(bit, 1);
    size_t count = sums.totals.size();
    if (count % 2) {
      // Both lanes get the same bits (addition commutes); the lower stores.
      for (Value &total : sums.totals)
        total = arith::AddFOp::create(b, loc, total, partners(total));
      Value lower = equal(bit, 0);
      sums.stores = sums.stores ? both(sums.stores, lower) : lower;
      continue;
    }
    size_t half = count / 2;
    SmallVector<Value> kept;
    for (size_t i = 0; i < half; ++i) {
      Value low = sums.totals[i], high = sums.totals[i + half];
      Value given = partners(select(upper, low, high));
      kept.push_back(
          arith::AddFOp::create(b, loc, select(upper, high, low), given));
    }
    sums.totals = std::move(kept);
    sums.firstSlot = add(sums.firstSlot, select(upper, idx(half), idx(0)));
  }
  return sums;
}

SmallVector<SmallVector<Value>>
GemmEpilogueEmitter::storedValues(ArrayRef<AccumulatorRun> runs,
                                  ArrayRef<SmallVector<Value>> results) {
  // Narrowed a run at a time as the stores narrow them (the conversions
  // are shared).
  SmallVector<SmallVector<Value>> stored;
  for (auto [run, values] : llvm::zip(runs, results)) {
    int64_t width = values.size();
    Value asStored = widen(
        narrowTo(b, loc,
                 vector::FromElementsOp::create(
                     b, loc, VectorType::get({width}, b.getF32Type()), values),
                 elementType));
    SmallVector<Value> elements;
    for (int64_t e = 0; e < width; ++e)
      elements.push_back(vector::ExtractOp::create(b, loc, asStored, e));
    stored.push_back(std::move(elements));
  }
  return stored;
}

/// sumColumnMoments' sums: each of the thread's column slots summed over
/// the block's rows within M into a scratch row a warp, then each column's
/// total over the warps.
struct GemmEpilogueEmitter::ColumnMomentSums {
  ColumnMomentSums(GemmEpilogueEmitter &e, Value firstRow, Value firstColumn,
                   ArrayRef<AccumulatorRun> runs,
                   ArrayRef<SmallVector<Value>> values)
      : e(e), firstRow(firstRow), firstColumn(firstColumn), runs(runs),
        values(values), warps(e.t.threads / kWarpSize) {
    // The thread's columns in slots: slot s is column 8 (s / 2) + s % 2 of
    // the thread's (the runs of its two rows are pairs, one each 8-column
    // block), so that a lane's slots from sumOverColumnLanes are found by
    // their number.
    for (const AccumulatorRun &run : runs)
      for (size_t j = 0; j < run.values.size(); ++j)
        if (!llvm::is_contained(slotColumns, run.column + int64_t(j)))
          slotColumns.push_back(run.column + j);
    assert(llvm::all_of(llvm::enumerate(slotColumns),
                        [](auto slot) {
                          return slot.value() ==
                                 static_cast<int64_t>(8 * (slot.index() / 2) +
                                                      slot.index() % 2);
                        }) &&
           "wgmma accumulator pairs, one each 8-column block");
    warp = e.div(e.t.thread, kWarpSize);
    scratch = e.sharedView(e.layout.moments, {warps + 1, e.c.getBlockN()},
                           e.b.getF32Type());
    meansRow = e.idx(warps);
  }

  size_t slotOf(int64_t column) const {
    return llvm::find(slotColumns, column) - slotColumns.begin();
  }
  Value columnOfSlot(Value slot) {
    return e.add(firstColumn, e.add(e.mul(e.div(slot, 2), 8), e.rem(slot, 2)));
  }

  /// The slots' accumulate(total, value, slot) over the block's rows
  /// within M, in scratch rows 0..warps-1 (one a warp), after a barrier.
  void sumIntoScratch(Value wholeTile,
                      function_ref<Value(Value, Value, size_t)> accumulate) {
    auto sweep = [&](bool masked) {
      SmallVector<Value> slots(slotColumns.size(), e.f32(0.0));
      for (auto [run, runValues] : llvm::zip(runs, values)) {
        Value rowOk =
            masked ? e.lessThan(e.add(e.t.rowBase, e.add(firstRow, run.row)),
                                e.t.rows)
                   : Value();
        for (auto [j, value] : llvm::enumerate(runValues)) {
          size_t slot = slotOf(run.column + j);
          Value next = accumulate(slots[slot], value, slot);
          slots[slot] = masked ? e.select(rowOk, next, slots[slot]) : next;
        }
      }
      scf::YieldOp::create(e.b, e.loc, slots);
    };
    ColumnLaneSums laneSums = e.sumOverColumnLanes(
        e.sweepTileRows(wholeTile, slotColumns.size(), sweep));
    auto store = [&] {
      for (auto [i, total] : llvm::enumerate(laneSums.totals))
        memref::StoreOp::create(
            e.b, e.loc, total, scratch,
            ValueRange{warp, columnOfSlot(e.add(laneSums.firstSlot, i))});
    };
    if (laneSums.stores)
      e.guarded(laneSums.stores, store);
    else
      store();
    e.t.barrier();
  }

  /// `body(column, total)` for each column of the tile: the total of its
  /// warps' sums, in warp order.
  void forEachColumnTotal(function_ref<void(Value, Value)> body) {
    OpBuilder &b = e.b;
    Location loc = e.loc;
    for (int64_t first = 0; first < e.c.getBlockN(); first += e.t.threads) {
      Value column = e.add(e.t.thread, first);
      auto merge = [&] {
        Value total = memref::LoadOp::create(b, loc, scratch,
                                             ValueRange{e.idx(0), column});
        for (int64_t w = 1; w < warps; ++w)
          total = arith::AddFOp::create(
              b, loc, total,
              memref::LoadOp::create(b, loc, scratch,
                                     ValueRange{e.idx(w), column}));
        body(column, total);
      };
      if (first + e.t.threads <= e.c.getBlockN())
        merge();
      else
        e.guarded(e.lessThan(column, e.idx(e.c.getBlockN())), merge);
    }
  }

  GemmEpilogueEmitter &e;
  Value firstRow, firstColumn;
  ArrayRef<AccumulatorRun> runs;
  ArrayRef<SmallVector<Value>> values;
  int64_t warps;
  SmallVector<int64_t> slotColumns;
  Value warp, scratch, meansRow;
};

void GemmEpilogueEmitter::sumColumnMoments(
    Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
    ArrayRef<SmallVector<Value>> values,
    function_ref<void(Value, Value, Value, Value)> finish) {
  if (c.swapsOperands())
    return sumColumnMomentsInQuads(firstRow, firstColumn, runs, values, finish);
  ColumnMomentSums sums(*this, firstRow, firstColumn, runs, values);
  Value count = tileRowCountF32();
  Value wholeTile = isWholeTile();
  // Two passes, as emitStatistics: the means, then the squared deviations
  // from them (no cancellation).
  sums.sumIntoScratch(wholeTile, [&](Value total, Value v, size_t) -> Value {
    return arith::AddFOp::create(b, loc, total, v);
  });
  sums.forEachColumnTotal([&](Value column, Value total) {
    memref::StoreOp::create(b, loc, arith::DivFOp::create(b, loc, total, count),
                            sums.scratch, ValueRange{sums.meansRow, column});
  });
  t.barrier();
  SmallVector<Value> slotMeans;
  for (int64_t column : sums.slotColumns)
    slotMeans.push_back(memref::LoadOp::create(
        b, loc, sums.scratch,
        ValueRange{sums.meansRow, add(firstColumn, column)}));
  sums.sumIntoScratch(
      wholeTile, [&](Value total, Value v, size_t slot) -> Value {
        Value d = arith::SubFOp::create(b, loc, v, slotMeans[slot]);
        return math::FmaOp::create(b, loc, d, d, total);
      });
  sums.forEachColumnTotal([&](Value column, Value squares) {
    Value mean = memref::LoadOp::create(b, loc, sums.scratch,
                                        ValueRange{sums.meansRow, column});
    finish(column, mean, squares, count);
  });
}

void GemmEpilogueEmitter::sumColumnMomentsInQuads(
    Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
    ArrayRef<SmallVector<Value>> values,
    function_ref<void(Value, Value, Value, Value)> finish) {
  // One slot a column of the thread's, in the order of first use.
  SmallVector<int64_t> slotColumns;
  for (const AccumulatorRun &run : runs)
    if (!llvm::is_contained(slotColumns, run.column))
      slotColumns.push_back(run.column);
  auto slotOf = [&](int64_t column) {
    return llvm::find(slotColumns, column) - slotColumns.begin();
  };
  Value count = tileRowCountF32();
  Value wholeTile = isWholeTile();
  // Each slot's accumulate(total, value, slot) over the tile's rows within
  // M, summed over the quad.
  auto sumOverRows = [&](function_ref<Value(Value, Value, size_t)> accumulate) {
    auto sweep = [&](bool masked) {
      SmallVector<Value> slots(slotColumns.size(), f32(0.0));
      for (auto [run, runValues] : llvm::zip(runs, values)) {
        size_t slot = slotOf(run.column);
        for (auto [e, value] : llvm::enumerate(runValues)) {
          Value next = accumulate(slots[slot], value, slot);
          if (masked) {
            Value row = add(add(t.rowBase, firstRow),
                            run.row + static_cast<int64_t>(e));
            next = select(lessThan(row, t.rows), next, slots[slot]);
          }
          slots[slot] = next;
        }
      }
      scf::YieldOp::create(b, loc, slots);
    };
    SmallVector<Value> totals;
    for (Value partial : sweepTileRows(wholeTile, slotColumns.size(), sweep))
      totals.push_back(
          reduceAcrossLanes(b, loc, ReductionKind::sum, partial, /*lanes=*/4));
    return totals;
  };
  // Two passes, as emitStatistics: the means, then the squared deviations
  // from them (no cancellation).
  SmallVector<Value> means;
  for (Value total : sumOverRows([&](Value total, Value v, size_t) -> Value {
         return arith::AddFOp::create(b, loc, total, v);
       }))
    means.push_back(arith::DivFOp::create(b, loc, total, count));
  SmallVector<Value> squares =
      sumOverRows([&](Value total, Value v, size_t slot) -> Value {
        Value d = arith::SubFOp::create(b, loc, v, means[slot]);
        return math::FmaOp::create(b, loc, d, d, total);
      });
  guarded(equal(rem(t.thread, 4), 0), [&] {
    for (auto [slot, column] : llvm::enumerate(slotColumns))
      finish(add(firstColumn, column), means[slot], squares[slot], count);
  });
}

void GemmEpilogueEmitter::emitStatisticsFromRegisters(
    Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
    ArrayRef<SmallVector<Value>> results) {
  // The f32 results' moments, not the stored 16-bit values': widening each
  // stored value is one of the four instructions an element of the two
  // passes, which the GEMM pays for under the power cap, and each value
  // differs by at most its rounding to the output type.
  sumColumnMoments(firstRow, firstColumn, runs, results,
                   [&](Value column, Value mean, Value squares, Value) {
                     Value globalColumn = add(t.columnBase, column);
                     guarded(lessThan(globalColumn, idx(p.n)), [&] {
                       Value index = momentsIndex(globalColumn);
                       memref::StoreOp::create(b, loc, mean, args.mean, index);
                       memref::StoreOp::create(b, loc, squares, args.m2, index);
                     });
                   });
}

void GemmEpilogueEmitter::finishBatchNormColumn(Value column, Value mean,
                                                Value squares, Value count,
                                                const CoefficientRows &rows) {
  const GemmBatchNorm &bn = *p.batchNorm;
  Value globalColumn = add(t.columnBase, column);
  Value inside = lessThan(globalColumn, idx(p.n));
  Value safeColumn = select(inside, globalColumn, idx(0));
  auto load = [&](Value vector) {
    return widen(memref::LoadOp::create(b, loc, vector, safeColumn));
  };
  // The whole batch is the tile's rows: the biased variance normalizes.
  Value variance = arith::DivFOp::create(b, loc, squares, count);
  Value weight = args.bnWeight ? load(args.bnWeight) : Value();
  Value bias = args.bnBias ? load(args.bnBias) : Value();
  Value invStd = buildInvStd(b, loc, variance, bn.config.getEpsilonValue());
  BatchNormCoefficients coefficients =
      buildBatchNormCoefficients(b, loc, mean, invStd, weight, bias);
  auto keep = [&](Value value, Value row) {
    memref::StoreOp::create(b, loc, value, rows.scratch,
                            ValueRange{row, column});
  };
  keep(coefficients.center, rows.center);
  keep(coefficients.scale, rows.scale);
  keep(coefficients.shift, rows.shift);
  if (!args.runningMean && !args.batchMean)
    return;
  guarded(inside, [&] {
    auto store = [&](Value value, Type type, Value to) {
      memref::StoreOp::create(b, loc, narrowTo(b, loc, value, type), to,
                              globalColumn);
    };
    if (args.runningMean) {
      auto update = [&](Value running, Value batch, Value to) {
        store(buildRunningStatisticUpdate(b, loc, bn.config, load(running),
                                          batch),
              bn.operands.statType, to);
      };
      update(args.runningMean, mean, args.newMean);
      update(args.runningVar, buildUnbiasedVariance(b, loc, variance, count),
             args.newVar);
    }
    if (args.batchMean) {
      Type type = bn.operands.batchStatType;
      store(mean, type, args.batchMean);
      store(invStd, type, args.batchInvStd);
    }
  });
}

Value GemmEpilogueEmitter::applyBatchNorm(Value value, Value column,
                                          const CoefficientRows &rows) {
  auto at = [&](Value view, Value row) -> Value {
    return memref::LoadOp::create(b, loc, view, ValueRange{row, column});
  };
  Value normalized = applyBatchNormCoefficients(b, loc, value,
                                                {at(rows.scratch, rows.center),
                                                 at(rows.scratch, rows.scale),
                                                 at(rows.scratch, rows.shift)});
  const GemmBatchNorm &bn = *p.batchNorm;
  if (!bn.after)
    return normalized;
  int64_t afterRow = (args.bias ? 1 : 0) + args.columns.size();
  SmallVector<Value> afterOperands;
  for (size_t i = 0; i < args.afterColumns.size(); ++i)
    afterOperands.push_back(at(columnConstants, idx(afterRow + i)));
  return bn.after(b, loc, normalized, afterOperands);
}

void GemmEpilogueEmitter::emitBatchNormFromStagedTile(Value staging) {
  Value scratch =
      sharedView(layout.moments, {3, c.getBlockN()}, b.getF32Type());
  CoefficientRows rows{scratch, idx(0), idx(1), idx(2)};
  sumStagedColumnMoments(
      staging, [&](Value column, Value mean, Value squares, Value count) {
        finishBatchNormColumn(column, mean, squares, count, rows);
      });
  t.barrier();
  storeStagedTile(staging, [&](Value chunk, Value column) -> Value {
    Value values = widen(chunk);
    SmallVector<Value> normalized;
    for (int64_t e = 0; e < chunkElements; ++e)
      normalized.push_back(applyBatchNorm(
          vector::ExtractOp::create(b, loc, values, e), add(column, e), rows));
    return narrowTo(b, loc,
                    vector::FromElementsOp::create(
                        b, loc,
                        VectorType::get({chunkElements}, b.getF32Type()),
                        normalized),
                    elementType);
  });
}

void GemmEpilogueEmitter::emitBatchNormFromRegisters(
    Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
    ArrayRef<SmallVector<Value>> results) {
  SmallVector<SmallVector<Value>> stored = storedValues(runs, results);
  int64_t warps = t.threads / kWarpSize;
  Value scratch =
      sharedView(layout.moments, {warps + 1, c.getBlockN()}, b.getF32Type());
  // Once a column's thread has read its warps' totals (rows 0 to warps - 1,
  // warps >= 4), those rows of the column are free for its coefficients.
  CoefficientRows rows{scratch, idx(0), idx(1), idx(2)};
  sumColumnMoments(firstRow, firstColumn, runs, stored,
                   [&](Value column, Value mean, Value squares, Value count) {
                     finishBatchNormColumn(column, mean, squares, count, rows);
                   });
  t.barrier();
  // The loads of a column's coefficients, the same for both rows of the
  // thread's runs of it, are left to common-subexpression elimination.
  SmallVector<SmallVector<Value>> normalized;
  for (auto [run, values] : llvm::zip(runs, stored)) {
    SmallVector<Value> outputs;
    for (auto [j, value] : llvm::enumerate(values))
      outputs.push_back(
          applyBatchNorm(value, add(firstColumn, run.column + j), rows));
    normalized.push_back(std::move(outputs));
  }
  storeFragments(firstRow, firstColumn, runs, normalized, args.out);
}

Value GemmEpilogueEmitter::spanColumnCount() {
  int64_t span = p.reductionSpan;
  // A span narrower than the tile is a whole group, and N holds whole
  // groups; whole-row spans lose the columns past N.
  Value validColumns = c.getBlockN() == span
                           ? arith::MinUIOp::create(
                                 b, loc, sub(idx(p.n), t.columnBase), idx(span))
                                 .getResult()
                           : idx(span);
  return arith::UIToFPOp::create(
      b, loc, b.getF32Type(),
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), validColumns));
}

Value GemmEpilogueEmitter::spanColumnLimit() {
  int64_t span = p.reductionSpan;
  if (c.getBlockN() != span || p.n % span == 0)
    return Value();
  return sub(idx(p.n), t.columnBase);
}

SmallVector<Value>
GemmEpilogueEmitter::sweepSpan(SpanElements elements,
                               ArrayRef<SpanAccumulation> accumulations,
                               int64_t lanes) {
  SmallVector<Value> totals;
  for (const SpanAccumulation &a : accumulations)
    totals.push_back(f32(getReductionIdentity(a.combiner)));
  elements([&](Value v, Value valid) {
    for (auto [a, total] : llvm::zip(accumulations, totals)) {
      Value term = a.term((*a.fn)(b, loc, v, ValueRange()));
      if (valid)
        term = select(valid, term, f32(getReductionIdentity(a.combiner)));
      total = buildReductionCombine(b, loc, a.combiner, total, term);
    }
  });
  for (auto [a, total] : llvm::zip(accumulations, totals))
    total = reduceAcrossLanes(b, loc, a.combiner, total, lanes);
  return totals;
}

GemmEpilogueEmitter::SpanAccumulation
GemmEpilogueEmitter::shiftedAccumulation(const GemmRowReduction &reduction,
                                         Value firstTotal, Value count,
                                         Value &shift) {
  if (reduction.kind == TileReductionKind::ShiftedExpSum) {
    // The maximum, 0 where infinite (as PyTorch's logsumexp): a tile of
    // -inf sums to 0, one holding +inf to +inf.
    Value infinite = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ,
        math::AbsFOp::create(b, loc, firstTotal), f32(INFINITY));
    shift = select(infinite, f32(0.0), firstTotal);
    // exp(d) as 2^(d log2(e)): one ex2.approx (within 2 ulp) where
    // libdevice's expf takes eight instructions, and the sweep over the
    // tile, which nothing overlaps, is bound by their issue.
    return {ReductionKind::sum, &reduction.fn, [this, shift](Value v) {
              Value d = arith::SubFOp::create(b, loc, v, shift);
              return math::Exp2Op::create(
                         b, loc, arith::MulFOp::create(b, loc, d, f32(M_LOG2E)))
                  .getResult();
            }};
  }
  shift = arith::DivFOp::create(b, loc, firstTotal, count);
  return {ReductionKind::sum, &reduction.fn, [this, shift](Value v) {
            Value d = arith::SubFOp::create(b, loc, v, shift);
            return arith::MulFOp::create(b, loc, d, d).getResult();
          }};
}

SmallVector<Value> GemmEpilogueEmitter::reduceSpan(SpanElements elements,
                                                   Value count, int64_t lanes) {
  // First sweep: every combination, and the maximum or mean each shifted
  // sum needs; then the shifted sums.
  auto identity = [](Value v) { return v; };
  SmallVector<SpanAccumulation> firstSweep;
  for (const GemmRowReduction &reduction : p.rowReductions)
    firstSweep.push_back({reduction.kind == TileReductionKind::Combine
                              ? reduction.combiner
                          : reduction.kind == TileReductionKind::ShiftedExpSum
                              ? ReductionKind::max
                              : ReductionKind::sum,
                          &reduction.fn, identity});
  SmallVector<Value> firsts = sweepSpan(elements, firstSweep, lanes);
  SmallVector<Value> shifts;
  SmallVector<SpanAccumulation> secondSweep;
  for (auto [reduction, firstTotal] : llvm::zip(p.rowReductions, firsts)) {
    Value shift;
    if (reduction.kind != TileReductionKind::Combine)
      secondSweep.push_back(
          shiftedAccumulation(reduction, firstTotal, count, shift));
    shifts.push_back(shift);
  }
  SmallVector<Value> seconds = secondSweep.empty()
                                   ? SmallVector<Value>()
                                   : sweepSpan(elements, secondSweep, lanes);

  SmallVector<Value> partials;
  auto nextSecond = seconds.begin();
  for (auto [reduction, firstTotal, shift] :
       llvm::zip(p.rowReductions, firsts, shifts)) {
    switch (reduction.kind) {
    case TileReductionKind::Combine:
      partials.push_back(firstTotal);
      break;
    case TileReductionKind::ShiftedExpSum:
      partials.append({shift, *nextSecond++});
      break;
    case TileReductionKind::ShiftedSquareSum:
      partials.append({shift, *nextSecond++, count});
      break;
    }
  }
  return partials;
}

void GemmEpilogueEmitter::emitRowPartials(Value staging) {
  // Each tile row is cut into spans of p.reductionSpan columns (a single
  // span for whole rows). A few adjacent threads per span (as many as the
  // threads allow, at most a warp), each taking every threadsPerSpan-th
  // 16-byte chunk of the span from its lane, in order. The chunks are
  // unrolled, so that their loads are in flight together. Every thread runs
  // every step (the shuffles need whole warps); spans past the tile or M
  // compute on span 0 and store nothing.
  int64_t span = p.reductionSpan;
  int64_t spansPerRow = c.getBlockN() / span;
  int64_t spansPerTile = c.getBlockM() * spansPerRow;
  int64_t chunksPerSpan = span / chunkElements;
  int64_t threadsPerSpan = 1;
  while (threadsPerSpan * 2 * spansPerTile <= t.threads &&
         threadsPerSpan * 2 <= kWarpSize &&
         chunksPerSpan % (threadsPerSpan * 2) == 0)
    threadsPerSpan *= 2;
  int64_t spansPerPass = t.threads / threadsPerSpan;
  Value lane = rem(t.thread, threadsPerSpan);
  // The partial column of the tile's first span.
  Value firstSpan = div(t.columnBase, span);
  Value count = spanColumnCount();
  Value validColumns = spanColumnLimit();
  auto chunkType = VectorType::get({chunkElements}, elementType);

  scf::ForOp::create(
      b, loc, idx(0), idx(spansPerTile), idx(spansPerPass), ValueRange(),
      [&](OpBuilder &nb, Location, Value first, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        // The thread's span, the spanInRow-th of tile row `row`.
        Value spanOfTile = add(div(t.thread, threadsPerSpan), first);
        Value spanInTile = lessThan(spanOfTile, idx(spansPerTile));
        spanOfTile = select(spanInTile, spanOfTile, idx(0));
        Value row = spanOfTile, spanInRow, spanColumn;
        if (spansPerRow > 1) {
          row = div(spanOfTile, spansPerRow);
          spanInRow = rem(spanOfTile, spansPerRow);
          spanColumn = mul(spanInRow, span);
        }
        Value globalRow = add(t.rowBase, row);
        Value stores =
            both(both(spanInTile, lessThan(globalRow, t.rows)), equal(lane, 0));
        if (spanColumn)
          stores =
              both(stores, lessThan(add(t.columnBase, spanColumn), idx(p.n)));
        auto elements = [&](function_ref<void(Value, Value)> take) {
          for (int64_t j = 0; j < chunksPerSpan / threadsPerSpan; ++j) {
            Value column = mul(add(lane, j * threadsPerSpan), chunkElements);
            if (spanColumn)
              column = add(spanColumn, column);
            Value chunk = vector::LoadOp::create(
                b, loc, chunkType, staging, ValueRange{row, column},
                /*nontemporal=*/false, llvm::Align(kGemmChunkBytes));
            for (int64_t e = 0; e < chunkElements; ++e)
              take(widen(vector::ExtractOp::create(b, loc, chunk, e)),
                   validColumns ? lessThan(add(column, e), validColumns)
                                : Value());
          }
        };
        SmallVector<Value> partials =
            reduceSpan(elements, count, threadsPerSpan);
        Value partialColumn =
            spanColumn ? add(firstSpan, spanInRow) : firstSpan;
        guarded(stores, [&] {
          for (auto [partial, matrix] : llvm::zip(partials, args.partials))
            memref::StoreOp::create(b, loc, partial, matrix,
                                    ValueRange{globalRow, partialColumn});
        });
        scf::YieldOp::create(b, loc);
      });
}

void GemmEpilogueEmitter::emitRowPartialsFromRegisters(
    Value firstRow, Value firstColumn, ArrayRef<AccumulatorRun> runs,
    ArrayRef<SmallVector<Value>> results) {
  // Each quad of lanes holds whole rows of the tile, and each run lies in
  // one span (spans are whole 8-column blocks): a thread combines its
  // elements of a span, in run order, then the quad's four lanes combine.
  int64_t span = p.reductionSpan;
  int64_t spansPerRow = c.getBlockN() / span;
  Value firstSpan = div(t.columnBase, span);
  Value count = spanColumnCount();
  Value validColumns = spanColumnLimit();
  Value quadLeader = equal(rem(t.thread, 4), 0);
  SmallVector<int64_t> rowOffsets;
  for (const AccumulatorRun &run : runs)
    if (!llvm::is_contained(rowOffsets, run.row))
      rowOffsets.push_back(run.row);
  for (int64_t rowOffset : rowOffsets) {
    Value globalRow = add(t.rowBase, add(firstRow, rowOffset));
    for (int64_t spanInRow = 0; spanInRow < spansPerRow; ++spanInRow) {
      auto elements = [&](function_ref<void(Value, Value)> take) {
        for (auto [run, values] : llvm::zip(runs, results)) {
          if (run.row != rowOffset || run.column / span != spanInRow)
            continue;
          for (auto [j, value] : llvm::enumerate(values)) {
            // The value as stored, so that the reductions see the output.
            Value stored = widen(narrowTo(b, loc, value, elementType));
            take(stored,
                 validColumns
                     ? lessThan(add(firstColumn, run.column + j), validColumns)
                     : Value());
          }
        }
      };
      SmallVector<Value> partials = reduceSpan(elements, count, 4);
      Value stores = both(quadLeader, lessThan(globalRow, t.rows));
      if (spansPerRow > 1)
        stores = both(stores,
                      lessThan(add(t.columnBase, spanInRow * span), idx(p.n)));
      guarded(stores, [&] {
        for (auto [partial, matrix] : llvm::zip(partials, args.partials))
          memref::StoreOp::create(
              b, loc, partial, matrix,
              ValueRange{globalRow, add(firstSpan, spanInRow)});
      });
    }
  }
}
