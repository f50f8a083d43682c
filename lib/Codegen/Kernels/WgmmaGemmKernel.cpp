//===- WgmmaGemmKernel.cpp - GPU backend 3: the Hopper GEMM kernel --------===//
//
// A persistent kernel: each thread block computes blockM x blockN tiles of
// out = x.w^T, tile b, b + grid, ... (the runtime launches as many blocks
// as the GPU holds at once, or one a tile: tile_scheduler = per_block), with
// 128 + 128 * W threads: warpgroup 0 is the producer, whose first thread
// streams 128-byte-deep K slices of x and w into a ring of `stages`
// shared-memory buffers with TMA (the copy engine swizzles them by 128 bytes
// and fills rows and K past the matrices with zeros; a tile of the batch's last
// block row loads only the batch's rows, through a second map of x, the rest of
// its stage holding older rows, whose results the epilogue never stores or
// reduces), running on into the block's next tile; warpgroups 1..W are the
// consumers, each multiplying 64 or 128 rows of the tile by all its columns
// with wgmma straight from shared memory (one m64 wgmma a K step for each 64
// rows, each into its own accumulators). Per stage a `full` mbarrier counts the
// TMA bytes in and an `empty` one the consumers' release; the ring's slices are
// numbered across the block's tiles. setmaxnreg moves the producer's registers
// to the consumers' accumulators.
//
// The epilogue writes the output from the accumulators while the producer
// fills the ring with the next tile; each quad of lanes holds whole rows of
// the tile, so row reductions combine within it, from the registers too,
// and the lanes holding a column sum its moments with shuffles (column
// statistics; for a batch of one block row, those of the whole batch, by
// which the epilogue then normalizes its values). An epilogue that reads
// its tile back (row reductions over spans that are not whole 8-column
// blocks) stages it in the ring's buffers instead, and the producer waits
// for its release (one more mbarrier) before the next tile's loads; such a
// kernel is launched with a block per tile.
//
// With swapped operands (operands = w_x) each wgmma multiplies the
// consumer's rows of w's tile by all of x's (W X^T): the accumulators hold
// the tile transposed, a quad of lanes whole columns of it, whose moments
// (a training batch norm's) it sums without the warps' merge; the epilogue
// transposes 16-bit results back across the warp's lanes as it stores them.
//
// With the ping-pong schedule the two consumer warpgroups take the block's
// tiles in turn, each a whole tile: the ring's slices go to one
// warpgroup for a tile, then to the other, so that one's epilogue runs
// under the other's wgmmas instead of leaving the tensor cores idle.
//
// A clustered kernel's blocks run in pairs (a cluster of 2) that take
// tiles of adjacent block rows and the same block column: each producer
// loads its own x rows and half of the w tile, which TMA multicasts to the
// same stage of both blocks; a stage's empty barrier then counts both
// blocks' consumer warps, which arrive on each block's barrier, so that
// neither producer overwrites a stage its peer still reads.
//
// With split_k = S the blocks of a cluster of S share each tile: block r
// multiplies the r-th of S equal shares of its K slices; the others store
// their sums into the first block's shared memory (distributed shared
// memory) and arrive on its mbarrier, and the first adds them in the
// order of the blocks' ranks (the same sums whichever block finishes
// first) and runs the epilogue alone; each peer waits until its sums are
// taken before it stores the next tile's.
//
// 3xTF32 (fp32 precision of f32 tensors): three wgmmas a K step (small
// terms first), x's high and low tf32 parts from registers (ldmatrix, then
// the split), w's parts (the same split) from the stage, where two warps
// of the producer warpgroup write the high part over w once the stage is
// loaded, and a remainder buffer a stage (a third mbarrier a stage). With
// swapped operands the two change places: w's parts come from registers,
// x's from the stage and the buffer (small batches: 16 or 32 rows a stage
// to split). The consumers load the next K slice's parts while the tensor
// cores multiply this one; each pair of K slices is summed from zero and
// added to the running sums with round-to-nearest, as the sm_80 kernel
// does (the tensor cores truncate when they accumulate). x from
// registers leaves shared memory w's reads only (both operands' reads
// bounded the kernel), and with the split in the producer the consumer
// warpgroups need no barrier in the main loop (docs/known-issues.md).
//
// Both operands are K-contiguous, the layout wgmma reads without transpose
// (tf32 has no other), but for a 16-bit w stored [K, N] (`weight_layout
// in_out`, GPT-2's Conv1D): TMA loads its tile in boxes of a K slice's rows
// by 128 bytes of N (64 columns), which wgmma reads N-major (imm-trans-b,
// or imm-trans-a with swapped operands): the descriptor's leading byte
// offset steps from one box to the next along N, a K step 16 rows down.
// An f32 one's boxes (32 x 32) 3xTF32's splitters transpose in place as
// they split them, so that its wgmmas read w K-major.
//
// The parts (ring, tile scheduler, main loop, row operands, split-K,
// producer, consumer) are in Wgmma/, each a class (Wgmma/WgmmaKernel.h).
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Kernels/WgmmaGemmKernel.h"

