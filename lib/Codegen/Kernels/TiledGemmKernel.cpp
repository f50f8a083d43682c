//===- TiledGemmKernel.cpp - GPU backend 2: the tiled GEMM kernel ---------===//
//
// One thread block computes a blockM x blockN tile of out = x.w^T: a
// multi-stage cp.async pipeline brings 128-byte-deep K slices of x and w
// into swizzled shared memory, each warp multiplies its warp tile with
// ldmatrix + mma.sync (or, fp32-math=simt, each thread its grid with fma),
// the epilogue runs on the accumulator registers, and the output tile
// leaves through shared memory in 16-byte stores.
//
// Both operands are K-contiguous ("TN"), which is the layout ldmatrix
// without transpose hands to mma.sync for A and B alike.
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Kernels/TiledGemmKernel.h"

#include "fusion/Dialect/Fusion/IR/ScalarBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {

/// Bytes of K in one shared-memory row, and in one 16-byte chunk of it (one
/// cp.async, one ldmatrix row). A row has 8 chunks; chunk c of row r is
/// stored at chunk c ^ (r % 8), so the 8 rows an ldmatrix phase reads hit 8
/// distinct 16-byte bank groups.
constexpr int64_t kRowBytes = kGemmRowBytes;
constexpr int64_t kChunkBytes = kGemmChunkBytes;
constexpr int64_t kChunksPerRow = kGemmChunksPerRow;
/// Bytes of K one mma.sync consumes: k16 of 16-bit types, k8 of tf32.
constexpr int64_t kMmaKBytes = 32;

/// Whether `mma` rounds f32 operands to 16 bits for its mma.sync.
inline bool roundsToHalf(std::optional<MmaKind> mma) {
  return mma == MmaKind::f32_as_bf16 || mma == MmaKind::f32_as_f16;
}

class TiledGemmEmitter : IndexEmitter {
public:
  TiledGemmEmitter(OpBuilder &builder, Location loc,
                   const GemmKernelProblem &problem)
      : IndexEmitter(builder, loc), p(problem), c(problem.config),
        mma(problem.config.getMma()), elementType(problem.elementType),
        chunkElements(kChunkBytes / elementBytes(elementType)),
        tileK(kRowBytes / elementBytes(elementType)),
        mmaK(kMmaKBytes / elementBytes(elementType)),
        fragmentWidth(4 / elementBytes(elementType)) {}

  void emit(gpu::GPUFuncOp kernel);

private:
  /// Rows of x and w that are not 16-byte aligned are copied with
  /// synchronous element loads: no cp.async, so no groups to commit or
  /// wait for (an empty group would not even print as valid IR).
  bool async() const { return hasChunkAlignedRows(elementType, p.k); }
  /// The prologue: stages 0 .. S-2 in flight, tile 0 landed; the last
  /// cp.async group's token.
  Value emitPrologue();
  /// The fragments of K step `step` of stage `stage`.
  SmallVector<Value> fragmentsOf(Value stage, int64_t step);
  /// One K tile of the main loop: the next state (accumulators, the
  /// cp.async token, the next tile's first fragments) from `state`.
  SmallVector<Value> emitKTile(Value kTile, ValueRange state);

private:
  /// Column `chunk` of a shared-memory row with `rowLow3` = row % 8, in
  /// elements, after the swizzle.
  Value swizzledColumn(Value chunk, Value rowLow3) {
    return mul(arith::XOrIOp::create(b, loc, chunk, rowLow3), chunkElements);
  }

