//===- Mainloop.cpp - the wgmma kernel's main loops -----------------------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

Value WgmmaMainloop::descriptorLow(Value offset, bool nMajor) {
  Value units = arith::ShRUIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), offset),
      kernel.i32(4));
  Value low = arith::AddIOp::create(b, loc, kernel.originDescriptorLow, units);
  if (!nMajor)
    return low;
  // The leading byte offset (bits 16-29, in 16-byte units; the origin's is
  // 1) of an N-major matrix: from one box of 128 bytes of N to the next
  // (CUTLASS's canonical MN-major 128-byte-swizzled layout; the stride
  // byte offset steps 8 rows of K, as it steps 8 rows of N K-major).
  int64_t leading = kernel.weightBoxBytes() / kGemmChunkBytes;
  return arith::AddIOp::create(b, loc, low, kernel.i32((leading - 1) << 16));
}

int64_t WgmmaMainloop::kStepBytes(bool nMajor) const {
  // K-major: 32 bytes along the rows; N-major: a K step's rows.
  return nMajor ? kMmaKBytes / elementBytes(kernel.elementType) * kGemmRowBytes
                : kMmaKBytes;
}

Value WgmmaMainloop::descriptor(Value low, int64_t bytes) {
  // Stride byte offset 1024 between groups of 8 rows (bits 32-45), 128-byte
  // swizzle (bits 62-63 = 1).
  constexpr int64_t high = (int64_t(64) << 32) | (int64_t(1) << 62);
  Value start =
      bytes ? arith::AddIOp::create(b, loc, low, kernel.i32(bytes / 16)) : low;
  return arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), start),
      kernel.i64(high));
}