#include "Wgmma/WgmmaKernel.h"
#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

namespace {

/// The kernel's body: set-up, the barriers, then the producer and consumer
/// roles of its parts.
class WgmmaGemmEmitter : WgmmaPart {
public:
  explicit WgmmaGemmEmitter(WgmmaKernel &kernel)
      : WgmmaPart(kernel), ring(kernel), scheduler(kernel),
        operands(kernel, ring), mainloop(kernel, ring, operands),
        splitK(kernel, ring) {}

  void emit(gpu::GPUFuncOp func, LaunchContract &launch);

private:
  WgmmaRing ring;
  WgmmaTileScheduler scheduler;
  WgmmaRowOperands operands;
  WgmmaMainloop mainloop;
  WgmmaSplitK splitK;
};

void WgmmaGemmEmitter::emit(gpu::GPUFuncOp func, LaunchContract &launch) {
  kernel.setUp(func);
  guarded(equal(kernel.thread, 0), [&] {
    ring.initBarriers();
    nvgpu::TmaPrefetchOp::create(b, loc, kernel.xMap, Value());
    kernel.prefetchWeightMaps();
    if (kernel.residualMap)
      nvgpu::TmaPrefetchOp::create(b, loc, kernel.residualMap, Value());
    // The peers' multicasts, stores and arrivals find the barriers
    // initialized.
    if (c.getClusterSize() > 1)
      NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  if (c.getClusterSize() > 1)
    ring.clusterBarrier();
  else
    gpu::BarrierOp::create(b, loc);
  // The set-up above overlaps the stream's previous kernel.
  emitPredecessorWait(b, loc, func, launch);
  auto roles = scf::IfOp::create(b, loc, equal(kernel.warpgroup, 0),
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    WgmmaProducer(kernel, ring, scheduler, mainloop, operands).emit();
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    WgmmaConsumer(kernel, ring, scheduler, mainloop, operands, splitK).emit();
  }
  // No block leaves while its peers may still arrive on its barriers.
  if (c.getClusterSize() > 1)
    ring.clusterBarrier();
  gpu::ReturnOp::create(b, loc);
}

void emitWgmmaGemmKernel(OpBuilder &builder, Location loc,
                         const GemmKernelProblem &problem,
                         gpu::GPUFuncOp kernel, LaunchContract &launch) {
  WgmmaKernel state(builder, loc, problem);
  WgmmaGemmEmitter(state).emit(kernel, launch);
}

} // namespace

Kernel mlir::fusion::buildWgmmaGemmKernel(OpBuilder &builder, Location loc,
                                          StringRef name,
                                          const GemmKernelProblem &problem) {
  OpBuilder::InsertionGuard insertion(builder);
  GemmConfigAttr config = problem.config;
  Type type = problem.elementType;
  int64_t n = problem.n, k = problem.k;
  int64_t tileK = kGemmRowBytes / elementBytes(type);
  Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
  SmallVector<Type> argTypes{ptr, ptr};
  LaunchContract launch;
  launch.arguments.push_back(
      KernelArgument::tensorMap(0, {RowExpr::rows(), RowExpr::constant(k)},
                                type, {config.getBlockM(), tileK}));
  // w (and the dual weight): [N, K] in boxes of a block's share of the
  // tile's rows by a K slice; stored in_out, [K, N] in boxes of a K slice's
  // rows by 128 bytes of N, the producer loading a share's boxes one by
  // one.
  // A grouped GEMM's parts of w: a map a part, of its columns.
  auto weightMap = [&](unsigned operand, int64_t columns) {
    if (problem.weightLayout == WeightLayout::in_out)
      return KernelArgument::tensorMap(
          operand, {RowExpr::constant(k), RowExpr::constant(columns)}, type,
          {tileK, tileK});
    return KernelArgument::tensorMap(
        operand, {RowExpr::constant(columns), RowExpr::constant(k)}, type,
        {config.getBlockN() / config.getClusterM(), tileK});
  };
  launch.arguments.push_back(weightMap(1, problem.partWidth(0)));
  argTypes.push_back(ptr);
  launch.arguments.push_back(KernelArgument::lastBlockRowTensorMap(
      0, {RowExpr::rows(), RowExpr::constant(k)}, type, config.getBlockM(),
      tileK));
  SmallVector<int64_t> tensorMapArgs{0, 1, 2};
  if (problem.dualWeight) {
    // The dual weight, the last launch operand, in w's boxes.
    tensorMapArgs.push_back(argTypes.size());
    argTypes.push_back(ptr);
    launch.arguments.push_back(weightMap(problem.dualWeightOperand(), n));
  }
  if (std::optional<unsigned> residual = wgmma::residualThroughRing(problem)) {
    // The residual matrix, a launch operand among the epilogue's (its
    // memref argument stays), also as a tensor map in x's boxes, the kernel
    // argument after x's last-rows map.
    unsigned operand = 2 + problem.hasBias + problem.storesOutput +
                       problem.intermediates.size() + problem.columns.size() +
                       *residual;
    tensorMapArgs.push_back(argTypes.size());
    argTypes.push_back(ptr);
    launch.arguments.push_back(KernelArgument::tensorMap(
        operand, {RowExpr::rows(), RowExpr::constant(n)}, type,
        {config.getBlockM(), tileK}));
  }
  size_t mapsEnd = argTypes.size();
  unsigned operand = completeGemmLaunch(problem, argTypes, launch);
  // The maps of w's parts past the first, the last launch operands, are
  // kernel arguments after the other maps (a map's place is its
  // argument's number among the lowered kernel's).
  for (size_t part = 1; part < problem.weightParts.size(); ++part) {
    size_t at = mapsEnd + part - 1;
    tensorMapArgs.push_back(at);
    argTypes.insert(argTypes.begin() + at, ptr);
    launch.arguments.insert(launch.arguments.begin() + at,
                            weightMap(operand++, problem.partWidth(part)));
  }
  // A tile staged in the ring holds the producer back until its epilogue
  // is done, so the block's next tile gains no overlap; one block a tile
  // measured the same and leaves the balance to the block scheduler.
  launch.persistent = !problem.readsStagedTile() && !config.isPerBlock();

  gpu::GPUFuncOp kernel =
      createKernel(builder, loc, name, argTypes, launch.blockSize);
  kernel->setAttr(fusion_rt::FusionRuntimeDialect::getTensorMapArgsAttrName(),
                  builder.getDenseI64ArrayAttr(tensorMapArgs));
  // One block an SM caps each thread's registers at entry (65536 / threads),
  // which setmaxnreg needs.
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  builder.getI32IntegerAttr(1));
  if (config.getClusterSize() > 1)
    kernel->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    builder.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(config.getClusterSize()), 1, 1}));
  emitWgmmaGemmKernel(builder, loc, problem, kernel, launch);
  return {kernel, std::move(launch)};
}