  void setUp(gpu::GPUFuncOp kernel);
  /// Emits one thread's copy of one 16-byte chunk into a stage, adding its
  /// cp.async token (if any) to the list.
  using ChunkCopy = std::function<void(SmallVectorImpl<Value> &)>;
  /// The chunk copies of the K tile `kTile` into `stage`.
  SmallVector<ChunkCopy> loadStage(Value stage, Value kTile);
  /// `flat`: x or w collapsed to one dimension.
  void loadTile(Value flat, Value rowBase, Value rows, Value shared,
                int64_t tileRows, Value stage, Value kTile,
                SmallVectorImpl<ChunkCopy> &copies);
  /// The ldmatrix fragments of one mma step (32 bytes of K) of a warp
  /// tile: one x4 per m16 tile of A, then one per n16 pair of B.
  SmallVector<Value> loadFragments(Value stage, int64_t step);
  /// F32AsBF16/F32AsF16: the m16n8k16 operands of step `step` (64 bytes of
  /// f32 K) from two m16n8k8-layout loads, converted and packed.
  SmallVector<Value> loadHalfFragments(Value stage, int64_t step);
  /// The mma.sync ops of one step on the fragments, into `acc`.
  void multiplyStep(ArrayRef<Value> fragments, MutableArrayRef<Value> acc);
  SmallVector<Value> toTf32(Value fragment, bool split);
  Value mmaSyncBF16(Value lhs, Value rhs, Value sum);
  /// The epilogue on the accumulators: each thread's runs of adjacent
  /// outputs.
  void emitEpilogue(ArrayRef<Value> accumulators);
  Value sharedView(int64_t offset, ArrayRef<int64_t> shape, Type type) {
    return viewOf(sharedRaw, idx(offset), shape, type);
  }

  bool simt() const { return c.getBackend() == GemmBackend::simt; }
  /// SIMT: thread t owns the rows t / kSimtThreadsN + i * simtRowStride()
  /// and the columns t % kSimtThreadsN + j * kSimtThreadsN of the block
  /// tile.
  int64_t simtRowStride() const { return c.getThreads() / kSimtThreadsN; }
  int64_t simtRows() const { return c.getBlockM() / simtRowStride(); }
  int64_t simtColumns() const { return c.getBlockN() / kSimtThreadsN; }
  /// Accumulators of a thread: one vector<2x2xf32> per m16n8 tile of the
  /// warp tile, or (SIMT) one f32 per output.
  int64_t accumulatorCount() const {
    return simt() ? simtRows() * simtColumns()
                  : (c.getWarpTileM() / 16) * (c.getWarpTileN() / 8);
  }
  Value zeroAccumulator() {
    if (simt())
      return f32(0.0);
    auto type = VectorType::get({2, 2}, b.getF32Type());
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(0.0)));
  }
  /// SIMT: the 16-byte K chunk `step` of each of the thread's rows of A,
  /// then of B; each thread's fmas over them.
  SmallVector<Value> loadSimtFragments(Value stage, int64_t step);
  void multiplySimtStep(ArrayRef<Value> fragments, MutableArrayRef<Value> acc);
  Type mmaOperandType(int64_t tiles) {
    return VectorType::get({tiles, fragmentWidth}, elementType);
  }
  int64_t accumulatorIndex(int64_t mi, int64_t ni) {
    return mi * (c.getWarpTileN() / 8) + ni;
  }

  const GemmKernelProblem &p;
  GemmConfigAttr c;
  /// The tensor-core multiply; none for SIMT.
  std::optional<MmaKind> mma;
  Type elementType;
  int64_t chunkElements, tileK, mmaK, fragmentWidth;

  // Kernel arguments.
  Value x, w, flatX, flatW;
  std::optional<GemmEpilogueEmitter> epilogue;
  // Per-thread values.
  Value thread, lane, warpM, warpN, rows, blockRowTiles, tileM, rowBase,
      columnBase, sharedA, sharedB, sharedRaw;
  /// SIMT: the thread's first row and column of the block tile.
  Value simtRow, simtColumn;
};

int64_t ceilDiv(int64_t l, int64_t r) { return (l + r - 1) / r; }