Value WgmmaMainloop::wgmma(Value acc, int64_t rowBlock, Value aDescriptor,
                           Value bDescriptor, bool fromZero, bool dual) {
  MLIRContext *context = b.getContext();
  NVVM::WGMMATypes type = NVVM::WGMMATypes::tf32;
  int64_t k = 8;
  if (kernel.mma == MmaKind::bf16 || kernel.mma == MmaKind::f16) {
    type = kernel.mma == MmaKind::bf16 ? NVVM::WGMMATypes::bf16
                                       : NVVM::WGMMATypes::f16;
    k = 16;
  }
  auto multiply = [&](Value blockAcc) -> Value {
    return NVVM::WgmmaMmaAsyncOp::create(
        b, loc, kernel.blockAccumulatorType, blockAcc, aDescriptor, bDescriptor,
        NVVM::MMAShapeAttr::get(context, 64, c.getWgmmaN(), k), type, type,
        NVVM::WGMMATypes::f32,
        fromZero ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        weightIsA() ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        weightIsB() ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  };
  // A single row block's accumulators are all of the kernel.thread's (but
  // for a dual GEMM's).
  if (kernel.totalAccumulators() == kernel.blockAccumulators())
    return multiply(acc);
  int64_t first = (dual ? kernel.accumulators() : 0) +
                  rowBlock * kernel.blockAccumulators();
  Value blockAcc = LLVM::PoisonOp::create(b, loc, kernel.blockAccumulatorType);
  for (int64_t i = 0; i < kernel.blockAccumulators(); ++i)
    blockAcc = LLVM::InsertValueOp::create(
        b, loc, blockAcc, LLVM::ExtractValueOp::create(b, loc, acc, first + i),
        i);
  Value result = multiply(blockAcc);
  for (int64_t i = 0; i < kernel.blockAccumulators(); ++i)
    acc = LLVM::InsertValueOp::create(
        b, loc, acc, LLVM::ExtractValueOp::create(b, loc, result, i),
        first + i);
  return acc;
}

Value WgmmaMainloop::multiplyStage(Value acc, Value stage, bool fromZero,
                                   MutableArrayRef<Value> registerParts) {
  // The kernel.consumer's kernel.rows of x (3xTF32: `registerParts`); w's
  // kernel.rows all. Swapped operands: the kernel.consumer's kernel.rows of w,
  // x's kernel.rows all.
  bool swapped = c.swapsOperands();
  // (N-major w: a row block of 64 of its columns is one box, 64 rows of
  // 128 bytes either way.)
  Value a =
      descriptorLow(add(swapped ? ring.bOffset(stage) : ring.aOffset(stage),
                        mul(kernel.consumerFirstRow(), kGemmRowBytes)),
                    weightIsA());
  assert((!kernel.split() || kernel.rowBlocks() == 1) &&
         "3xTF32 parts of 64 kernel.rows");
  Value bTile = descriptorLow(ring.sharedOperandOffset(stage), weightIsB());
  Value bLow =
      kernel.split() ? descriptorLow(ring.remainderOffset(stage)) : Value();
  Value dualTile = kernel.dual()
                       ? descriptorLow(ring.dualOffset(stage), weightIsB())
                       : Value();
  // The accumulators (zeros of a tile's first slice) and the register
  // parts are written before the fence that orders those writes before the
  // wgmmas.
  acc = passThrough("", acc, registerParts);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t step = 0; step < kGemmRowBytes / kMmaKBytes; ++step) {
    auto at = [&](Value low, int64_t bytes = 0, bool nMajor = false) {
      return descriptor(low, step * kStepBytes(nMajor) + bytes);
    };
    bool first = fromZero && step == 0;
    if (kernel.split()) {
      ArrayRef<Value> parts(registerParts);
      ArrayRef<Value> high = parts.slice(8 * step, 4);
      ArrayRef<Value> low = parts.slice(8 * step + 4, 4);
      // Small terms first: they are lost if added to the large sum.
      acc = wgmmaRegisterA(acc, low, at(bTile), first);
      acc = wgmmaRegisterA(acc, high, at(bLow), false);
      acc = wgmmaRegisterA(acc, high, at(bTile), false);
      continue;
    }
    for (int64_t rowBlock = 0; rowBlock < kernel.rowBlocks(); ++rowBlock) {
      Value bAt = at(bTile, 0, weightIsB());
      Value aAt = at(a, rowBlock * 64 * kGemmRowBytes, weightIsA());
      acc = wgmma(acc, rowBlock, aAt, bAt, first);
      if (dualTile)
        acc = wgmma(acc, rowBlock, aAt, at(dualTile, 0, weightIsB()), first,
                    /*dual=*/true);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

void WgmmaMainloop::splitStage(Value stage, Value splitter) {
  if (kernel.weightNMajor())
    return splitTransposedStage(stage, splitter);
  // Each splitter takes 16-byte chunks of the kernel.shared-memory operand's
  // tile; the kernel.layout does not matter. The high part (splitTf32) is
  // written over the tile, the low part to the same offset of the remainder
  // buffer: as the tensor cores read the stage, its elements would be
  // truncated to tf32, and an infinity's low part would be NaN.
  auto vectorType = VectorType::get({4}, b.getF32Type());
  int64_t chunks = c.getWgmmaN() * kGemmRowBytes / kGemmChunkBytes;
  assert(chunks % kSplitters == 0 && "whole rounds of the splitters");
  Value tile = kernel.sharedView(ring.sharedOperandOffset(stage), {chunks * 4},
                                 b.getF32Type());
  Value low = kernel.sharedView(ring.remainderOffset(stage), {chunks * 4},
                                b.getF32Type());
  for (int64_t first = 0; first < chunks; first += kSplitters) {
    Value element = mul(add(splitter, first), 4);
    Value x = vector::LoadOp::create(b, loc, vectorType, tile, element);
    auto [high, remainder] = splitTf32(b, loc, x);
    vector::StoreOp::create(b, loc, high, tile, element);
    vector::StoreOp::create(b, loc, remainder, low, element);
  }
  // wgmma reads kernel.shared memory through the async proxy.
  kernel.fenceSharedProxies();
}

void WgmmaMainloop::splitTransposedStage(Value stage, Value splitter) {
  // A box of 32 K rows by 32 columns of N (4 KiB) takes the bytes that its
  // 32 rows of w take K-major, so each box transposes in place: every
  // splitter reads its 16 elements, the splitters meet, then each writes
  // their high parts K-major over the box and their remainders to the same
  // offsets of the remainder buffer. Splitter s takes row s / 2 of the
  // K-major box, K elements [16 (s % 2), 16 (s % 2) + 16). Both layouts are
  // swizzled alike: 16-byte chunk c of row r lies at chunk c ^ (r % 8).
  assert(kernel.tileK == 32 && kSplitters == 64 && "f32 boxes of 32 x 32");
  constexpr int64_t boxSide = 32, perSplitter = 16;
  Type f32 = b.getF32Type();
  int64_t boxes = c.getWgmmaN() / boxSide;
  Value tile = kernel.sharedView(ring.sharedOperandOffset(stage),
                                 {boxes * boxSide * boxSide}, f32);
  Value low = kernel.sharedView(ring.remainderOffset(stage),
                                {boxes * boxSide * boxSide}, f32);
  Value row = div(splitter, 2);
  Value firstK = mul(rem(splitter, 2), perSplitter);
  auto vectorType = VectorType::get({4}, f32);
  for (int64_t box = 0; box < boxes; ++box) {
    int64_t base = box * boxSide * boxSide;
    SmallVector<Value> elements;
    for (int64_t i = 0; i < perSplitter; ++i) {
      // Element (k, row) of the N-major box: K row k = firstK + i (k % 8 =
      // i % 8, firstK being a multiple of 16), column `row`.
      Value chunk = arith::XOrIOp::create(b, loc, div(row, 4), idx(i % 8));
      Value at = add(add(mul(firstK, boxSide), mul(chunk, 4)),
                     add(rem(row, 4), base + i * boxSide));
      elements.push_back(memref::LoadOp::create(b, loc, tile, at));
    }
    NVVM::BarrierOp::create(b, loc, Type(), kernel.i32(kSplitterBarrier),
                            kernel.i32(kSplitters), {}, Value());
    for (int64_t chunk = 0; chunk < perSplitter / 4; ++chunk) {
      Value x = vector::FromElementsOp::create(
          b, loc, vectorType, ArrayRef<Value>(elements).slice(4 * chunk, 4));
      Value swizzled = arith::XOrIOp::create(b, loc, add(div(firstK, 4), chunk),
                                             rem(row, 8));
      Value at = add(add(mul(row, boxSide), mul(swizzled, 4)), base);
      auto [high, remainder] = splitTf32(b, loc, x);
      vector::StoreOp::create(b, loc, high, tile, at);
      vector::StoreOp::create(b, loc, remainder, low, at);
    }
  }
  // wgmma reads kernel.shared memory through the async proxy.
  kernel.fenceSharedProxies();
}

Value WgmmaMainloop::passThrough(StringRef ptx, Value acc,
                                 MutableArrayRef<Value> operands) {
  int64_t count = acc ? kernel.totalAccumulators() : 0;
  SmallVector<Value> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  llvm::append_range(values, operands);
  SmallVector<Type> types;
  std::string outputs, inputs;
  for (auto [i, value] : llvm::enumerate(values)) {
    types.push_back(value.getType());
    outputs += value.getType().isF32() ? "=f," : "=r,";
    inputs += (i ? "," : "") + std::to_string(i);
  }
  Value result =
      inlinePtx(LLVM::LLVMStructType::getLiteral(b.getContext(), types), values,
                ptx, outputs + inputs);
  for (auto [i, operand] : llvm::enumerate(operands))
    operand = LLVM::ExtractValueOp::create(b, loc, result, count + i);
  if (!acc)
    return Value();
  if (operands.empty())
    return result;
  Value passed = LLVM::PoisonOp::create(b, loc, kernel.accumulatorType);
  for (int64_t i = 0; i < count; ++i)
    passed = LLVM::InsertValueOp::create(
        b, loc, passed, LLVM::ExtractValueOp::create(b, loc, result, i), i);
  return passed;
}

Value WgmmaMainloop::inlinePtx(Type resultType, ValueRange operands,
                               StringRef ptx, StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, resultType, operands, ptx, constraints,
             /*has_side_effects=*/true,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

Value WgmmaMainloop::wgmmaRegisterA(Value acc, ValueRange aParts,
                                    Value bDescriptor, bool fromZero) {
  // nvvm.wgmma.mma_async takes A as a descriptor only; this is its PTX
  // with A's four registers: $0.. the accumulators (tied to the inputs
  // that follow them), then A, then w's descriptor.
  int64_t count = kernel.blockAccumulators();
  SmallVector<Value> operands;
  std::string constraints, accumulators;
  for (int64_t i = 0; i < count; ++i) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    constraints += "=f,";
    accumulators += (i ? ", $" : "$") + std::to_string(i);
  }
  for (int64_t i = 0; i < count; ++i)
    constraints += std::to_string(i) + ",";
  llvm::append_range(operands, aParts);
  constraints += "r,r,r,r,l";
  operands.push_back(bDescriptor);
  int64_t a = 2 * count;
  std::string ptx =
      ("{\n.reg .pred p;\nsetp.ne.b32 p, " + Twine(fromZero ? 0 : 1) +
       ", 0;\nwgmma.mma_async.sync.aligned.m64n" + Twine(c.getWgmmaN()) +
       "k8.f32.tf32.tf32 {" + accumulators + "}, {$" + Twine(a) + ", $" +
       Twine(a + 1) + ", $" + Twine(a + 2) + ", $" + Twine(a + 3) + "}, $" +
       Twine(a + 4) + ", p, 1, 1;\n}")
          .str();
  return inlinePtx(kernel.accumulatorType, operands, ptx, constraints);
}

SmallVector<Value> WgmmaMainloop::loadRegisterParts(Value stage) {
  // ldmatrix.x4 of 32-bit elements: lanes 0-15 address kernel.rows 0-15 of the
  // warp's 16 of a K step's first 16-byte chunk, lanes 16-31 the second
  // chunk; register j holds row l / 4 (+ 8 for odd j), k l % 4 (+ 4 for
  // j >= 2): wgmma's A fragment of tf32 (and kernel.mma.sync's).
  auto [warp, lane] = kernel.warpAndLane();
  Value row = add(add(kernel.consumerFirstRow(), mul(warp, 16)), rem(lane, 16));
  Value tile = kernel.sharedView(ring.registerOperandOffset(stage),
                                 {ring.registerOperandRows(), kernel.tileK},
                                 kernel.elementType);
  Type f32 = b.getF32Type(), bitsType = b.getI32Type();
  SmallVector<Value> parts;
  for (int64_t step = 0; step < kGemmRowBytes / kMmaKBytes; ++step) {
    Value chunk = add(div(lane, 16), 2 * step);
    Value column = mul(arith::XOrIOp::create(b, loc, chunk, rem(lane, 8)),
                       kGemmChunkBytes / 4);
    Value fragment = nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({4, 1}, f32), tile, ValueRange{row, column},
        /*transpose=*/false, /*numTiles=*/4);
    SmallVector<Value> high, low;
    for (int64_t j = 0; j < 4; ++j) {
      Value x =
          vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{j, 0});
      auto [highPart, remainder] = splitTf32(b, loc, x);
      high.push_back(arith::BitcastOp::create(b, loc, bitsType, highPart));
      low.push_back(arith::BitcastOp::create(b, loc, bitsType, remainder));
    }
    llvm::append_range(parts, high);
    llvm::append_range(parts, low);
  }
  return parts;
}

Value WgmmaMainloop::addAccumulators(Value running, Value acc) {
  for (int64_t i = 0, e = kernel.accumulators(); i < e; ++i) {
    Value sum = arith::AddFOp::create(
        b, loc, LLVM::ExtractValueOp::create(b, loc, running, i),
        LLVM::ExtractValueOp::create(b, loc, acc, i));
    running = LLVM::InsertValueOp::create(b, loc, running, sum, i);
  }
  return running;
}

Value WgmmaMainloop::emitMainLoop(Value firstSlice, Value columnBase,
                                  std::vector<SmallVector<Value>> &inputRows) {
  if (kernel.split())
    return emitSplitMainLoop(firstSlice);
  Value zero = LLVM::ZeroOp::create(b, loc, kernel.accumulatorType);
  ring.waitForTurn(firstSlice);
  // The ring's stage and its phase parity go around with the loop (as
  // CUTLASS's PipelineState), not from the slice number: its division by
  // a stage count that is not a power of 2 took 64-bit multiplies on the
  // path between two stages' wgmmas. The slice and the stage are i32, as
  // the descriptors: in 64 bits each comparison and increment took two
  // instructions.
  // A ping-pong kernel.consumer multiplies alone: two stages in flight keep
  // more work queued for the tensor cores between its stages (1-4% faster over
  // the workloads on the H100; tf32 epilogues up to 10%, bf16 ones within
  // the noise); so does the one kernel.consumer kernel.warpgroup of a small
  // batch's tiles (within 2% of one stage, the loads bound them; its swapped
  // kernel.tiles were measured with two); two cooperative consumers fill each
  // other's gaps.
  int64_t inFlight = c.isPingpong() || kernel.warpgroups == 1 ? 2 : 1;
  Value firstParity = kernel.parityOf(div(firstSlice, c.getStages()));
  // One K slice: (accumulators, stage, parity) to the next's;
  // `whileResident(stage)` once the slice's wgmmas are issued.
  auto step = [&](Value kTile, ValueRange state,
                  function_ref<void(Value stage)> whileResident) {
    Value stage = state[1], parity = state[2];
    Value stageIndex = kernel.toIndex(stage);
    ring.waitBarrier(parity, ring.fullBarrier(stageIndex));
    // `inFlight` stages of wgmmas stay in flight: the stage that many
    // slices back is released once its wgmmas are done.
    Value acc = multiplyStage(state[0], stageIndex, /*fromZero=*/false);
    if (whileResident)
      whileResident(stageIndex);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(inFlight));
    guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, kTile,
                                  kernel.i32(inFlight)),
            [&] {
              Value back =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                        stage, kernel.i32(inFlight));
              Value earlier = arith::SelectOp::create(
                  b, loc, back,
                  arith::SubIOp::create(b, loc, stage, kernel.i32(inFlight)),
                  arith::AddIOp::create(b, loc, stage,
                                        kernel.i32(c.getStages() - inFlight)));
              ring.release(kernel.toIndex(earlier));
            });
    auto [nextStageIndex, nextParity] = ring.nextStage(stage, parity);
    return SmallVector<Value>{acc, nextStageIndex, nextParity};
  };
  auto loop = [&](Value from, Value to, ValueRange initial) {
    return SmallVector<Value>(
        scf::ForOp::create(
            b, loc, kernel.toI32(from), kernel.toI32(to), kernel.i32(1),
            initial,
            [&](OpBuilder &nb, Location, Value kTile, ValueRange state) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(nb.getInsertionBlock(),
                                  nb.getInsertionPoint());
              scf::YieldOp::create(b, loc, step(kTile, state, nullptr));
            })
            .getResults());
  };
  SmallVector<Value> state{zero, kernel.toI32(ring.stageOf(firstSlice, idx(0))),
                           firstParity};
  if (takesRowOperandFromRing(p)) {
    // The slices of the tile's columns, unrolled, each giving its runs'
    // x elements, between the slices before and after them.
    Value first = div(columnBase, kernel.tileK);
    int64_t columnSlices = c.getBlockN() / kernel.tileK;
    inputRows.assign(kernel.accumulators() / 2, {});
    state = loop(idx(0), first, state);
    for (int64_t slice = 0; slice < columnSlices; ++slice)
      state = step(kernel.toI32(add(first, slice)), state, [&](Value stage) {
        operands.loadInputRows(stage, slice, inputRows);
      });
    state = loop(add(first, columnSlices), kernel.tilesK, state);
  } else {
    state = loop(idx(0), kernel.tilesK, state);
  }
  ring.endTurn();
  Value acc = waitForGroups(0, state[0]);
  int64_t slices = kernel.kSlices();
  for (int64_t back = std::min(inFlight, slices); back >= 1; --back)
    ring.release(ring.stageOf(firstSlice, idx(slices - back)));
  return acc;
}

