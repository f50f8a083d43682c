//===- TileScheduler.cpp - the tiles of the wgmma kernel's blocks ---------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

void WgmmaTileScheduler::forEachTile(
    function_ref<void(Value tile, Value iteration)> body, Value turn,
    int64_t turns) {
  // Clusters stride over their kernel.tiles together.
  Value first = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  if (c.getClusterSize() > 1) {
    first = div(first, c.getClusterSize());
    grid = div(grid, c.getClusterSize());
  }
  Value step = grid;
  if (turn) {
    first = add(first, arith::MulIOp::create(b, loc, turn, grid));
    step = mul(grid, turns);
  } else {
    turn = idx(0);
  }
  scf::ForOp::create(
      b, loc, first, kernel.tiles, step, ValueRange{turn},
      [&](OpBuilder &nb, Location, Value tile, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        body(tile, state[0]);
        scf::YieldOp::create(b, loc, ValueRange{add(state[0], turns)});
      });
}

void WgmmaTileScheduler::forEachSlice(function_ref<void(Value kTile)> body) {
  scf::ForOp::create(b, loc, idx(0), kernel.tilesK, idx(1), ValueRange{},
                     [&](OpBuilder &nb, Location, Value kTile, ValueRange) {
                       OpBuilder::InsertionGuard guard(b);
                       b.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                       body(kTile);
                       scf::YieldOp::create(b, loc);
                     });
}