void TiledGemmEmitter::setUp(gpu::GPUFuncOp kernel) {
  auto args = kernel.getArguments();
  x = args[0];
  w = args[1];

  thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  lane = rem(thread, fusion::kWarpSize);
  Value warp = div(thread, fusion::kWarpSize);
  warpM = rem(warp, c.getWarpsM());
  warpN = div(warp, c.getWarpsM());
  if (simt()) {
    simtRow = div(thread, kSimtThreadsN);
    simtColumn = rem(thread, kSimtThreadsN);
  }
  rows = memref::DimOp::create(b, loc, x, 0);
  auto collapse = [&](Value matrix) -> Value {
    return memref::CollapseShapeOp::create(
        b, loc, matrix, ArrayRef<ReassociationIndices>{{0, 1}});
  };
  flatX = collapse(x);
  flatW = collapse(w);

  GemmTilePosition position = rasterizeGemmTile(
      b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), rows, p.n, c);
  blockRowTiles = position.blockRowTiles;
  tileM = position.tileM;
  rowBase = position.rowBase;
  columnBase = position.columnBase;

  sharedRaw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup()));
  sharedA = sharedView(0, {c.getStages(), c.getBlockM(), tileK}, elementType);
  sharedB = sharedView(c.getStages() * c.getBlockM() * kRowBytes,
                       {c.getStages(), c.getBlockN(), tileK}, elementType);
  GemmTile tile{
      thread,     c.getThreads(), rows,
      tileM,      blockRowTiles,  rowBase,
      columnBase, sharedRaw,      [this] { gpu::BarrierOp::create(b, loc); }};
  epilogue.emplace(b, loc, p, tile,
                   GemmEpilogueArguments::take(p, args.drop_front(2)));
}

void TiledGemmEmitter::loadTile(Value flat, Value globalRowBase,
                                Value globalRows, Value shared,
                                int64_t tileRows, Value stage, Value kTile,
                                SmallVectorImpl<ChunkCopy> &copies) {
  bool aligned = hasChunkAlignedRows(elementType, p.k);
  // Thread t copies chunk t % 8 of rows t / 8 + i * rowsPerPass: one base
  // address a thread, the copies at constant offsets from it, and (with 64
  // threads or more) the same swizzled column for all of them.
  int64_t rowsPerPass = c.getThreads() / kChunksPerRow;
  for (int64_t i = 0; i < tileRows / rowsPerPass; ++i)
    copies.push_back([=](SmallVectorImpl<Value> &tokens) {
      Value zero = idx(0);
      Value chunk = rem(thread, kChunksPerRow);
      Value chunkK = mul(chunk, chunkElements);
      Value firstRow = div(thread, kChunksPerRow);
      Value row = add(firstRow, i * rowsPerPass);
      Value firstGlobalRow = add(globalRowBase, firstRow);
      Value globalRow = add(firstGlobalRow, i * rowsPerPass);
      Value globalK = add(mul(kTile, tileK), chunkK);
      Value rowOk = lessThan(globalRow, globalRows);
      Value dstColumn = swizzledColumn(chunk, rem(row, 8));
      // The offset in `flat` is built as (per thread + per K tile) +
      // constant, so that the constant becomes the load's immediate.
      Value threadOffset = add(mul(firstGlobalRow, p.k), chunkK);
      Value offset =
          add(add(threadOffset, mul(kTile, tileK)), i * rowsPerPass * p.k);
      if (aligned) {
        // Out-of-range chunks (rows past the end, K tiles past the last)
        // read no byte and zero-fill; their address is never dereferenced.
        Value ok = both(rowOk, lessThan(globalK, idx(p.k)));
        Value srcElements = select(ok, idx(chunkElements), zero);
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, shared, ValueRange{stage, row, dstColumn}, flat,
            ValueRange{offset}, b.getIndexAttr(chunkElements), srcElements,
            b.getUnitAttr()));
        return;
      }
      // Rows of x and w are not 16-byte aligned: element loads (clamped to
      // element 0 out of range), synchronous.
      Value zeroElement =
          arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, 0.0));
      SmallVector<Value> elements;
      for (int64_t e = 0; e < chunkElements; ++e) {
        Value ok = both(rowOk, lessThan(add(globalK, e), idx(p.k)));
        Value element = memref::LoadOp::create(
            b, loc, flat, ValueRange{select(ok, add(offset, e), zero)});
        elements.push_back(select(ok, element, zeroElement));
      }
      Value vector = vector::FromElementsOp::create(
          b, loc, VectorType::get({chunkElements}, elementType), elements);
      vector::StoreOp::create(b, loc, vector, shared,
                              ValueRange{stage, row, dstColumn});
    });
}