Value WgmmaMainloop::emitSplitMainLoop(Value firstSlice) {
  int64_t slices = kernel.kSlices();
  int64_t group = std::min(kSlicesPerSum, slices);
  // The tensor cores sum groups of `group` K slices (the last group takes
  // the rest) from zero, which the running sums then add. Slice t + 1's
  // register parts are loaded (once the producer's splitters have written
  // its remainders) while the tensor cores multiply slice t. The
  // kernel.consumer kernel.warpgroups share no barrier here: one's adds run
  // under the other's wgmmas.
  ring.waitForTurn(firstSlice);
  ring.waitSplit(firstSlice, idx(0));
  SmallVector<Value> first =
      loadRegisterParts(ring.stageOf(firstSlice, idx(0)));
  // Waits for slice `kTile` and loads its register parts where the tile has
  // it.
  auto prepare = [&](Value kTile, ValueRange like) {
    auto load = scf::IfOp::create(
        b, loc, TypeRange(like),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kTile,
                              kernel.tilesK),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(&load.getThenRegion().front());
    ring.waitSplit(firstSlice, kTile);
    scf::YieldOp::create(b, loc,
                         loadRegisterParts(ring.stageOf(firstSlice, kTile)));
    b.setInsertionPointToStart(&load.getElseRegion().front());
    SmallVector<Value> none;
    for (Value part : like)
      none.push_back(LLVM::PoisonOp::create(b, loc, part.getType()));
    scf::YieldOp::create(b, loc, none);
    return SmallVector<Value>(load.getResults());
  };
  // Slices kTile .. kTile + count - 1 into the running sums, given the first
  // one's register parts: the accumulators, the running sums and the next
  // slice's register parts.
  auto multiplyGroup = [&](Value kTile, int64_t count, Value acc, Value running,
                           SmallVector<Value> parts) {
    Value slice = kTile;
    SmallVector<Value> previous;
    for (int64_t i = 0; i < count; ++i) {
      slice = add(kTile, i);
      Value stage = ring.stageOf(firstSlice, slice);
      acc = multiplyStage(acc, stage, /*fromZero=*/i == 0, parts);
      if (i > 0) {
        // The previous slice's wgmmas are done: its stage and registers
        // are free.
        waitForGroups(1, Value(), previous);
        ring.release(ring.stageOf(firstSlice, sub(slice, 1)));
      }
      if (i + 1 < count) {
        ring.waitSplit(firstSlice, add(slice, 1));
        previous = std::exchange(
            parts, loadRegisterParts(ring.stageOf(firstSlice, add(slice, 1))));
      }
    }
    SmallVector<Value> following = prepare(add(slice, 1), parts);
    acc = waitForGroups(0, acc, parts);
    ring.release(ring.stageOf(firstSlice, slice));
    running = addAccumulators(running, acc);
    SmallVector<Value> results{acc, running};
    llvm::append_range(results, following);
    return results;
  };
  Value zero = LLVM::ZeroOp::create(b, loc, kernel.accumulatorType);
  SmallVector<Value> initial{zero, zero};
  llvm::append_range(initial, first);
  int64_t whole = slices - slices % group;
  // Every slice has been waited for once the loops are done.
  auto finish = [&](Value running) {
    ring.endTurn();
    return running;
  };
  auto loop = scf::ForOp::create(
      b, loc, idx(0), idx(whole), idx(group), initial,
      [&](OpBuilder &nb, Location, Value kTile, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(
            b, loc,
            multiplyGroup(kTile, group, state[0], state[1],
                          SmallVector<Value>(state.drop_front(2))));
      });
  if (whole == slices)
    return finish(loop.getResult(1));
  return finish(multiplyGroup(
      idx(whole), slices - whole, loop.getResult(0), loop.getResult(1),
      SmallVector<Value>(loop.getResults().drop_front(2)))[1]);
}
