//===- RowOperands.cpp - epilogue row operands through the ring -----------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

void WgmmaRowOperands::loadResidualSlices(Value firstSlice,
                                          const GemmTilePosition &position) {
  int64_t bytes = c.getBlockM() * kGemmRowBytes;
  for (int64_t column = 0; column < kernel.residualSlices(); ++column) {
    Value stage = ring.acquireStage(add(firstSlice, kernel.kSlices() + column));
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, kernel.barriers, idx(bytes),
                                            ring.fullBarrier(stage), Value());
    // The residual's kernel.rows of the tile, `kernel.tileK` of its columns,
    // where x's kernel.rows of a K slice go.
    nvgpu::TmaAsyncLoadOp::create(
        b, loc,
        kernel.sharedView(ring.aOffset(stage), {c.getBlockM(), kernel.tileK},
                          kernel.elementType),
        kernel.barriers, kernel.residualMap,
        ValueRange{add(position.columnBase, column * kernel.tileK),
                   position.rowBase},
        ring.fullBarrier(stage), Value(), Value());
  }
}

RingResidual WgmmaRowOperands::ringResidualOf(Value firstSlice) {
  Value slice = add(firstSlice, kernel.kSlices());
  RingResidual residual{kernel.toI32(rem(slice, c.getStages())),
                        kernel.parityOf(div(slice, c.getStages()))};
  residual.rows.assign(kernel.accumulators() / 2, {});
  return residual;
}

SmallVector<Value> WgmmaRowOperands::ringResidualRun(RingResidual &residual,
                                                     size_t run) {
  // Runs number row block, n8 block, row half (emitEpilogue).
  int64_t block = run % (c.getBlockN() / 4) / 2;
  while (residual.taken <= block / (kernel.tileK / 8))
    takeRingResidualSlice(residual, /*read=*/true);
  return residual.rows[run];
}

void WgmmaRowOperands::takeRingResidualSlice(RingResidual &residual,
                                             bool read) {
  Value stage = kernel.toIndex(residual.stage);
  ring.waitBarrier(residual.parity, ring.fullBarrier(stage));
  // 3xTF32: the splitters complete each phase of a stage's split barrier,
  // a residual slice's too, and the consumers wait for every phase, so
  // that none runs a phase ahead of their waits.
  if (kernel.split())
    ring.waitBarrier(residual.parity, ring.splitBarrier(stage));
  if (read)
    loadInputRows(stage, residual.taken, residual.rows);
  ring.release(stage);
  std::tie(residual.stage, residual.parity) =
      ring.nextStage(residual.stage, residual.parity);
  ++residual.taken;
}

void WgmmaRowOperands::loadInputRows(
    Value stage, int64_t slice, std::vector<SmallVector<Value>> &inputRows) {
  auto [warp, lane] = kernel.warpAndLane();
  Value tile = kernel.sharedView(
      ring.aOffset(stage), {c.getBlockM(), kernel.tileK}, kernel.elementType);
  int64_t runsPerRowBlock = c.getBlockN() / 4;
  if (elementBytes(kernel.elementType) == 4) {
    // Lane l's pair of n8 block j, row r (+ 8h), columns 8j + 2 (l % 4),
    // lies in 16-byte chunk 2j + (l % 4) / 2, which the swizzle moves by
    // r % 8 = l / 4: the 8 kernel.rows' chunks fall in distinct bank groups but
    // for pairs, two wavefronts for the warp's 256 bytes.
    Value row =
        add(add(kernel.consumerFirstRow(), mul(warp, 16)), div(lane, 4));
    Value chunkInBlock = div(rem(lane, 4), 2);
    Value pairInChunk = mul(rem(lane, 2), 2);
    auto pairType = VectorType::get({2}, kernel.elementType);
    for (int64_t rowBlock = 0; rowBlock < kernel.rowBlocks(); ++rowBlock)
      for (int64_t j = 0; j < kernel.tileK / 8; ++j) {
        Value chunk = arith::XOrIOp::create(b, loc, add(chunkInBlock, 2 * j),
                                            div(lane, 4));
        Value column = add(mul(chunk, kGemmChunkBytes / 4), pairInChunk);
        for (int64_t h = 0; h < 2; ++h) {
          Value pair = vector::LoadOp::create(
              b, loc, pairType, tile,
              ValueRange{add(row, 64 * rowBlock + 8 * h), column},
              /*nontemporal=*/false, llvm::Align(8));
          SmallVector<Value> &values =
              inputRows[rowBlock * runsPerRowBlock +
                        2 * (slice * (kernel.tileK / 8) + j) + h];
          for (int64_t e = 0; e < 2; ++e)
            values.push_back(vector::ExtractOp::create(b, loc, pair, e));
        }
      }
  } else {
    // Lane l addresses row l % 8 of matrix l / 8 = 2h + j of each quad
    // (kernel.rows r + 8h, columns c + 8j); the stage's 16-byte chunks are
    // swizzled by row % 8 = l % 8.
    Value matrix = div(lane, 8);
    Value rowInQuads = add(add(kernel.consumerFirstRow(), mul(warp, 16)),
                           add(mul(div(matrix, 2), 8), rem(lane, 8)));
    int64_t quadsPerSlice = kernel.tileK / 16;
    for (int64_t rowBlock = 0; rowBlock < kernel.rowBlocks(); ++rowBlock)
      for (int64_t quad = 0; quad < quadsPerSlice; ++quad) {
        Value chunk = add(rem(matrix, 2), 2 * quad);
        Value column = mul(arith::XOrIOp::create(b, loc, chunk, rem(lane, 8)),
                           kGemmChunkBytes / elementBytes(kernel.elementType));
        Value fragment = nvgpu::LdMatrixOp::create(
            b, loc, VectorType::get({4, 2}, kernel.elementType), tile,
            ValueRange{add(rowInQuads, 64 * rowBlock), column},
            /*transpose=*/false, /*numTiles=*/4);
        // Matrix 2h + j: the run of row half h and n8 block j of the quad.
        int64_t block = slice * (kernel.tileK / 8) + 2 * quad;
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t j = 0; j < 2; ++j) {
            SmallVector<Value> &pair =
                inputRows[rowBlock * runsPerRowBlock + 2 * (block + j) + h];
            for (int64_t e = 0; e < 2; ++e)
              pair.push_back(vector::ExtractOp::create(
                  b, loc, fragment, ArrayRef<int64_t>{2 * h + j, e}));
          }
      }
  }
  // The next TMA write into the stage (the async proxy) follows its release:
  // without a proxy fence, reads queued behind the epilogue's global stores
  // were overtaken by it.
  kernel.fenceSharedProxies();
}