SmallVector<TiledGemmEmitter::ChunkCopy>
TiledGemmEmitter::loadStage(Value stage, Value kTile) {
  SmallVector<ChunkCopy> copies;
  loadTile(flatX, rowBase, rows, sharedA, c.getBlockM(), stage, kTile, copies);
  loadTile(flatW, columnBase, idx(p.n), sharedB, c.getBlockN(), stage, kTile,
           copies);
  return copies;
}

SmallVector<Value> TiledGemmEmitter::toTf32(Value fragment, bool split) {
  if (!split)
    return {convertToTf32(b, loc, fragment)};
  auto [high, low] = splitTf32(b, loc, fragment);
  return {high, low};
}

SmallVector<Value> TiledGemmEmitter::loadHalfFragments(Value stage,
                                                       int64_t step) {
  // The tf32-layout fragments of the two k8 halves: A thread t of a lane
  // group holds k = t and t + 4 of each half, B likewise. mma.sync sums over
  // its 16 k slots in any order, so slots (2t, 2t + 1) take k (t, t + 4) of
  // the first half and slots (2t + 8, 2t + 9) those of the second, in A and
  // B alike.
  int64_t tilesM = c.getWarpTileM() / 16;
  Type half = mma == MmaKind::f32_as_bf16 ? Type(b.getBF16Type())
                                          : Type(b.getF16Type());
  auto element = [&](Value fragment, int64_t i) -> Value {
    return vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{i, 0});
  };
  // Elements `low` and `high` of a fragment as one rounded 16-bit pair
  // (cvt.rn.{bf16,f16}x2).
  auto pack = [&](Value fragment, int64_t low, int64_t high) -> Value {
    Value first = element(fragment, low);
    Value second = element(fragment, high);
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getF32Type()),
        ValueRange{first, second});
    return arith::TruncFOp::create(b, loc, VectorType::get({2}, half), pair);
  };
  auto operand = [&](ArrayRef<Value> pairs) -> Value {
    int64_t rows = pairs.size();
    Value result = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({rows, 2}, half),
                               b.getFloatAttr(half, 0.0)));
    for (auto [i, pair] : llvm::enumerate(pairs))
      result = vector::InsertOp::create(b, loc, pair, result,
                                        static_cast<int64_t>(i));
    return result;
  };
  // A x4 registers: (rows 0-7, k t), (rows 8-15, k t), (rows 0-7, k t + 4),
  // (rows 8-15, k t + 4); B x4 registers: (n tile 0, k t), (n tile 0,
  // k t + 4), then n tile 1.
  int64_t tilesN = c.getWarpTileN() / 8;
  SmallVector<SmallVector<Value>> pairsA(tilesM), pairsB(tilesN);
  for (int64_t h = 0; h < 2; ++h) {
    SmallVector<Value> raw = loadFragments(stage, 2 * step + h);
    for (int64_t mi = 0; mi < tilesM; ++mi)
      for (int64_t rowHalf = 0; rowHalf < 2; ++rowHalf)
        pairsA[mi].push_back(pack(raw[mi], rowHalf, rowHalf + 2));
    for (int64_t ni = 0; ni < tilesN; ++ni)
      pairsB[ni].push_back(
          pack(raw[tilesM + ni / 2], 2 * (ni % 2), 2 * (ni % 2) + 1));
  }
  SmallVector<Value> fragments;
  for (ArrayRef<Value> pairs : pairsA)
    fragments.push_back(operand(pairs));
  for (ArrayRef<Value> pairs : pairsB)
    fragments.push_back(operand(pairs));
  return fragments;
}

