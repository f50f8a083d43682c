//===- Ring.cpp - the wgmma kernel's ring of stages -----------------------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

void WgmmaRing::initBarriers() {
  for (int64_t s = 0; s < c.getStages(); ++s) {
    nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers, idx(1),
                                  fullBarrier(idx(s)), Value());
    nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers,
                                  idx(releaseArrivals()), emptyBarrier(idx(s)),
                                  Value());
  }
  nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers, idx(1),
                                epilogueBarrier(), Value());
  for (int64_t s = 0; kernel.split() && s < c.getStages(); ++s)
    nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers, idx(kSplitters),
                                  splitBarrier(idx(s)), Value());
  if (c.isPingpong())
    nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers,
                                  idx(c.getTileThreads()), turnBarrier(),
                                  Value());
  if (c.splitsK()) {
    nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers,
                                  idx((c.getSplitK() - 1) * c.getTileThreads()),
                                  partialsStoredBarrier(), Value());
    nvgpu::MBarrierInitOp::create(b, loc, kernel.barriers,
                                  idx(c.getTileThreads()),
                                  partialsTakenBarrier(), Value());
  }
}

Value WgmmaRing::barrierAddress(Value index) {
  Value bits = nvgpu::MBarrierGetOp::create(b, loc, b.getI32Type(),
                                            kernel.barriers, index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3),
      ValueRange{bits});
}

void WgmmaRing::waitSlice(Value firstSlice, Value kTile,
                          Value (WgmmaRing::*barrierOf)(Value)) {
  Value slice = add(firstSlice, kTile);
  waitBarrier(kernel.parityOf(div(slice, c.getStages())),
              (this->*barrierOf)(rem(slice, c.getStages())));
}

void WgmmaRing::endTurn() {
  if (c.isPingpong())
    nvgpu::MBarrierArriveOp::create(b, loc, kernel.barriers, turnBarrier());
}

void WgmmaRing::clusterBarrier() {
  NVVM::ClusterArriveOp::create(b, loc, UnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
}

Value WgmmaRing::acquireStage(Value slice) {
  Value stage = rem(slice, c.getStages());
  // Use u of a stage waits for the consumers' release of use u - 1, phase
  // u - 1 of its empty barrier; a fresh barrier counts its phase "-1" as
  // complete.
  Value released = arith::XOrIOp::create(
      b, loc, kernel.parityOf(div(slice, c.getStages())),
      arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  waitBarrier(released, emptyBarrier(stage));
  return stage;
}

std::pair<Value, Value> WgmmaRing::nextStage(Value stage, Value parity) {
  Value next = arith::AddIOp::create(b, loc, stage, kernel.i32(1));
  Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next,
                                      kernel.i32(c.getStages()));
  return {select(wraps, kernel.i32(0), next),
          arith::XOrIOp::create(b, loc, parity, wraps)};
}

void WgmmaRing::waitBarrier(Value parity, Value index,
                            NVVM::MemScopeKind scope) {
  // A loop of try_waits whose branch ptxas may treat as divergent, as
  // CUTLASS's barrier waits are: nvgpu's wait is inline PTX whose
  // `@P bra.uni` asserts that every lane of the warp sees the same result of
  // its own try_wait, which PTX does not promise (measured as fast).
  Value address = barrierAddress(index);
  Value phase = arith::ExtUIOp::create(b, loc, b.getI32Type(), parity);
  Value hint = kernel.i32(kWaitHintNs);
  auto loop = scf::WhileOp::create(b, loc, TypeRange(), ValueRange());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.createBlock(&loop.getBefore()));
  Value done = NVVM::MBarrierTryWaitOp::create(
      b, loc, b.getI1Type(), address, phase, hint, scope, /*relaxed=*/false);
  Value pending = arith::XOrIOp::create(
      b, loc, done, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  scf::ConditionOp::create(b, loc, pending, ValueRange());
  b.setInsertionPointToStart(b.createBlock(&loop.getAfter()));
  scf::YieldOp::create(b, loc);
}

void WgmmaRing::release(Value stage) {
  if (!c.isClustered()) {
    nvgpu::MBarrierArriveOp::create(b, loc, kernel.barriers,
                                    emptyBarrier(stage));
    return;
  }
  // The warp's wgmmas are done (their wait is warp-synchronous): its first
  // lane arrives on the barrier of every block of the cluster, with the
  // default release at CTA scope, as CUTLASS's cluster kernel.barriers do: the
  // stage's reads were the tensor cores', and a release at cluster scope
  // fences the kernel.thread's earlier global stores too.
  guarded(equal(rem(kernel.thread, 32), 0), [&] {
    MLIRContext *context = b.getContext();
    Value address = barrierAddress(emptyBarrier(stage));
    for (int64_t rank = 0; rank < c.getClusterM(); ++rank) {
      Value remote = NVVM::MapaOp::create(
          b, loc, LLVM::LLVMPointerType::get(context, /*shared_cluster=*/7),
          address, kernel.i32(rank));
      NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value());
    }
  });
}

void WgmmaRing::waitForTurn(Value firstSlice) {
  if (!c.isPingpong())
    return;
  Value iteration = div(firstSlice, kernel.slicesPerTile());
  guarded(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, iteration,
                            idx(0)),
      [&] { waitBarrier(kernel.parityOf(sub(iteration, 1)), turnBarrier()); });
}
