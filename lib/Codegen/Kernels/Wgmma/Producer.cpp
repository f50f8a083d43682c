//===- Producer.cpp - the wgmma kernel's producer warpgroup ---------------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

void WgmmaProducer::emitSplitters() {
  guarded(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, kernel.thread,
                            idx(kWarpgroupThreads - kSplitters)),
      [&] {
        Value splitter = sub(kernel.thread, kWarpgroupThreads - kSplitters);
        // The ring's slices in the consumers' order; a stage's next load
        // waits for the consumers' release, which follows their reads of
        // its remainders.
        scheduler.forEachTile([&](Value, Value iteration) {
          Value firstSlice = scheduler.firstSliceOf(iteration);
          scheduler.forEachSlice([&](Value kTile) {
            ring.waitFull(firstSlice, kTile);
            Value stage = ring.stageOf(firstSlice, kTile);
            mainloop.splitStage(stage, splitter);
            nvgpu::MBarrierArriveOp::create(b, loc, kernel.barriers,
                                            ring.splitBarrier(stage));
          });
          // A residual slice's stage has nothing to split, but its split
          // barrier completes a phase too, so that a stage's phases
          // count its uses (takeRingResidualSlice).
          for (int64_t column = 0; column < kernel.residualSlices(); ++column) {
            Value slice = idx(kernel.kSlices() + column);
            ring.waitFull(firstSlice, slice);
            nvgpu::MBarrierArriveOp::create(
                b, loc, kernel.barriers,
                ring.splitBarrier(ring.stageOf(firstSlice, slice)));
          }
        });
      });
}

void WgmmaProducer::emit() {
  kernel.setMaxRegisters(kProducerRegisters,
                         NVVM::SetMaxRegisterAction::decrease);
  if (kernel.split())
    emitSplitters();
  guarded(equal(kernel.thread, 0), [&] {
    scheduler.forEachTile([&](Value tile, Value iteration) {
      GemmTilePosition position = rasterizeGemmTile(b, loc, tile, kernel.rows,
                                                    p.n, c, kernel.clusterRank);
      // A tile of the batch's last block row, if the batch ends inside it,
      // loads that block row's kernel.rows alone (x's last-kernel.rows map):
      // TMA's fill of kernel.rows past the matrix cost about as much as loading
      // the tile in 16-row boxes, and a 128-row tile at 65 kernel.rows
      // took 1.6x its time at 128. A cluster's tile past the last block row
      // keeps the whole map.
      Value lastRows = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                position.rowBase, kernel.rows),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                add(position.rowBase, c.getBlockM()),
                                kernel.rows));
      Value xBytes = arith::SelectOp::create(
          b, loc, lastRows,
          mul(sub(kernel.rows, position.rowBase), kGemmRowBytes),
          idx(c.getBlockM() * kGemmRowBytes));
      Value bytes = add(xBytes, ring.weightRows() * kGemmRowBytes);
      // The previous tile's epilogue stages its output in the ring.
      if (kernel.stagesInRing())
        guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      iteration, idx(0)),
                [&] {
                  ring.waitBarrier(kernel.parityOf(sub(iteration, 1)),
                                   ring.epilogueBarrier());
                });
      Value firstSlice = scheduler.firstSliceOf(iteration);
      scheduler.forEachSlice([&](Value kTile) {
        Value stage = ring.acquireStage(add(firstSlice, kTile));
        nvgpu::MBarrierArriveExpectTxOp::create(
            b, loc, kernel.barriers, bytes, ring.fullBarrier(stage), Value());
        Value k = mul(kTile, kernel.tileK);
        if (kernel.kShare)
          k = add(k, mul(kernel.kShare, kernel.kSlices() * kernel.tileK));
        auto loadX = [&](Value map) {
          nvgpu::TmaAsyncLoadOp::create(
              b, loc,
              kernel.sharedView(ring.aOffset(stage),
                                {c.getBlockM(), kernel.tileK},
                                kernel.elementType),
              kernel.barriers, map, ValueRange{k, position.rowBase},
              ring.fullBarrier(stage), Value(), Value());
        };
        auto which = scf::IfOp::create(b, loc, lastRows,
                                       /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard branch(b);
          b.setInsertionPointToStart(&which.getThenRegion().front());
          loadX(kernel.xLastRowsMap);
          b.setInsertionPointToStart(&which.getElseRegion().front());
          loadX(kernel.xMap);
        }
        // Clusters: this block's share of w's kernel.rows, into both blocks.
        int64_t shareRows = c.getBlockN() / c.getClusterM();
        auto loadWeight = [&](Value map, Value wRow, Value offset) {
          Value multicast;
          if (c.isClustered()) {
            Value share = mul(kernel.clusterRank, shareRows);
            wRow = add(wRow, share);
            offset = add(offset, mul(share, kGemmRowBytes));
            multicast = arith::ConstantOp::create(
                b, loc, b.getI16IntegerAttr((1 << c.getClusterM()) - 1));
          }
          if (!kernel.weightNMajor()) {
            nvgpu::TmaAsyncLoadOp::create(
                b, loc,
                kernel.sharedView(offset, {shareRows, kernel.tileK},
                                  kernel.elementType),
                kernel.barriers, map, ValueRange{k, wRow},
                ring.fullBarrier(stage), multicast, Value());
            return;
          }
          // Stored [K, N]: the share's boxes of tileK columns, each the K
          // slice's rows of them, one after another (a column of w takes
          // 128 bytes of the stage either way).
          for (int64_t box = 0; box < shareRows / kernel.tileK; ++box)
            nvgpu::TmaAsyncLoadOp::create(
                b, loc,
                kernel.sharedView(add(offset, box * kernel.weightBoxBytes()),
                                  {kernel.tileK, kernel.tileK},
                                  kernel.elementType),
                kernel.barriers, map,
                ValueRange{add(wRow, box * kernel.tileK), k},
                ring.fullBarrier(stage), multicast, Value());
        };
        auto [wMap, wColumn] = kernel.weightMapAt(position.columnBase);
        loadWeight(wMap, wColumn, ring.bOffset(stage));
        if (kernel.dualMap)
          loadWeight(kernel.dualMap, position.columnBase,
                     ring.dualOffset(stage));
      });
      if (kernel.residualMap)
        operands.loadResidualSlices(firstSlice, position);
    });
  });
}