SmallVector<Value> TiledGemmEmitter::loadFragments(Value stage, int64_t step) {
  // ldmatrix.x4 addresses: A lanes 0-15 give rows 0-15 of K chunk 0, lanes
  // 16-31 the same rows of chunk 1; B lanes give rows n 0-7 (chunks 0, 1),
  // then n 8-15, so one x4 holds the fragments of two n8 tiles.
  Value laneLow3 = rem(lane, 8);
  Value rowA = rem(lane, 16), chunkA = div(lane, 16);
  Value rowB = add(mul(div(lane, 16), 8), laneLow3);
  Value chunkB = rem(div(lane, 8), 2);
  Value warpRowA = mul(warpM, c.getWarpTileM());
  Value warpRowB = mul(warpN, c.getWarpTileN());
  Value columnA = swizzledColumn(add(chunkA, 2 * step), laneLow3);
  Value columnB = swizzledColumn(add(chunkB, 2 * step), laneLow3);
  SmallVector<Value> fragments;
  for (int64_t mi = 0; mi < c.getWarpTileM() / 16; ++mi)
    fragments.push_back(nvgpu::LdMatrixOp::create(
        b, loc, mmaOperandType(4), sharedA,
        ValueRange{stage, add(add(warpRowA, mi * 16), rowA), columnA},
        /*transpose=*/false, /*numTiles=*/4));
  for (int64_t pair = 0; pair < c.getWarpTileN() / 16; ++pair)
    fragments.push_back(nvgpu::LdMatrixOp::create(
        b, loc, mmaOperandType(4), sharedB,
        ValueRange{stage, add(add(warpRowB, pair * 16), rowB), columnB},
        /*transpose=*/false, /*numTiles=*/4));
  return fragments;
}

void TiledGemmEmitter::multiplyStep(ArrayRef<Value> fragments,
                                    MutableArrayRef<Value> acc) {
  int64_t tilesM = c.getWarpTileM() / 16;
  bool tf32 = mma == MmaKind::tf32 || mma == MmaKind::tf32x3;
  bool split = mma == MmaKind::tf32x3;
  bool packed = roundsToHalf(mma);
  SmallVector<int64_t> shape{16, 8, packed ? 16 : mmaK};
  SmallVector<SmallVector<Value>> bFragments;
  for (Value fragment : fragments.drop_front(tilesM)) {
    if (packed) {
      // Already one operand per n8 tile.
      bFragments.push_back({fragment});
      continue;
    }
    for (int64_t half = 0; half < 2; ++half) {
      Value tile = vector::ExtractStridedSliceOp::create(
          b, loc, fragment, ArrayRef<int64_t>{2 * half, 0},
          ArrayRef<int64_t>{2, fragmentWidth}, ArrayRef<int64_t>{1, 1});
      bFragments.push_back(tf32 ? toTf32(tile, split)
                                : SmallVector<Value>{tile});
    }
  }
  // A's operands converted per m16 tile, as they are used: with 3xTF32's
  // split, all of them at once would not fit in registers.
  for (int64_t mi = 0; mi < tilesM; ++mi) {
    SmallVector<Value> aTile =
        tf32 ? toTf32(fragments[mi], split) : SmallVector<Value>{fragments[mi]};
    for (size_t ni = 0; ni < bFragments.size(); ++ni) {
      Value &sum = acc[accumulatorIndex(mi, ni)];
      auto multiply = [&](Value lhs, Value rhs) {
        sum = mma == MmaKind::bf16 || mma == MmaKind::f32_as_bf16
                  ? mmaSyncBF16(lhs, rhs, sum)
                  : nvgpu::MmaSyncOp::create(b, loc, lhs, rhs, sum, shape, tf32)
                        .getResult();
      };
      if (split) {
        // Small terms first: they are lost if added to the large sum.
        multiply(aTile[1], bFragments[ni][0]);
        multiply(aTile[0], bFragments[ni][1]);
      }
      multiply(aTile[0], bFragments[ni][0]);
    }
  }
}

