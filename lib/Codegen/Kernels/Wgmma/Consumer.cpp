//===- Consumer.cpp - the wgmma kernel's consumer warpgroups --------------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

void WgmmaConsumer::emit() {
  kernel.setMaxRegisters(kConsumerRegisters,
                         NVVM::SetMaxRegisterAction::increase);
  // A ping-pong kernel.consumer's epilogue has its own column constants (and
  // moments scratch), past the other's.
  Value epilogueShared = kernel.shared;
  if (c.isPingpong()) {
    Value shift = mul(kernel.consumer, kernel.layout.consumerScratchStride);
    epilogueShared = memref::ViewOp::create(
        b, loc, cast<MemRefType>(kernel.shared.getType()), kernel.shared, shift,
        ValueRange{sub(idx(kernel.layout.total - kSwizzleAtomBytes), shift)});
  }
  Value tileThread = c.isPingpong() ? rem(kernel.thread, kWarpgroupThreads)
                                    : kernel.consumerThread;
  scheduler.forEachTile(
      [&](Value tile, Value iteration) {
        GemmTilePosition position = rasterizeGemmTile(
            b, loc, tile, kernel.rows, p.n, c, kernel.clusterRank);
        GemmTile gemmTile{tileThread,
                          c.getTileThreads(),
                          kernel.rows,
                          position.tileM,
                          position.blockRowTiles,
                          position.rowBase,
                          position.columnBase,
                          epilogueShared,
                          [this] { kernel.consumerBarrier(); },
                          kernel.stagesInRing() ? GemmOutputPath::Staged
                                                : GemmOutputPath::Direct};
        GemmEpilogueEmitter epilogue(b, loc, p, gemmTile, *kernel.epilogueArgs);
        epilogue.loadColumnConstants();
        kernel.consumerBarrier();
        Value firstSlice = scheduler.firstSliceOf(iteration);
        std::vector<SmallVector<Value>> inputRows;
        Value acc =
            mainloop.emitMainLoop(firstSlice, position.columnBase, inputRows);
        if (takesRowOperandFromRing(p))
          epilogue.provideRowOperand(
              *p.inputRowOperand, [&](size_t run) { return inputRows[run]; });
        std::optional<RingResidual> residual;
        if (kernel.residualMap) {
          residual = operands.ringResidualOf(firstSlice);
          epilogue.provideRowOperand(*residualThroughRing(p), [&](size_t run) {
            return operands.ringResidualRun(*residual, run);
          });
        }
        if (c.isClustered()) {
          // A cluster's tile past the last block row: loaded (as zeros) and
          // multiplied for the peer's sake, not stored.
          guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        position.tileM, position.blockRowTiles),
                  [&] { emitEpilogue(epilogue, acc); });
        } else if (kernel.kShare) {
          guarded(equal(kernel.kShare, 0), [&] {
            emitEpilogue(epilogue, splitK.addPeerPartials(acc, iteration));
          });
          guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        kernel.kShare, idx(0)),
                  [&] { splitK.storePartials(acc, iteration); });
        } else {
          emitEpilogue(epilogue, acc);
        }
        // Slices whose runs the epilogue did not read still leave the ring.
        while (residual && residual->taken < kernel.residualSlices())
          operands.takeRingResidualSlice(*residual, /*read=*/false);
        if (kernel.stagesInRing())
          // The staged tile's generic accesses come before the producer's TMA
          // writes into the ring.
          kernel.fenceSharedProxies();
        // Every kernel.consumer is done with the tile's column constants (and
        // staged tile) before the next tile's.
        kernel.consumerBarrier();
        if (kernel.stagesInRing())
          guarded(equal(kernel.consumerThread, 0), [&] {
            nvgpu::MBarrierArriveOp::create(b, loc, kernel.barriers,
                                            ring.epilogueBarrier());
          });
      },
      c.isPingpong() ? kernel.consumer : Value(), kernel.turns);
}

void WgmmaConsumer::emitEpilogue(GemmEpilogueEmitter &epilogue, Value acc) {
  // Lane l of warp w of a kernel.consumer kernel.warpgroup holds, of each n8
  // block j of each of its m64 row blocks r, kernel.rows 64r + 16w + l / 4 (+
  // 8) and columns 8j + 2 (l % 4) (+ 1) of its wgmmas' output: elements 4j, 4j
  // + 1 (+ 2,
  // + 3) of the block's. Swapped operands: those are the tile's columns and
  // kernel.rows, the runs go down columns.
  auto [warp, lane] = kernel.warpAndLane();
  Value wgmmaRow =
      add(add(kernel.consumerFirstRow(), mul(warp, 16)), div(lane, 4));
  Value wgmmaColumn = mul(rem(lane, 4), 2);
  bool swapped = c.swapsOperands();
  SmallVector<AccumulatorRun> runs;
  for (int64_t rowBlock = 0; rowBlock < kernel.rowBlocks(); ++rowBlock)
    for (int64_t j = 0; j < c.getWgmmaN() / 8; ++j)
      for (int64_t half = 0; half < 2; ++half) {
        SmallVector<Value> pair, dualPair;
        int64_t first =
            rowBlock * kernel.blockAccumulators() + 4 * j + 2 * half;
        for (int64_t e = 0; e < 2; ++e) {
          pair.push_back(LLVM::ExtractValueOp::create(b, loc, acc, first + e));
          // A dual GEMM's accumulators of the same outputs.
          if (kernel.dual())
            dualPair.push_back(LLVM::ExtractValueOp::create(
                b, loc, acc, kernel.accumulators() + first + e));
        }
        int64_t row = 64 * rowBlock + 8 * half, column = 8 * j;
        if (swapped)
          std::swap(row, column);
        runs.push_back({row, column, pair, dualPair});
      }
  if (swapped)
    epilogue.emit(wgmmaColumn, wgmmaRow, runs);
  else
    epilogue.emit(wgmmaRow, wgmmaColumn, runs);
}
