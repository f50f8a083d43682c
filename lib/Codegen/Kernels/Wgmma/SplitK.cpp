//===- SplitK.cpp - split-K sums across a cluster -------------------------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

void WgmmaSplitK::storePartials(Value acc, Value iteration) {
  MLIRContext *context = b.getContext();
  // The first block has taken this peer's sums of the block's previous
  // tile from its slot.
  guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, iteration,
                                idx(0)),
          [&] {
            ring.waitBarrier(kernel.parityOf(sub(iteration, 1)),
                             ring.partialsTakenBarrier(),
                             NVVM::MemScopeKind::CLUSTER);
          });
  auto sharedPtr = LLVM::LLVMPointerType::get(context, /*kernel.shared=*/3);
  auto clusterPtr = LLVM::LLVMPointerType::get(context, /*shared_cluster=*/7);
  Value firstBlock = kernel.i32(0);
  // This kernel.thread's first chunk of the slot, in the first block.
  Value slot = NVVM::MapaOp::create(
      b, loc, clusterPtr,
      LLVM::IntToPtrOp::create(
          b, loc, sharedPtr,
          ValueRange{arith::AddIOp::create(
              b, loc, kernel.origin,
              kernel.toI32(partialOffset(sub(kernel.kShare, 1), 0)))}),
      firstBlock);
  auto vectorType = VectorType::get({4}, b.getF32Type());
  for (int64_t chunk = 0; chunk < kernel.accumulators() / 4; ++chunk) {
    Value values = LLVM::PoisonOp::create(b, loc, vectorType);
    for (int64_t e = 0; e < 4; ++e)
      values = LLVM::InsertElementOp::create(
          b, loc, values,
          LLVM::ExtractValueOp::create(b, loc, acc, 4 * chunk + e),
          kernel.i32(e));
    Value address =
        LLVM::GEPOp::create(b, loc, clusterPtr, b.getI8Type(), slot,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(
                                chunk * c.getTileThreads() * 16)});
    LLVM::StoreOp::create(b, loc, values, address, /*alignment=*/16);
  }
  // The arrival releases the stores at cluster scope.
  Value stored = NVVM::MapaOp::create(
      b, loc, clusterPtr, ring.barrierAddress(ring.partialsStoredBarrier()),
      firstBlock);
  NVVM::MBarrierArriveOp::create(b, loc, Type(), stored, Value(),
                                 NVVM::MemScopeKind::CLUSTER,
                                 /*relaxed=*/false);
}

Value WgmmaSplitK::addPeerPartials(Value acc, Value iteration) {
  MLIRContext *context = b.getContext();
  ring.waitBarrier(kernel.parityOf(iteration), ring.partialsStoredBarrier(),
                   NVVM::MemScopeKind::CLUSTER);
  Type f32 = b.getF32Type();
  auto vectorType = VectorType::get({4}, f32);
  for (int64_t peer = 1; peer < c.getSplitK(); ++peer)
    for (int64_t chunk = 0; chunk < kernel.accumulators() / 4; ++chunk) {
      Value values = vector::LoadOp::create(
          b, loc, vectorType,
          kernel.sharedView(partialOffset(idx(peer - 1), chunk), {4}, f32),
          ValueRange{idx(0)});
      for (int64_t e = 0; e < 4; ++e) {
        int64_t i = 4 * chunk + e;
        Value sum = arith::AddFOp::create(
            b, loc, LLVM::ExtractValueOp::create(b, loc, acc, i),
            vector::ExtractOp::create(b, loc, values, ArrayRef<int64_t>{e}));
        acc = LLVM::InsertValueOp::create(b, loc, acc, sum, i);
      }
    }
  // Each kernel.thread's arrival on each peer's barrier releases its reads of
  // the peer's slot (at cluster scope) before the peer stores the next tile's.
  Value taken = ring.barrierAddress(ring.partialsTakenBarrier());
  for (int64_t peer = 1; peer < c.getSplitK(); ++peer)
    NVVM::MBarrierArriveOp::create(
        b, loc, Type(),
        NVVM::MapaOp::create(
            b, loc, LLVM::LLVMPointerType::get(context, /*shared_cluster=*/7),
            taken, kernel.i32(peer)),
        Value(), NVVM::MemScopeKind::CLUSTER, /*relaxed=*/false);
  return acc;
}