SmallVector<Value> TiledGemmEmitter::loadSimtFragments(Value stage,
                                                       int64_t step) {
  // The thread's rows of A and columns (rows) of B: the 8 lanes of a
  // quarter warp read one row of A (a broadcast) and 8 rows of B that the
  // swizzle puts in distinct banks.
  auto chunkType = VectorType::get({chunkElements}, elementType);
  SmallVector<Value> fragments;
  auto load = [&](Value shared, Value row) {
    fragments.push_back(vector::LoadOp::create(
        b, loc, chunkType, shared,
        ValueRange{stage, row, swizzledColumn(idx(step), rem(row, 8))},
        /*nontemporal=*/false, llvm::Align(kChunkBytes)));
  };
  for (int64_t i = 0; i < simtRows(); ++i)
    load(sharedA, add(simtRow, i * simtRowStride()));
  for (int64_t j = 0; j < simtColumns(); ++j)
    load(sharedB, add(simtColumn, j * kSimtThreadsN));
  return fragments;
}

void TiledGemmEmitter::multiplySimtStep(ArrayRef<Value> fragments,
                                        MutableArrayRef<Value> acc) {
  auto elements = [&](Value chunk) {
    SmallVector<Value> values;
    for (int64_t k = 0; k < chunkElements; ++k)
      values.push_back(vector::ExtractOp::create(b, loc, chunk, k));
    return values;
  };
  SmallVector<SmallVector<Value>> a, bColumns;
  for (Value chunk : fragments.take_front(simtRows()))
    a.push_back(elements(chunk));
  for (Value chunk : fragments.drop_front(simtRows()))
    bColumns.push_back(elements(chunk));
  // K in order within each accumulator: the sum of a plain fp32 loop.
  for (int64_t k = 0; k < chunkElements; ++k)
    for (int64_t i = 0; i < simtRows(); ++i)
      for (int64_t j = 0; j < simtColumns(); ++j) {
        Value &sum = acc[i * simtColumns() + j];
        sum = math::FmaOp::create(b, loc, a[i][k], bColumns[j][k], sum);
      }
}

Value TiledGemmEmitter::mmaSyncBF16(Value lhs, Value rhs, Value sum) {
  // nvgpu.mma.sync has no bf16 lowering: nvvm.mma.sync takes the fragments
  // as packed bf16x2 registers.
  auto packed = [&](Value fragment) {
    SmallVector<Value> registers;
    int64_t count = cast<VectorType>(fragment.getType()).getDimSize(0);
    for (int64_t i = 0; i < count; ++i) {
      Value pair = vector::ExtractOp::create(b, loc, fragment, i);
      Value word = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), pair);
      registers.push_back(vector::ExtractOp::create(b, loc, word, 0));
    }
    return registers;
  };
  SmallVector<Value> accumulators;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t j = 0; j < 2; ++j)
      accumulators.push_back(
          vector::ExtractOp::create(b, loc, sum, ArrayRef<int64_t>{h, j}));
  Type f32Type = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32Type, f32Type, f32Type, f32Type});
  Value result = NVVM::MmaOp::create(
      b, loc, resultType, packed(lhs), packed(rhs), accumulators,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < 4; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return vector::FromElementsOp::create(b, loc, sum.getType(), elements);
}

void TiledGemmEmitter::emitEpilogue(ArrayRef<Value> accumulators) {
  // The thread's outputs as runs of adjacent columns, at offsets from its
  // first row and column in the block tile.
  SmallVector<AccumulatorRun> runs;
  Value firstRow, firstColumn;
  if (simt()) {
    firstRow = simtRow;
    firstColumn = simtColumn;
    for (int64_t i = 0; i < simtRows(); ++i)
      for (int64_t j = 0; j < simtColumns(); ++j)
        runs.push_back({i * simtRowStride(),
                        j * kSimtThreadsN,
                        {accumulators[i * simtColumns() + j]}});
  } else {
    // Lane l holds rows l / 4 (+ 8) and columns 2 * (l % 4) (+ 1) of each
    // m16n8 accumulator tile.
    firstRow = add(mul(warpM, c.getWarpTileM()), div(lane, 4));
    firstColumn = add(mul(warpN, c.getWarpTileN()), mul(rem(lane, 4), 2));
    for (int64_t mi = 0; mi < c.getWarpTileM() / 16; ++mi)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t ni = 0; ni < c.getWarpTileN() / 8; ++ni) {
          Value tile = accumulators[accumulatorIndex(mi, ni)];
          SmallVector<Value> pair;
          for (int64_t j = 0; j < 2; ++j)
            pair.push_back(vector::ExtractOp::create(
                b, loc, tile, ArrayRef<int64_t>{half, j}));
          runs.push_back({mi * 16 + half * 8, ni * 8, pair});
        }
  }

  epilogue->emit(firstRow, firstColumn, runs);
}

SmallVector<Value> TiledGemmEmitter::fragmentsOf(Value stage, int64_t step) {
  if (simt())
    return loadSimtFragments(stage, step);
  return roundsToHalf(mma) ? loadHalfFragments(stage, step)
                           : loadFragments(stage, step);
}

Value TiledGemmEmitter::emitPrologue() {
  // Stages 0 .. S-2 in flight, one cp.async group each.
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Value token;
  for (int64_t s = 0; s + 1 < c.getStages(); ++s) {
    SmallVector<Value> tokens;
    for (const ChunkCopy &copy : loadStage(idx(s), idx(s)))
      copy(tokens);
    if (async())
      token =
          nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, tokens);
  }
  // Tile 0 landed; its first fragments are loaded before the loop.
  if (async())
    nvgpu::DeviceAsyncWaitOp::create(b, loc, token,
                                     b.getI32IntegerAttr(c.getStages() - 2));
  gpu::BarrierOp::create(b, loc);
  return token;
}

SmallVector<Value> TiledGemmEmitter::emitKTile(Value kTile, ValueRange state) {
  int64_t count = accumulatorCount();
  // Bytes of K a step: one chunk (SIMT), two k8 tf32 halves packed into
  // one k16 (f32 operands rounded to 16 bits), one mma.sync otherwise.
  int64_t stepBytes =
      simt() ? kChunkBytes : (roundsToHalf(mma) ? 2 : 1) * kMmaKBytes;
  int64_t steps = kRowBytes / stepBytes;
  // The tensor cores truncate when they add to an f32 accumulator, an
  // error that grows with K. The fp32-accurate mode sums each K tile from
  // zero and adds it to the running sums with round-to-nearest.
  bool twoLevel = mma == MmaKind::tf32x3;
  SmallVector<Value> acc(state.take_front(count));
  if (twoLevel)
    acc.assign(count, zeroAccumulator());
  SmallVector<Value> fragments(state.drop_front(count + async()));
  Value stage = rem(kTile, c.getStages());
  Value next = add(kTile, c.getStages() - 1);
  SmallVector<ChunkCopy> copies = loadStage(rem(next, c.getStages()), next);
  SmallVector<Value> tokens;
  Value nextToken;
  for (int64_t step = 0; step < steps; ++step) {
    SmallVector<Value> nextFragments;
    if (step + 1 < steps) {
      nextFragments = fragmentsOf(stage, step + 1);
      size_t first = copies.size() * step / (steps - 1);
      size_t last = copies.size() * (step + 1) / (steps - 1);
      for (const ChunkCopy &copy : ArrayRef(copies).slice(first, last - first))
        copy(tokens);
    } else {
      // Past the last tile this reads a stage of zeros, unused.
      nextFragments = fragmentsOf(rem(add(kTile, 1), c.getStages()), 0);
    }
    if (step + 2 == steps) {
      // Every read of this tile's stage is issued: wait for tile t + 1,
      // with a whole step of mma.sync ops left to hide it.
      if (async()) {
        nextToken = nvgpu::DeviceAsyncCreateGroupOp::create(
            b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
        nvgpu::DeviceAsyncWaitOp::create(
            b, loc, nextToken, b.getI32IntegerAttr(c.getStages() - 2));
      }
      gpu::BarrierOp::create(b, loc);
    }
    if (simt())
      multiplySimtStep(fragments, acc);
    else
      multiplyStep(fragments, acc);
    fragments = nextFragments;
  }
  if (twoLevel)
    for (auto [sum, running] : llvm::zip(acc, state.take_front(count)))
      sum = arith::AddFOp::create(b, loc, running, sum);
  SmallVector<Value> results(acc);
  if (async())
    results.push_back(nextToken);
  results.append(fragments);
  return results;
}

void TiledGemmEmitter::emit(gpu::GPUFuncOp kernel) {
  setUp(kernel);
  epilogue->loadColumnConstants();
  int64_t tilesK = ceilDiv(p.k, tileK);
  Value token = emitPrologue();
  SmallVector<Value> firstFragments = fragmentsOf(idx(0), 0);
  int64_t count = accumulatorCount();
  SmallVector<Value> init(count, zeroAccumulator());
  if (async())
    init.push_back(token);
  init.append(firstFragments);
  // Main loop over K tiles t, software-pipelined: each step loads the next
  // step's fragments before its mma.sync ops use the current ones; the last
  // step waits for tile t + 1 and loads its first fragments, so that the
  // barrier and ldmatrix latencies hide behind the last mma.sync ops. The
  // copies of tile t + S - 1 into the stage tile t - 1 used (all its reads
  // were before the previous barrier) are spread over the first steps.
  auto loop = scf::ForOp::create(
      b, loc, idx(0), idx(tilesK), idx(1), init,
      [&](OpBuilder &nb, Location, Value kTile, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, emitKTile(kTile, state));
      });
  // Drain the (empty) trailing groups before shared memory is reused.
  if (async())
    nvgpu::DeviceAsyncWaitOp::create(b, loc, loop.getResult(count),
                                     b.getI32IntegerAttr(0));
  emitEpilogue(SmallVector<Value>(loop.getResults().take_front(count)));
  gpu::ReturnOp::create(b, loc);
}

} // namespace

Kernel mlir::fusion::buildTiledGemmKernel(OpBuilder &builder, Location loc,
                                          StringRef name,
                                          const GemmKernelProblem &problem) {
  assert(!problem.dualWeight &&
         "a dual GEMM's config is a wgmma one (verifyDualGemmLowering)");
  assert(problem.weightLayout == WeightLayout::out_in &&
         "an in_out weight's config is a wgmma one (whyNotInOutWeight)");
  OpBuilder::InsertionGuard insertion(builder);
  Type type = problem.elementType;
  int64_t n = problem.n, k = problem.k;
  // Memrefs, and the launch operand and shape each is described by.
  SmallVector<Type> argTypes;
  LaunchContract launch;
  int64_t dynamic = ShapedType::kDynamic;
  argTypes.push_back(MemRefType::get({dynamic, k}, type));
  launch.arguments.push_back(
      KernelArgument::descriptor(0, {RowExpr::rows(), RowExpr::constant(k)}));
  argTypes.push_back(MemRefType::get({n, k}, type));
  launch.arguments.push_back(KernelArgument::descriptor(
      1, {RowExpr::constant(n), RowExpr::constant(k)}));
  completeGemmLaunch(problem, argTypes, launch);

  gpu::GPUFuncOp kernel =
      createKernel(builder, loc, name, argTypes, launch.blockSize);
  emitPredecessorWait(builder, loc, kernel, launch);
  TiledGemmEmitter(builder, loc, problem).emit(kernel);
  return {kernel, std::move(launch)};
}
