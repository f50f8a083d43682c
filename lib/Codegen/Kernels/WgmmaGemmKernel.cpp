//===- WgmmaGemmKernel.cpp - GPU backend 3: the Hopper GEMM kernel --------===//
//
// A persistent kernel: each thread block computes blockM x blockN tiles of
// out = x.w^T, tile b, b + grid, ... (the runtime launches as many blocks
// as the GPU holds at once, or one a tile), with 128 + 128 * W threads:
// warpgroup 0 is the producer, whose first thread streams 128-byte-deep K
// slices of x and w into a ring of `stages` shared-memory buffers with TMA
// (the copy engine swizzles them by 128 bytes and fills rows and K past the
// matrices with zeros; a tile of the batch's last block row loads only the
// batch's rows, through a second map of x, the rest of its stage holding
// older rows, whose results the epilogue never stores or reduces), running
// on into the block's next tile; warpgroups
// 1..W are the consumers, each multiplying 64 or 128 rows of the tile by
// all its columns with wgmma straight from shared memory (one m64 wgmma a
// K step for each 64 rows, each into its own accumulators). Per stage a `full`
// mbarrier counts the TMA bytes in and an `empty` one the consumers'
// release; the ring's slices are numbered across the block's tiles.
// setmaxnreg moves the producer's registers to the consumers'
// accumulators.
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
// the split), w's high part the stage as the tensor cores read it
// (truncated) and its exact remainder from a buffer a stage, which two
// warps of the producer warpgroup write once the stage is loaded (a third
// mbarrier a stage). With swapped operands the two change places: w's
// parts come from registers, x's remainders from the buffer (small
// batches: 16 or 32 rows a stage to split). The consumers load the next K
// slice's parts while the tensor cores multiply this one; each pair of K
// slices is summed from
// zero and added to the running sums with round-to-nearest, as the sm_80
// kernel does (the tensor cores truncate when they accumulate). x from
// registers leaves shared memory w's reads only (both operands' reads
// bounded the kernel), and with the split in the producer the consumer
// warpgroups need no barrier in the main loop (docs/known-issues.md).
//
// Both operands are K-contiguous, the layout wgmma reads without transpose
// (tf32 has no other).
//
//===----------------------------------------------------------------------===//

#include "fusion/Codegen/Kernels/WgmmaGemmKernel.h"

#include "fusion/Dialect/FusionRuntime/IR/FusionRuntimeDialect.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {

constexpr int64_t kWarpgroupThreads = 128;
/// Bytes of K one wgmma consumes: k16 of 16-bit types, k8 of tf32.
constexpr int64_t kMmaKBytes = 32;
/// setmaxnreg with two consumer warpgroups: 128 * 40 + 256 * 232 = 64512 of
/// the SM's 65536 registers.
constexpr int32_t kProducerRegisters = 40;
constexpr int32_t kConsumerRegisters = 232;
/// The suspend-time hint of an mbarrier wait, in ns (PTX's default range).
constexpr int32_t kWaitHintNs = 10000000;
/// The named barrier of the consumers (0 is the block's); a ping-pong
/// kernel's second consumer warpgroup takes the next.
constexpr int32_t kConsumerBarrier = 1;
/// 3xTF32: K slices the tensor cores sum before the running sums add them.
/// Pairs drain the tensor cores half as often as single slices (7% faster
/// on the H100); groups of 4 spill registers and were 2% slower.
constexpr int64_t kSlicesPerSum = 2;
/// 3xTF32: the producer warpgroup's last two warps split w's stages (its
/// first thread issues the loads); the consumers only wait for them.
constexpr int64_t kSplitters = 64;
/// Whether the epilogue's row operand that is x (N = K) comes from the
/// ring: x's rows of the K slices [columnBase, columnBase + blockN) are the
/// tile's residual, which would otherwise come in a second time (measured
/// at the plain GEMM's time). Column tiles that N fills, 16-bit types:
/// the values stay in registers through the main loop, and f32's (blockN / 2
/// a thread) would not fit beside the accumulators; f32 x comes through the
/// ring after the K slices instead (residualThroughRing). Not with swapped
/// operands, whose accumulators hold the tile transposed (small batches:
/// their row operands are loaded element by element), nor with split_k
/// (a block's share of the K slices holds part of the tile's columns).
bool takesRowOperandFromRing(const GemmKernelProblem &p) {
  GemmConfigAttr c = p.config;
  int64_t tileK = kGemmRowBytes / elementBytes(p.elementType);
  return p.inputRowOperand && elementBytes(p.elementType) == 2 && p.n == p.k &&
         !c.swapsOperands() && !c.splitsK() && p.n % c.getBlockN() == 0 &&
         c.getBlockN() % tileK == 0;
}

/// The row operand, an [M, N] matrix (x too, where N = K but
/// takesRowOperandFromRing does not hold), that the producer loads into the
/// ring by TMA after each tile's K slices: blockN / tileK slices of
/// x's shape (its rows of the tile, tileK columns each), which the consumers
/// read in the accumulators' layout as the epilogue goes (loadInputRows)
/// and release, instead of loading it from global memory between two main
/// loops with the tensor cores idle. The cooperative schedule's ring order
/// (a ping-pong consumer's epilogue would hold the other's turn),
/// unclustered, without split_k, a tile not staged in the ring, rows of 16-byte
/// multiples (TMA's strides). Any K: the residual's stages go back to the
/// producer as the epilogue takes them, so the next tile's first K slices wait
/// little.
std::optional<unsigned> residualThroughRing(const GemmKernelProblem &p) {
  GemmConfigAttr c = p.config;
  int64_t tileK = kGemmRowBytes / elementBytes(p.elementType);
  if (c.isPingpong() || c.isClustered() || c.splitsK() || c.swapsOperands() ||
      p.readsStagedTile() || takesRowOperandFromRing(p) || p.n % 8 != 0 ||
      c.getBlockN() % tileK != 0)
    return std::nullopt;
  for (auto [operand, groups] : llvm::enumerate(p.rowGroups))
    if (groups == p.n)
      return operand;
  return std::nullopt;
}

class WgmmaGemmEmitter : IndexEmitter {
public:
  WgmmaGemmEmitter(OpBuilder &builder, Location loc,
                   const GemmKernelProblem &problem)
      : IndexEmitter(builder, loc), p(problem), c(problem.config),
        mma(*problem.config.getMma()), layout(problem.sharedLayout()),
        elementType(problem.elementType),
        tileK(kGemmRowBytes / elementBytes(elementType)),
        warpgroups(c.getConsumerThreads() / kWarpgroupThreads),
        turns(c.getConsumerThreads() / c.getTileThreads()) {}

  void emit(gpu::GPUFuncOp kernel, LaunchContract &launch);

private:
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value i32(int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  }
  /// An index that fits 32 bits (a K slice, a stage), and back.
  Value toI32(Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  }
  Value toIndex(Value value) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), value);
  }
  /// Bit 0 of `index`, as the i1 phase parity of an mbarrier.
  Value parityOf(Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI1Type(), rem(index, 2));
  }
  Value sharedView(Value offset, ArrayRef<int64_t> shape, Type type) {
    return viewOf(shared, offset, shape, type);
  }
  /// Synchronizes the threads of the consumer's tile.
  void consumerBarrier() {
    Value id = i32(kConsumerBarrier);
    if (c.isPingpong())
      id = arith::AddIOp::create(
          b, loc, id,
          arith::IndexCastUIOp::create(b, loc, b.getI32Type(), consumer));
    NVVM::BarrierOp::create(b, loc, Type(), id, i32(c.getTileThreads()), {},
                            Value());
  }
  /// The first row that this consumer warpgroup multiplies of the operand
  /// the warpgroups split (x's tile, or w's with operands = w_x).
  Value consumerFirstRow() {
    return c.isPingpong() ? idx(0) : mul(consumer, c.getWgmmaRowsPerWarpgroup());
  }
  /// This thread's warp in its warpgroup, and its lane.
  std::pair<Value, Value> warpAndLane() {
    Value local = rem(thread, kWarpgroupThreads);
    return {div(local, 32), rem(local, 32)};
  }
  /// The m64 row blocks of a consumer warpgroup's rows: one wgmma each a K
  /// step, into its own accumulators.
  int64_t rowBlocks() const { return c.getWgmmaRowsPerWarpgroup() / 64; }
  /// A thread's accumulators of one row block, and of all of them.
  int64_t blockAccumulators() const { return c.getWgmmaN() / 2; }
  int64_t accumulators() const { return rowBlocks() * blockAccumulators(); }
  /// Shared memory that one proxy (generic loads and stores, or the async
  /// proxy of TMA and wgmma) wrote or read is next accessed by the other.
  void fenceSharedProxies() {
    NVVM::FenceProxyOp::create(
        b, loc,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  }
  /// Moves this warpgroup's registers to `count` a thread; only with two
  /// consumer warpgroups, whose budget the counts are set for.
  void setMaxRegisters(int32_t count, NVVM::SetMaxRegisterAction action) {
    if (warpgroups != 2)
      return;
    NVVM::SetMaxRegisterOp::create(
        b, loc, b.getI32IntegerAttr(count),
        NVVM::SetMaxRegisterActionAttr::get(b.getContext(), action));
  }
  /// Waits for phase `parity` (i1) of mbarrier `index`, acquiring what
  /// the threads that arrived released at `scope` (cluster: the peers'
  /// stores into this block's shared memory).
  void waitBarrier(Value parity, Value index,
                   NVVM::MemScopeKind scope = NVVM::MemScopeKind::CTA);
  /// The shared-memory address of barrier `index`.
  Value barrierAddress(Value index) {
    Value bits =
        nvgpu::MBarrierGetOp::create(b, loc, b.getI32Type(), barriers, index);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3),
        ValueRange{bits});
  }
  /// Where the epilogue stages its output tile: the ring, which the
  /// producer then leaves alone until its release.
  bool stagesInRing() const { return p.readsStagedTile(); }
  Value fullBarrier(Value stage) { return stage; }
  Value emptyBarrier(Value stage) { return add(stage, c.getStages()); }
  Value epilogueBarrier() { return idx(2 * c.getStages()); }
  /// 3xTF32: stage `stage`'s remainders written (by the producer's
  /// splitters), after the epilogue's barrier.
  Value splitBarrier(Value stage) { return add(stage, 2 * c.getStages() + 1); }
  /// Ping-pong: phase i completes when the main loop of the block's tile
  /// iteration i has waited for its last slice. A consumer's main loop
  /// waits for the one before its own: the ring's barriers are waited on by
  /// phase parity, which would alias a phase `stages` slices later, so the
  /// consumers take turns in the ring's order, as CUTLASS's ordered
  /// barrier of its ping-pong kernels makes them.
  Value turnBarrier() { return idx(getWgmmaBarrierCount(c) - 1); }
  /// split_k: phase i completes in the cluster's first block when every
  /// peer thread has stored its sums of the block's tile iteration i
  /// there; in each peer, when the first block's threads have taken them.
  Value partialsStoredBarrier() { return idx(getWgmmaBarrierCount(c) - 2); }
  Value partialsTakenBarrier() { return idx(getWgmmaBarrierCount(c) - 1); }
  /// split_k: this thread's sums of the tile, a peer's, into the cluster's
  /// first block (tile iteration `iteration` of the block).
  void storePartials(Value acc, Value iteration);
  /// split_k: `acc` plus the peers' sums of tile iteration `iteration`, in
  /// the order of their ranks, in the cluster's first block; the peers'
  /// slots released.
  Value addPeerPartials(Value acc, Value iteration);
  /// split_k: the byte offset (from the ring's origin) of this thread's
  /// 16-byte chunk `chunk` of a peer's sums in slot `slot` (the slots are
  /// [peer, chunk, thread] in the first block).
  Value partialOffset(Value slot, int64_t chunk) {
    return add(add(mul(slot, c.getBlockM() * c.getBlockN() * 4),
                   layout.partials + chunk * c.getTileThreads() * 16),
               mul(consumerThread, 16));
  }

  /// The ring's stage of K slice `kTile` of the tile whose slices start at
  /// `firstSlice`; waiting for its data, and releasing it to the producer.
  Value stageOf(Value firstSlice, Value kTile) {
    return rem(add(firstSlice, kTile), c.getStages());
  }
  void waitFull(Value firstSlice, Value kTile) {
    waitSlice(firstSlice, kTile, &WgmmaGemmEmitter::fullBarrier);
  }
  /// Waits for the phase of per-stage barrier `barrierOf` that K slice
  /// `kTile`'s use of its stage completes.
  void waitSlice(Value firstSlice, Value kTile,
                 Value (WgmmaGemmEmitter::*barrierOf)(Value)) {
    Value slice = add(firstSlice, kTile);
    waitBarrier(parityOf(div(slice, c.getStages())),
                (this->*barrierOf)(rem(slice, c.getStages())));
  }
  /// Releases stage `stage` to the producer (clusters: both blocks'
  /// producers), once this warp's wgmmas that read it are done.
  void release(Value stage);
  /// The arrivals that release a stage: each tile thread's, or with
  /// clusters each tile warp's in each block of the cluster.
  int64_t releaseArrivals() const {
    return c.isClustered() ? c.getTileThreads() / 32 * c.getClusterM()
                           : c.getTileThreads();
  }
  /// All threads of the cluster meet (arrive and wait).
  void clusterBarrier() {
    NVVM::ClusterArriveOp::create(b, loc, UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
  }

  bool split() const { return c.isWgmmaSplit(); }
  /// Byte offsets of stage buffers (from the aligned origin): x's, then
  /// w's (3xTF32: then a buffer of remainders a stage).
  int64_t aOffset(int64_t stage) const {
    return stage * c.getBlockM() * kGemmRowBytes;
  }
  Value aOffset(Value stage) {
    return mul(stage, c.getBlockM() * kGemmRowBytes);
  }
  Value bOffset(Value stage) {
    return add(mul(stage, c.getBlockN() * kGemmRowBytes),
               aOffset(c.getStages()));
  }
  int64_t stageBytes() const {
    return (c.getBlockM() + c.getBlockN()) * kGemmRowBytes;
  }
  /// The operand whose rows the consumer warpgroups split and read into
  /// registers (3xTF32): x's tile, or w's with swapped operands.
  Value registerOperandOffset(Value stage) {
    return c.swapsOperands() ? bOffset(stage) : aOffset(stage);
  }
  int64_t registerOperandRows() const {
    return c.swapsOperands() ? c.getBlockN() : c.getBlockM();
  }
  /// The operand every wgmma reads from shared memory, its rows the wgmmas'
  /// N: w's tile, or x's with swapped operands.
  Value sharedOperandOffset(Value stage) {
    return c.swapsOperands() ? aOffset(stage) : bOffset(stage);
  }
  /// The remainder buffer of stage `stage`'s shared-memory operand
  /// (3xTF32).
  Value remainderOffset(Value stage) {
    return add(mul(stage, c.getWgmmaN() * kGemmRowBytes),
               c.getStages() * stageBytes());
  }

  void setUp(gpu::GPUFuncOp kernel);
  /// `body(tile, iteration)` for each tile of the block, or of its
  /// iterations `turn`, `turn` + `turns`, ...: tile number blockIdx +
  /// iteration * gridDim.
  void forEachTile(function_ref<void(Value tile, Value iteration)> body,
                   Value turn = Value(), int64_t turns = 1);
  /// `body(kTile)` for each K slice of a tile.
  void forEachSlice(function_ref<void(Value kTile)> body);
  void emitProducer();
  /// 3xTF32: the producer warpgroup's splitters write each stage's w
  /// remainders once it is loaded.
  void emitSplitters();
  void emitConsumer();
  /// Ping-pong: waits for the main loop of the tile before this one (whose
  /// slices start at `firstSlice`) to end its turn; nothing for the block's
  /// first tile.
  void waitForTurn(Value firstSlice);
  /// Ping-pong: ends the turn of this consumer's main loop.
  void endTurn() {
    if (c.isPingpong())
      nvgpu::MBarrierArriveOp::create(b, loc, barriers, turnBarrier());
  }
  /// The consumers' main loop over the K slices of one tile, the ring's
  /// slices `firstSlice` and on: the accumulators, every stage released.
  /// Where takesRowOperandFromRing, the slices of the tile's columns (from
  /// `columnBase`) also give `inputRows` each run's x elements.
  Value emitMainLoop(Value firstSlice, Value columnBase,
                     std::vector<SmallVector<Value>> &inputRows);
  /// The ring slices of a residual (residualThroughRing) after each tile's
  /// K slices, and the ring slices a tile takes in all.
  int64_t residualSlices() const {
    return residualThroughRing(p) ? c.getBlockN() / tileK : 0;
  }
  int64_t slicesPerTile() const { return kSlices() + residualSlices(); }
  /// The K slices of a tile (split_k: of the block's share of them).
  int64_t kSlices() const {
    return countKSlices(p.elementType, p.k) / c.getSplitK();
  }
  /// The ring slice where the tile of block iteration `iteration` starts.
  Value firstSliceOf(Value iteration) {
    return mul(iteration, slicesPerTile());
  }
  /// The ring's stage (i32) after `stage`, and its phase parity after
  /// `parity`: the parity flips where the stage wraps to 0.
  std::pair<Value, Value> nextStage(Value stage, Value parity);
  /// The producer: waits until the consumers have released the stage of
  /// ring slice `slice`'s previous use; that stage.
  Value acquireStage(Value slice);
  /// The producer's loads of the tile's residual slices, the ring's slices
  /// `firstSlice` + K slices and on.
  void loadResidualSlices(Value firstSlice, const GemmTilePosition &position);
  /// A tile's residual slices as the consumers take them from the ring
  /// while the epilogue reads their runs: the next one's stage (i32) and
  /// phase parity, how many are taken, and each run's values read so far.
  /// Taken one at a time, each stage released once read, the slices hold
  /// one slice's values a thread at once (tf32: 16 registers, where the
  /// whole residual's 128 would not fit beside the accumulators) and
  /// release their stages to the next tile's loads as the epilogue goes.
  struct RingResidual {
    Value stage, parity;
    int64_t taken = 0;
    std::vector<SmallVector<Value>> rows;
  };
  /// The residual slices of the tile whose ring slices start at
  /// `firstSlice`, none taken.
  RingResidual ringResidualOf(Value firstSlice);
  /// Run `run`'s residual values, the slices up to the run's taken first.
  SmallVector<Value> ringResidualRun(RingResidual &residual, size_t run);
  /// Takes the next residual slice: waits for its stage, reads this
  /// thread's runs of it (loadInputRows) where `read`, and releases it.
  void takeRingResidualSlice(RingResidual &residual, bool read);
  /// This thread's x elements of K slice `slice` of the tile's columns, in
  /// stage `stage`, into `inputRows` (each run's, as accumulatorRuns
  /// numbers them): ldmatrix gives each lane its 16-bit pairs of a quad of
  /// runs, an 8-byte load each f32 pair; the reads fenced for the stage's
  /// release.
  void loadInputRows(Value stage, int64_t slice,
                     std::vector<SmallVector<Value>> &inputRows);
  /// emitMainLoop for 3xTF32.
  Value emitSplitMainLoop(Value firstSlice);
  /// 3xTF32: waits for K slice `kTile` and its remainders.
  void waitSplit(Value firstSlice, Value kTile) {
    waitFull(firstSlice, kTile);
    waitSlice(firstSlice, kTile, &WgmmaGemmEmitter::splitBarrier);
  }
  /// Register A: this thread's fragments of the consumer's 64 rows of x in
  /// stage `stage`, per K step its four high parts then its four low parts
  /// (i32 bits, which tf32 wgmma reads).
  SmallVector<Value> loadRegisterParts(Value stage);
  /// wgmma with A from the registers `aParts` (four).
  Value wgmmaRegisterA(Value acc, ValueRange aParts, Value bDescriptor,
                       bool fromZero);
  /// 3xTF32: the remainders of stage `stage`'s w tile into its remainder
  /// buffer, fenced for the tensor cores, by thread `splitter` of
  /// kSplitters.
  void splitStage(Value stage, Value splitter);
  /// The low word (i32) of the wgmma descriptor of the matrix at byte
  /// `offset` (index) from the ring's origin.
  Value descriptorLow(Value offset);
  /// The wgmma descriptor (i64) of the K-major, 128-byte-swizzled matrix
  /// `bytes` past the one whose low word is `low`: the stage's words are
  /// computed once and each K step adds to the low word alone (CUTLASS's
  /// descriptor iterator), since 64-bit address arithmetic a wgmma took
  /// 6 instructions a descriptor.
  Value descriptor(Value low, int64_t bytes);
  /// The wgmmas of one stage into `acc` (3xTF32: the register operand's
  /// parts `registerParts` of loadRegisterParts, replaced by the values the
  /// wgmmas read, and the stage's remainders); the first starts from zero
  /// when `fromZero`.
  Value multiplyStage(Value acc, Value stage, bool fromZero,
                      MutableArrayRef<Value> registerParts = {});
  /// The wgmma of row block `rowBlock` into its accumulators of `acc`.
  Value wgmma(Value acc, int64_t rowBlock, Value a, Value bDescriptor,
              bool fromZero);
  /// `acc` passed through inline PTX `ptx` (with side effects), which LLVM
  /// keeps in order with the wgmma ops: the accumulators' reads and writes
  /// cannot move across it. The NVVM wait and fence ops have no operands,
  /// so LLVM moves register accesses past them, and ptxas then serializes
  /// the wgmmas (C7514, C7520) or injects a warpgroup.arrive (C7519).
  /// CUTLASS's warpgroup_fence_operand and Triton's warp_group_dot_wait
  /// carry their registers alike.
  /// `operands` (f32 or i32; wgmma's A registers), replaced by their
  /// passed values, go through with `acc`.
  Value passThrough(StringRef ptx, Value acc,
                    MutableArrayRef<Value> operands = {});
  /// Side-effecting inline PTX.
  Value inlinePtx(Type resultType, ValueRange operands, StringRef ptx,
                  StringRef constraints);
  /// Waits until at most `pending` of this warpgroup's wgmma groups are in
  /// flight: `acc`, whose reads must come after.
  /// `operands` (A registers that the groups read) go through too, so that
  /// they keep their registers until then.
  Value waitForGroups(int64_t pending, Value acc,
                      MutableArrayRef<Value> operands = {}) {
    return passThrough(
        ("wgmma.wait_group.sync.aligned " + Twine(pending) + ";").str(), acc,
        operands);
  }
  /// running + acc, element by element (round to nearest).
  Value addAccumulators(Value running, Value acc);
  void emitEpilogue(GemmEpilogueEmitter &epilogue, Value acc);

  const GemmKernelProblem &p;
  GemmConfigAttr c;
  MmaKind mma;
  GemmSharedLayout layout;
  Type elementType;
  int64_t tileK, warpgroups;
  /// The consumer warpgroups that take the block's tiles in turn: 2 with
  /// the ping-pong schedule, else 1 (they share each tile).
  int64_t turns;

  /// The residual's tensor map where residualThroughRing (else null).
  /// x's tensor maps: of whole tiles' rows, and of the rows of the
  /// batch's last block row (its boxes encoded by the host; the type
  /// shows the tile's).
  Value xMap, xLastRowsMap, wMap, residualMap, barriers, shared;
  /// The low word of the descriptor of the ring's origin (descriptorLow).
  Value originDescriptorLow;
  /// The thread's index in the block, and among the consumers; its
  /// warpgroup, and its index among the consumer warpgroups.
  Value thread, consumerThread, warpgroup, consumer, rows, tilesK, tiles;
  /// The block's rank in its multicast pair (index; null unclustered).
  Value clusterRank;
  /// split_k: the block's share of the K slices, its rank in the cluster
  /// (index; null without split_k).
  Value kShare;
  /// The shared-memory address (i32) of the ring's origin.
  Value origin;
  std::optional<GemmEpilogueArguments> epilogueArgs;
  /// All of a thread's accumulators, and those of one row block's wgmma.
  LLVM::LLVMStructType accumulatorType, blockAccumulatorType;
};

void WgmmaGemmEmitter::setUp(gpu::GPUFuncOp kernel) {
  MLIRContext *context = b.getContext();
  auto args = kernel.getArguments();
  auto mapType = [&](int64_t boxRows) {
    return nvgpu::TensorMapDescriptorType::get(
        context,
        MemRefType::get({boxRows, tileK}, elementType,
                        MemRefLayoutAttrInterface(), workgroup()),
        nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
        nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  };
  auto cast = [&](Value ptr, Type type) {
    return UnrealizedConversionCastOp::create(b, loc, type, ptr).getResult(0);
  };
  xMap = cast(args[0], mapType(c.getBlockM()));
  xLastRowsMap = cast(args[2], mapType(c.getBlockM()));
  // Each block of a cluster loads its share of w's tile.
  wMap = cast(args[1], mapType(c.getBlockN() / c.getClusterM()));
  if (residualThroughRing(p))
    residualMap = cast(args[3], mapType(c.getBlockM()));
  epilogueArgs =
      GemmEpilogueArguments::take(p, args.drop_front(residualMap ? 4 : 3));

  thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  consumerThread = sub(thread, kWarpgroupThreads);
  // Broadcast from lane 0, so that ptxas knows the warpgroup (and what a
  // ping-pong consumer derives from it: its tiles, stages and descriptors)
  // to be warp-uniform and keeps it in uniform registers, as CUTLASS's
  // canonical_warp_group_idx does. Derived from the thread index, the
  // ping-pong consumer's per-stage addresses took vector registers and
  // R2UR moves on the path from one stage's wgmmas to the next's.
  Value ownWarpgroup = arith::IndexCastUIOp::create(
      b, loc, b.getI32Type(), div(thread, kWarpgroupThreads));
  warpgroup = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      gpu::ShuffleOp::create(b, loc, ownWarpgroup, i32(0),
                             i32(mlir::fusion::kWarpSize),
                             gpu::ShuffleMode::IDX)
          .getShuffleResult());
  consumer = sub(warpgroup, 1);
  rows = memref::DimOp::create(b, loc, epilogueArgs->rowsOperand(), 0);
  tilesK = idx(kSlices());
  // The blocks' tiles, or the clusters' (see rasterizeGemmTile).
  tiles = mul(arith::CeilDivUIOp::create(b, loc, rows,
                                         idx(c.getBlockM() * c.getClusterM())),
              countColumnTiles(c, p.n));
  auto rankInCluster = [&] {
    return arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        NVVM::ClusterId::create(b, loc, b.getI32Type()));
  };
  if (c.isClustered())
    clusterRank = rankInCluster();
  if (c.splitsK())
    kShare = rankInCluster();

  // The stage buffers start at a 1024-byte boundary, where TMA's and
  // wgmma's 128-byte swizzles agree (the layout has room for the shift).
  auto raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup()));
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
  Value shift =
      rem(sub(idx(kSwizzleAtomBytes), rem(address, kSwizzleAtomBytes)),
          kSwizzleAtomBytes);
  shared = memref::ViewOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), workgroup()),
      raw, shift, ValueRange{idx(layout.total - kSwizzleAtomBytes)});
  // Start address (bits 0-13, in 16-byte units) and leading byte offset 16
  // (bit 16, unused by swizzled K-major layouts). Shared memory ends below
  // 256 KiB, so a matrix further on adds its offset / 16 without a carry
  // out of the start address.
  origin =
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), add(address, shift));
  originDescriptorLow = arith::OrIOp::create(
      b, loc,
      arith::ShRUIOp::create(
          b, loc, arith::AndIOp::create(b, loc, origin, i32(0x3ffff)), i32(4)),
      i32(1 << 16));

  barriers = nvgpu::MBarrierCreateOp::create(
      b, loc,
      nvgpu::MBarrierGroupType::get(context, workgroup(),
                                    getWgmmaBarrierCount(c)));

  accumulatorType = LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(accumulators(), b.getF32Type()));
  blockAccumulatorType = LLVM::LLVMStructType::getLiteral(
      context, SmallVector<Type>(blockAccumulators(), b.getF32Type()));
}

void WgmmaGemmEmitter::forEachTile(
    function_ref<void(Value tile, Value iteration)> body, Value turn,
    int64_t turns) {
  // Clusters stride over their tiles together.
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
      b, loc, first, tiles, step, ValueRange{turn},
      [&](OpBuilder &nb, Location, Value tile, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        body(tile, state[0]);
        scf::YieldOp::create(b, loc, ValueRange{add(state[0], turns)});
      });
}

void WgmmaGemmEmitter::forEachSlice(function_ref<void(Value kTile)> body) {
  scf::ForOp::create(b, loc, idx(0), tilesK, idx(1), ValueRange{},
                     [&](OpBuilder &nb, Location, Value kTile, ValueRange) {
                       OpBuilder::InsertionGuard guard(b);
                       b.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                       body(kTile);
                       scf::YieldOp::create(b, loc);
                     });
}

void WgmmaGemmEmitter::emitSplitters() {
  guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, thread,
                                idx(kWarpgroupThreads - kSplitters)),
          [&] {
            Value splitter = sub(thread, kWarpgroupThreads - kSplitters);
            // The ring's slices in the consumers' order; a stage's next load
            // waits for the consumers' release, which follows their reads of
            // its remainders.
            forEachTile([&](Value, Value iteration) {
              Value firstSlice = firstSliceOf(iteration);
              forEachSlice([&](Value kTile) {
                waitFull(firstSlice, kTile);
                Value stage = stageOf(firstSlice, kTile);
                splitStage(stage, splitter);
                nvgpu::MBarrierArriveOp::create(b, loc, barriers,
                                                splitBarrier(stage));
              });
              // A residual slice's stage has nothing to split, but its split
              // barrier completes a phase too, so that a stage's phases
              // count its uses (takeRingResidualSlice).
              for (int64_t column = 0; column < residualSlices(); ++column) {
                Value slice = idx(kSlices() + column);
                waitFull(firstSlice, slice);
                nvgpu::MBarrierArriveOp::create(
                    b, loc, barriers, splitBarrier(stageOf(firstSlice, slice)));
              }
            });
          });
}

void WgmmaGemmEmitter::emitProducer() {
  setMaxRegisters(kProducerRegisters, NVVM::SetMaxRegisterAction::decrease);
  if (split())
    emitSplitters();
  guarded(equal(thread, 0), [&] {
    forEachTile([&](Value tile, Value iteration) {
      GemmTilePosition position =
          rasterizeGemmTile(b, loc, tile, rows, p.n, c, clusterRank);
      // A tile of the batch's last block row, if the batch ends inside it,
      // loads that block row's rows alone (x's last-rows map): TMA's fill
      // of rows past the matrix cost about as much as loading the tile in
      // 16-row boxes, and a 128-row tile at 65 rows took 1.6x its time at
      // 128. A cluster's tile past the last block row keeps the whole map.
      Value lastRows = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                position.rowBase, rows),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                add(position.rowBase, c.getBlockM()), rows));
      Value xBytes = arith::SelectOp::create(
          b, loc, lastRows, mul(sub(rows, position.rowBase), kGemmRowBytes),
          idx(c.getBlockM() * kGemmRowBytes));
      Value bytes = add(xBytes, c.getBlockN() * kGemmRowBytes);
      // The previous tile's epilogue stages its output in the ring.
      if (stagesInRing())
        guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      iteration, idx(0)),
                [&] {
                  waitBarrier(parityOf(sub(iteration, 1)), epilogueBarrier());
                });
      Value firstSlice = firstSliceOf(iteration);
      forEachSlice(
          [&](Value kTile) {
            Value stage = acquireStage(add(firstSlice, kTile));
            nvgpu::MBarrierArriveExpectTxOp::create(
                b, loc, barriers, bytes, fullBarrier(stage), Value());
            Value k = mul(kTile, tileK);
            if (kShare)
              k = add(k, mul(kShare, kSlices() * tileK));
            auto loadX = [&](Value map) {
              nvgpu::TmaAsyncLoadOp::create(
                  b, loc,
                  sharedView(aOffset(stage), {c.getBlockM(), tileK},
                             elementType),
                  barriers, map, ValueRange{k, position.rowBase},
                  fullBarrier(stage), Value(), Value());
            };
            auto which = scf::IfOp::create(b, loc, lastRows,
                                           /*withElseRegion=*/true);
            {
              OpBuilder::InsertionGuard branch(b);
              b.setInsertionPointToStart(&which.getThenRegion().front());
              loadX(xLastRowsMap);
              b.setInsertionPointToStart(&which.getElseRegion().front());
              loadX(xMap);
            }
            // Clusters: this block's share of w's rows, into both blocks.
            int64_t shareRows = c.getBlockN() / c.getClusterM();
            Value wRow = position.columnBase, wOffset = bOffset(stage);
            Value multicast;
            if (c.isClustered()) {
              Value share = mul(clusterRank, shareRows);
              wRow = add(wRow, share);
              wOffset = add(wOffset, mul(share, kGemmRowBytes));
              multicast = arith::ConstantOp::create(
                  b, loc, b.getI16IntegerAttr((1 << c.getClusterM()) - 1));
            }
            nvgpu::TmaAsyncLoadOp::create(
                b, loc, sharedView(wOffset, {shareRows, tileK}, elementType),
                barriers, wMap, ValueRange{k, wRow}, fullBarrier(stage),
                multicast, Value());
          });
      if (residualMap)
        loadResidualSlices(firstSlice, position);
    });
  });
}

Value WgmmaGemmEmitter::acquireStage(Value slice) {
  Value stage = rem(slice, c.getStages());
  // Use u of a stage waits for the consumers' release of use u - 1, phase
  // u - 1 of its empty barrier; a fresh barrier counts its phase "-1" as
  // complete.
  Value released = arith::XOrIOp::create(
      b, loc, parityOf(div(slice, c.getStages())),
      arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  waitBarrier(released, emptyBarrier(stage));
  return stage;
}

void WgmmaGemmEmitter::loadResidualSlices(Value firstSlice,
                                          const GemmTilePosition &position) {
  int64_t bytes = c.getBlockM() * kGemmRowBytes;
  for (int64_t column = 0; column < residualSlices(); ++column) {
    Value stage = acquireStage(add(firstSlice, kSlices() + column));
    nvgpu::MBarrierArriveExpectTxOp::create(b, loc, barriers, idx(bytes),
                                            fullBarrier(stage), Value());
    // The residual's rows of the tile, `tileK` of its columns, where x's
    // rows of a K slice go.
    nvgpu::TmaAsyncLoadOp::create(
        b, loc, sharedView(aOffset(stage), {c.getBlockM(), tileK}, elementType),
        barriers, residualMap,
        ValueRange{add(position.columnBase, column * tileK), position.rowBase},
        fullBarrier(stage), Value(), Value());
  }
}

WgmmaGemmEmitter::RingResidual
WgmmaGemmEmitter::ringResidualOf(Value firstSlice) {
  Value slice = add(firstSlice, kSlices());
  RingResidual residual{toI32(rem(slice, c.getStages())),
                        parityOf(div(slice, c.getStages()))};
  residual.rows.assign(accumulators() / 2, {});
  return residual;
}

SmallVector<Value> WgmmaGemmEmitter::ringResidualRun(RingResidual &residual,
                                                     size_t run) {
  // Runs number row block, n8 block, row half (emitEpilogue).
  int64_t block = run % (c.getBlockN() / 4) / 2;
  while (residual.taken <= block / (tileK / 8))
    takeRingResidualSlice(residual, /*read=*/true);
  return residual.rows[run];
}

void WgmmaGemmEmitter::takeRingResidualSlice(RingResidual &residual,
                                             bool read) {
  Value stage = toIndex(residual.stage);
  waitBarrier(residual.parity, fullBarrier(stage));
  // 3xTF32: the splitters complete each phase of a stage's split barrier,
  // a residual slice's too, and the consumers wait for every phase, so
  // that none runs a phase ahead of their waits.
  if (split())
    waitBarrier(residual.parity, splitBarrier(stage));
  if (read)
    loadInputRows(stage, residual.taken, residual.rows);
  release(stage);
  std::tie(residual.stage, residual.parity) =
      nextStage(residual.stage, residual.parity);
  ++residual.taken;
}

std::pair<Value, Value> WgmmaGemmEmitter::nextStage(Value stage, Value parity) {
  Value next = arith::AddIOp::create(b, loc, stage, i32(1));
  Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next,
                                      i32(c.getStages()));
  return {select(wraps, i32(0), next),
          arith::XOrIOp::create(b, loc, parity, wraps)};
}

void WgmmaGemmEmitter::waitBarrier(Value parity, Value index,
                                   NVVM::MemScopeKind scope) {
  // A loop of try_waits whose branch ptxas may treat as divergent, as
  // CUTLASS's barrier waits are: nvgpu's wait is inline PTX whose
  // `@P bra.uni` asserts that every lane of the warp sees the same result of
  // its own try_wait, which PTX does not promise (measured as fast).
  Value address = barrierAddress(index);
  Value phase = arith::ExtUIOp::create(b, loc, b.getI32Type(), parity);
  Value hint = i32(kWaitHintNs);
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

void WgmmaGemmEmitter::release(Value stage) {
  if (!c.isClustered()) {
    nvgpu::MBarrierArriveOp::create(b, loc, barriers, emptyBarrier(stage));
    return;
  }
  // The warp's wgmmas are done (their wait is warp-synchronous): its first
  // lane arrives on the barrier of every block of the cluster, with the
  // default release at CTA scope, as CUTLASS's cluster barriers do: the
  // stage's reads were the tensor cores', and a release at cluster scope
  // fences the thread's earlier global stores too.
  guarded(equal(rem(thread, 32), 0), [&] {
    MLIRContext *context = b.getContext();
    Value address = barrierAddress(emptyBarrier(stage));
    for (int64_t rank = 0; rank < c.getClusterM(); ++rank) {
      Value remote = NVVM::MapaOp::create(
          b, loc, LLVM::LLVMPointerType::get(context, /*shared_cluster=*/7),
          address, i32(rank));
      NVVM::MBarrierArriveOp::create(b, loc, Type(), remote, Value());
    }
  });
}

Value WgmmaGemmEmitter::descriptorLow(Value offset) {
  Value units = arith::ShRUIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI32Type(), offset),
      i32(4));
  return arith::AddIOp::create(b, loc, originDescriptorLow, units);
}

Value WgmmaGemmEmitter::descriptor(Value low, int64_t bytes) {
  // Stride byte offset 1024 between groups of 8 rows (bits 32-45), 128-byte
  // swizzle (bits 62-63 = 1).
  constexpr int64_t high = (int64_t(64) << 32) | (int64_t(1) << 62);
  Value start =
      bytes ? arith::AddIOp::create(b, loc, low, i32(bytes / 16)) : low;
  return arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), start), i64(high));
}

Value WgmmaGemmEmitter::wgmma(Value acc, int64_t rowBlock, Value aDescriptor,
                              Value bDescriptor, bool fromZero) {
  MLIRContext *context = b.getContext();
  NVVM::WGMMATypes type = NVVM::WGMMATypes::tf32;
  int64_t k = 8;
  if (mma == MmaKind::bf16 || mma == MmaKind::f16) {
    type =
        mma == MmaKind::bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    k = 16;
  }
  auto multiply = [&](Value blockAcc) -> Value {
    return NVVM::WgmmaMmaAsyncOp::create(
        b, loc, blockAccumulatorType, blockAcc, aDescriptor, bDescriptor,
        NVVM::MMAShapeAttr::get(context, 64, c.getWgmmaN(), k), type, type,
        NVVM::WGMMATypes::f32,
        fromZero ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, /*satfinite=*/nullptr);
  };
  // A single row block's accumulators are all of the thread's.
  if (rowBlocks() == 1)
    return multiply(acc);
  int64_t first = rowBlock * blockAccumulators();
  Value blockAcc = LLVM::PoisonOp::create(b, loc, blockAccumulatorType);
  for (int64_t i = 0; i < blockAccumulators(); ++i)
    blockAcc = LLVM::InsertValueOp::create(
        b, loc, blockAcc, LLVM::ExtractValueOp::create(b, loc, acc, first + i),
        i);
  Value result = multiply(blockAcc);
  for (int64_t i = 0; i < blockAccumulators(); ++i)
    acc = LLVM::InsertValueOp::create(
        b, loc, acc, LLVM::ExtractValueOp::create(b, loc, result, i),
        first + i);
  return acc;
}

Value WgmmaGemmEmitter::multiplyStage(Value acc, Value stage, bool fromZero,
                                      MutableArrayRef<Value> registerParts) {
  // The consumer's rows of x (3xTF32: `registerParts`); w's rows all.
  // Swapped operands: the consumer's rows of w, x's rows all.
  bool swapped = c.swapsOperands();
  Value a = descriptorLow(add(swapped ? bOffset(stage) : aOffset(stage),
                              mul(consumerFirstRow(), kGemmRowBytes)));
  assert((!split() || rowBlocks() == 1) && "3xTF32 parts of 64 rows");
  Value bTile = descriptorLow(sharedOperandOffset(stage));
  Value bLow = split() ? descriptorLow(remainderOffset(stage)) : Value();
  // The accumulators (zeros of a tile's first slice) and the register
  // parts are written before the fence that orders those writes before the
  // wgmmas.
  acc = passThrough("", acc, registerParts);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t step = 0; step < kGemmRowBytes / kMmaKBytes; ++step) {
    auto at = [&](Value low, int64_t bytes = 0) {
      return descriptor(low, step * kMmaKBytes + bytes);
    };
    bool first = fromZero && step == 0;
    if (split()) {
      ArrayRef<Value> parts(registerParts);
      ArrayRef<Value> high = parts.slice(8 * step, 4);
      ArrayRef<Value> low = parts.slice(8 * step + 4, 4);
      // Small terms first: they are lost if added to the large sum.
      acc = wgmmaRegisterA(acc, low, at(bTile), first);
      acc = wgmmaRegisterA(acc, high, at(bLow), false);
      acc = wgmmaRegisterA(acc, high, at(bTile), false);
      continue;
    }
    for (int64_t rowBlock = 0; rowBlock < rowBlocks(); ++rowBlock)
      acc = wgmma(acc, rowBlock, at(a, rowBlock * 64 * kGemmRowBytes),
                  at(bTile), first);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

void WgmmaGemmEmitter::splitStage(Value stage, Value splitter) {
  // Each splitter takes 16-byte chunks of the shared-memory operand's tile;
  // the layout does not matter, the remainder goes to the same offset.
  Type f32 = b.getF32Type();
  auto vectorType = VectorType::get({4}, f32);
  auto intType = VectorType::get({4}, b.getI32Type());
  Value mask = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(intType, b.getI32IntegerAttr(kTf32HighBits)));
  int64_t chunks = c.getWgmmaN() * kGemmRowBytes / kGemmChunkBytes;
  assert(chunks % kSplitters == 0 && "whole rounds of the splitters");
  Value tile = sharedView(sharedOperandOffset(stage), {chunks * 4}, f32);
  Value low = sharedView(remainderOffset(stage), {chunks * 4}, f32);
  for (int64_t first = 0; first < chunks; first += kSplitters) {
    Value element = mul(add(splitter, first), 4);
    Value x = vector::LoadOp::create(b, loc, vectorType, tile, element);
    // The high part is the stage as it is (kTf32HighBits); the exact
    // remainder x - high goes to the remainder buffer.
    Value truncated = arith::AndIOp::create(
        b, loc, arith::BitcastOp::create(b, loc, intType, x), mask);
    Value high = arith::BitcastOp::create(b, loc, vectorType, truncated);
    vector::StoreOp::create(b, loc, splitRemainder(b, loc, x, high), low,
                            element);
  }
  // wgmma reads shared memory through the async proxy.
  fenceSharedProxies();
}

Value WgmmaGemmEmitter::passThrough(StringRef ptx, Value acc,
                                    MutableArrayRef<Value> operands) {
  int64_t count = acc ? accumulators() : 0;
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
  Value passed = LLVM::PoisonOp::create(b, loc, accumulatorType);
  for (int64_t i = 0; i < count; ++i)
    passed = LLVM::InsertValueOp::create(
        b, loc, passed, LLVM::ExtractValueOp::create(b, loc, result, i), i);
  return passed;
}

Value WgmmaGemmEmitter::inlinePtx(Type resultType, ValueRange operands,
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

Value WgmmaGemmEmitter::wgmmaRegisterA(Value acc, ValueRange aParts,
                                       Value bDescriptor, bool fromZero) {
  // nvvm.wgmma.mma_async takes A as a descriptor only; this is its PTX
  // with A's four registers: $0.. the accumulators (tied to the inputs
  // that follow them), then A, then w's descriptor.
  int64_t count = blockAccumulators();
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
  return inlinePtx(accumulatorType, operands, ptx, constraints);
}

SmallVector<Value> WgmmaGemmEmitter::loadRegisterParts(Value stage) {
  // ldmatrix.x4 of 32-bit elements: lanes 0-15 address rows 0-15 of the
  // warp's 16 of a K step's first 16-byte chunk, lanes 16-31 the second
  // chunk; register j holds row l / 4 (+ 8 for odd j), k l % 4 (+ 4 for
  // j >= 2): wgmma's A fragment of tf32 (and mma.sync's).
  auto [warp, lane] = warpAndLane();
  Value row = add(add(consumerFirstRow(), mul(warp, 16)), rem(lane, 16));
  Value tile = sharedView(registerOperandOffset(stage),
                          {registerOperandRows(), tileK}, elementType);
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
      // The high part (kTf32HighBits, clamped), the exact remainder.
      auto [highPart, remainder] = splitTf32(b, loc, x);
      high.push_back(arith::BitcastOp::create(b, loc, bitsType, highPart));
      low.push_back(arith::BitcastOp::create(b, loc, bitsType, remainder));
    }
    llvm::append_range(parts, high);
    llvm::append_range(parts, low);
  }
  return parts;
}

Value WgmmaGemmEmitter::addAccumulators(Value running, Value acc) {
  for (int64_t i = 0, e = accumulators(); i < e; ++i) {
    Value sum = arith::AddFOp::create(
        b, loc, LLVM::ExtractValueOp::create(b, loc, running, i),
        LLVM::ExtractValueOp::create(b, loc, acc, i));
    running = LLVM::InsertValueOp::create(b, loc, running, sum, i);
  }
  return running;
}

void WgmmaGemmEmitter::waitForTurn(Value firstSlice) {
  if (!c.isPingpong())
    return;
  Value iteration = div(firstSlice, slicesPerTile());
  guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, iteration,
                                idx(0)),
          [&] { waitBarrier(parityOf(sub(iteration, 1)), turnBarrier()); });
}

void WgmmaGemmEmitter::loadInputRows(
    Value stage, int64_t slice, std::vector<SmallVector<Value>> &inputRows) {
  auto [warp, lane] = warpAndLane();
  Value tile = sharedView(aOffset(stage), {c.getBlockM(), tileK}, elementType);
  int64_t runsPerRowBlock = c.getBlockN() / 4;
  if (elementBytes(elementType) == 4) {
    // Lane l's pair of n8 block j, row r (+ 8h), columns 8j + 2 (l % 4),
    // lies in 16-byte chunk 2j + (l % 4) / 2, which the swizzle moves by
    // r % 8 = l / 4: the 8 rows' chunks fall in distinct bank groups but
    // for pairs, two wavefronts for the warp's 256 bytes.
    Value row = add(add(consumerFirstRow(), mul(warp, 16)), div(lane, 4));
    Value chunkInBlock = div(rem(lane, 4), 2);
    Value pairInChunk = mul(rem(lane, 2), 2);
    auto pairType = VectorType::get({2}, elementType);
    for (int64_t rowBlock = 0; rowBlock < rowBlocks(); ++rowBlock)
      for (int64_t j = 0; j < tileK / 8; ++j) {
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
                        2 * (slice * (tileK / 8) + j) + h];
          for (int64_t e = 0; e < 2; ++e)
            values.push_back(vector::ExtractOp::create(b, loc, pair, e));
        }
      }
  } else {
    // Lane l addresses row l % 8 of matrix l / 8 = 2h + j of each quad (rows
    // r + 8h, columns c + 8j); the stage's 16-byte chunks are swizzled by
    // row % 8 = l % 8.
    Value matrix = div(lane, 8);
    Value rowInQuads = add(add(consumerFirstRow(), mul(warp, 16)),
                           add(mul(div(matrix, 2), 8), rem(lane, 8)));
    int64_t quadsPerSlice = tileK / 16;
    for (int64_t rowBlock = 0; rowBlock < rowBlocks(); ++rowBlock)
      for (int64_t quad = 0; quad < quadsPerSlice; ++quad) {
        Value chunk = add(rem(matrix, 2), 2 * quad);
        Value column = mul(arith::XOrIOp::create(b, loc, chunk, rem(lane, 8)),
                           kGemmChunkBytes / elementBytes(elementType));
        Value fragment = nvgpu::LdMatrixOp::create(
            b, loc, VectorType::get({4, 2}, elementType), tile,
            ValueRange{add(rowInQuads, 64 * rowBlock), column},
            /*transpose=*/false, /*numTiles=*/4);
        // Matrix 2h + j: the run of row half h and n8 block j of the quad.
        int64_t block = slice * (tileK / 8) + 2 * quad;
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
  fenceSharedProxies();
}

Value WgmmaGemmEmitter::emitMainLoop(
    Value firstSlice, Value columnBase,
    std::vector<SmallVector<Value>> &inputRows) {
  if (split())
    return emitSplitMainLoop(firstSlice);
  Value zero = LLVM::ZeroOp::create(b, loc, accumulatorType);
  waitForTurn(firstSlice);
  // The ring's stage and its phase parity go around with the loop (as
  // CUTLASS's PipelineState), not from the slice number: its division by
  // a stage count that is not a power of 2 took 64-bit multiplies on the
  // path between two stages' wgmmas. The slice and the stage are i32, as
  // the descriptors: in 64 bits each comparison and increment took two
  // instructions.
  // A ping-pong consumer multiplies alone: two stages in flight keep more
  // work queued for the tensor cores between its stages (1-4% faster over
  // the workloads on the H100; tf32 epilogues up to 10%, bf16 ones within
  // the noise); so does the one consumer warpgroup of a small batch's
  // tiles (within 2% of one stage, the loads bound them; its swapped tiles
  // were measured with two); two cooperative consumers fill each other's
  // gaps.
  int64_t inFlight = c.isPingpong() || warpgroups == 1 ? 2 : 1;
  Value firstParity = parityOf(div(firstSlice, c.getStages()));
  // One K slice: (accumulators, stage, parity) to the next's;
  // `whileResident(stage)` once the slice's wgmmas are issued.
  auto step = [&](Value kTile, ValueRange state,
                  function_ref<void(Value stage)> whileResident) {
    Value stage = state[1], parity = state[2];
    Value stageIndex = toIndex(stage);
    waitBarrier(parity, fullBarrier(stageIndex));
    // `inFlight` stages of wgmmas stay in flight: the stage that many
    // slices back is released once its wgmmas are done.
    Value acc = multiplyStage(state[0], stageIndex, /*fromZero=*/false);
    if (whileResident)
      whileResident(stageIndex);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, b.getI64IntegerAttr(inFlight));
    guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, kTile,
                                  i32(inFlight)),
            [&] {
              Value back = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::uge, stage, i32(inFlight));
              Value earlier = arith::SelectOp::create(
                  b, loc, back,
                  arith::SubIOp::create(b, loc, stage, i32(inFlight)),
                  arith::AddIOp::create(b, loc, stage,
                                        i32(c.getStages() - inFlight)));
              release(toIndex(earlier));
            });
    auto [nextStageIndex, nextParity] = nextStage(stage, parity);
    return SmallVector<Value>{acc, nextStageIndex, nextParity};
  };
  auto loop = [&](Value from, Value to, ValueRange initial) {
    return SmallVector<Value>(
        scf::ForOp::create(
            b, loc, toI32(from), toI32(to), i32(1), initial,
            [&](OpBuilder &nb, Location, Value kTile, ValueRange state) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(nb.getInsertionBlock(),
                                  nb.getInsertionPoint());
              scf::YieldOp::create(b, loc, step(kTile, state, nullptr));
            })
            .getResults());
  };
  SmallVector<Value> state{zero, toI32(stageOf(firstSlice, idx(0))),
                           firstParity};
  if (takesRowOperandFromRing(p)) {
    // The slices of the tile's columns, unrolled, each giving its runs'
    // x elements, between the slices before and after them.
    Value first = div(columnBase, tileK);
    int64_t columnSlices = c.getBlockN() / tileK;
    inputRows.assign(accumulators() / 2, {});
    state = loop(idx(0), first, state);
    for (int64_t slice = 0; slice < columnSlices; ++slice)
      state = step(toI32(add(first, slice)), state, [&](Value stage) {
        loadInputRows(stage, slice, inputRows);
      });
    state = loop(add(first, columnSlices), tilesK, state);
  } else {
    state = loop(idx(0), tilesK, state);
  }
  endTurn();
  Value acc = waitForGroups(0, state[0]);
  int64_t slices = kSlices();
  for (int64_t back = std::min(inFlight, slices); back >= 1; --back)
    release(stageOf(firstSlice, idx(slices - back)));
  return acc;
}

Value WgmmaGemmEmitter::emitSplitMainLoop(Value firstSlice) {
  int64_t slices = kSlices();
  int64_t group = std::min(kSlicesPerSum, slices);
  // The tensor cores sum groups of `group` K slices (the last group takes
  // the rest) from zero, which the running sums then add. Slice t + 1's
  // register parts are loaded (once the producer's splitters have written
  // its remainders) while the tensor cores multiply slice t. The consumer
  // warpgroups share no barrier here: one's adds run under the other's
  // wgmmas.
  waitForTurn(firstSlice);
  waitSplit(firstSlice, idx(0));
  SmallVector<Value> first = loadRegisterParts(stageOf(firstSlice, idx(0)));
  // Waits for slice `kTile` and loads its register parts where the tile has
  // it.
  auto prepare = [&](Value kTile, ValueRange like) {
    auto load = scf::IfOp::create(
        b, loc, TypeRange(like),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kTile, tilesK),
        /*withElseRegion=*/true);
    OpBuilder::InsertionGuard branch(b);
    b.setInsertionPointToStart(&load.getThenRegion().front());
    waitSplit(firstSlice, kTile);
    scf::YieldOp::create(b, loc, loadRegisterParts(stageOf(firstSlice, kTile)));
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
      Value stage = stageOf(firstSlice, slice);
      acc = multiplyStage(acc, stage, /*fromZero=*/i == 0, parts);
      if (i > 0) {
        // The previous slice's wgmmas are done: its stage and registers
        // are free.
        waitForGroups(1, Value(), previous);
        release(stageOf(firstSlice, sub(slice, 1)));
      }
      if (i + 1 < count) {
        waitSplit(firstSlice, add(slice, 1));
        previous = std::exchange(
            parts, loadRegisterParts(stageOf(firstSlice, add(slice, 1))));
      }
    }
    SmallVector<Value> following = prepare(add(slice, 1), parts);
    acc = waitForGroups(0, acc, parts);
    release(stageOf(firstSlice, slice));
    running = addAccumulators(running, acc);
    SmallVector<Value> results{acc, running};
    llvm::append_range(results, following);
    return results;
  };
  Value zero = LLVM::ZeroOp::create(b, loc, accumulatorType);
  SmallVector<Value> initial{zero, zero};
  llvm::append_range(initial, first);
  int64_t whole = slices - slices % group;
  // Every slice has been waited for once the loops are done.
  auto finish = [&](Value running) {
    endTurn();
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

void WgmmaGemmEmitter::emitConsumer() {
  setMaxRegisters(kConsumerRegisters, NVVM::SetMaxRegisterAction::increase);
  // A ping-pong consumer's epilogue has its own column constants (and
  // moments scratch), past the other's.
  Value epilogueShared = shared;
  if (c.isPingpong()) {
    Value shift = mul(consumer, layout.consumerScratchStride);
    epilogueShared = memref::ViewOp::create(
        b, loc, cast<MemRefType>(shared.getType()), shared, shift,
        ValueRange{sub(idx(layout.total - kSwizzleAtomBytes), shift)});
  }
  Value tileThread =
      c.isPingpong() ? rem(thread, kWarpgroupThreads) : consumerThread;
  forEachTile(
      [&](Value tile, Value iteration) {
        GemmTilePosition position =
            rasterizeGemmTile(b, loc, tile, rows, p.n, c, clusterRank);
        GemmTile gemmTile{tileThread,
                          c.getTileThreads(),
                          rows,
                          position.tileM,
                          position.blockRowTiles,
                          position.rowBase,
                          position.columnBase,
                          epilogueShared,
                          [this] { consumerBarrier(); },
                          stagesInRing() ? GemmOutputPath::Staged
                                         : GemmOutputPath::Direct};
        GemmEpilogueEmitter epilogue(b, loc, p, gemmTile, *epilogueArgs);
        epilogue.loadColumnConstants();
        consumerBarrier();
        Value firstSlice = firstSliceOf(iteration);
        std::vector<SmallVector<Value>> inputRows;
        Value acc = emitMainLoop(firstSlice, position.columnBase, inputRows);
        if (takesRowOperandFromRing(p))
          epilogue.provideRowOperand(
              *p.inputRowOperand, [&](size_t run) { return inputRows[run]; });
        std::optional<RingResidual> residual;
        if (residualMap) {
          residual = ringResidualOf(firstSlice);
          epilogue.provideRowOperand(*residualThroughRing(p), [&](size_t run) {
            return ringResidualRun(*residual, run);
          });
        }
        if (c.isClustered()) {
          // A cluster's tile past the last block row: loaded (as zeros) and
          // multiplied for the peer's sake, not stored.
          guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        position.tileM, position.blockRowTiles),
                  [&] { emitEpilogue(epilogue, acc); });
        } else if (kShare) {
          guarded(equal(kShare, 0), [&] {
            emitEpilogue(epilogue, addPeerPartials(acc, iteration));
          });
          guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                        kShare, idx(0)),
                  [&] { storePartials(acc, iteration); });
        } else {
          emitEpilogue(epilogue, acc);
        }
        // Slices whose runs the epilogue did not read still leave the ring.
        while (residual && residual->taken < residualSlices())
          takeRingResidualSlice(*residual, /*read=*/false);
        if (stagesInRing())
          // The staged tile's generic accesses come before the producer's TMA
          // writes into the ring.
          fenceSharedProxies();
        // Every consumer is done with the tile's column constants (and staged
        // tile) before the next tile's.
        consumerBarrier();
        if (stagesInRing())
          guarded(equal(consumerThread, 0), [&] {
            nvgpu::MBarrierArriveOp::create(b, loc, barriers,
                                            epilogueBarrier());
          });
      },
      c.isPingpong() ? consumer : Value(), turns);
}

void WgmmaGemmEmitter::storePartials(Value acc, Value iteration) {
  MLIRContext *context = b.getContext();
  // The first block has taken this peer's sums of the block's previous
  // tile from its slot.
  guarded(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, iteration,
                                idx(0)),
          [&] {
            waitBarrier(parityOf(sub(iteration, 1)), partialsTakenBarrier(),
                        NVVM::MemScopeKind::CLUSTER);
          });
  auto sharedPtr = LLVM::LLVMPointerType::get(context, /*shared=*/3);
  auto clusterPtr = LLVM::LLVMPointerType::get(context, /*shared_cluster=*/7);
  Value firstBlock = i32(0);
  // This thread's first chunk of the slot, in the first block.
  Value slot = NVVM::MapaOp::create(
      b, loc, clusterPtr,
      LLVM::IntToPtrOp::create(
          b, loc, sharedPtr,
          ValueRange{arith::AddIOp::create(
              b, loc, origin, toI32(partialOffset(sub(kShare, 1), 0)))}),
      firstBlock);
  auto vectorType = VectorType::get({4}, b.getF32Type());
  for (int64_t chunk = 0; chunk < accumulators() / 4; ++chunk) {
    Value values = LLVM::PoisonOp::create(b, loc, vectorType);
    for (int64_t e = 0; e < 4; ++e)
      values = LLVM::InsertElementOp::create(
          b, loc, values,
          LLVM::ExtractValueOp::create(b, loc, acc, 4 * chunk + e), i32(e));
    Value address =
        LLVM::GEPOp::create(b, loc, clusterPtr, b.getI8Type(), slot,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(
                                chunk * c.getTileThreads() * 16)});
    LLVM::StoreOp::create(b, loc, values, address, /*alignment=*/16);
  }
  // The arrival releases the stores at cluster scope.
  Value stored = NVVM::MapaOp::create(
      b, loc, clusterPtr, barrierAddress(partialsStoredBarrier()), firstBlock);
  NVVM::MBarrierArriveOp::create(b, loc, Type(), stored, Value(),
                                 NVVM::MemScopeKind::CLUSTER,
                                 /*relaxed=*/false);
}

Value WgmmaGemmEmitter::addPeerPartials(Value acc, Value iteration) {
  MLIRContext *context = b.getContext();
  waitBarrier(parityOf(iteration), partialsStoredBarrier(),
              NVVM::MemScopeKind::CLUSTER);
  Type f32 = b.getF32Type();
  auto vectorType = VectorType::get({4}, f32);
  for (int64_t peer = 1; peer < c.getSplitK(); ++peer)
    for (int64_t chunk = 0; chunk < accumulators() / 4; ++chunk) {
      Value values = vector::LoadOp::create(
          b, loc, vectorType,
          sharedView(partialOffset(idx(peer - 1), chunk), {4}, f32),
          ValueRange{idx(0)});
      for (int64_t e = 0; e < 4; ++e) {
        int64_t i = 4 * chunk + e;
        Value sum = arith::AddFOp::create(
            b, loc, LLVM::ExtractValueOp::create(b, loc, acc, i),
            vector::ExtractOp::create(b, loc, values, ArrayRef<int64_t>{e}));
        acc = LLVM::InsertValueOp::create(b, loc, acc, sum, i);
      }
    }
  // Each thread's arrival on each peer's barrier releases its reads of the
  // peer's slot (at cluster scope) before the peer stores the next tile's.
  Value taken = barrierAddress(partialsTakenBarrier());
  for (int64_t peer = 1; peer < c.getSplitK(); ++peer)
    NVVM::MBarrierArriveOp::create(
        b, loc, Type(),
        NVVM::MapaOp::create(
            b, loc, LLVM::LLVMPointerType::get(context, /*shared_cluster=*/7),
            taken, i32(peer)),
        Value(), NVVM::MemScopeKind::CLUSTER, /*relaxed=*/false);
  return acc;
}

void WgmmaGemmEmitter::emitEpilogue(GemmEpilogueEmitter &epilogue, Value acc) {
  // Lane l of warp w of a consumer warpgroup holds, of each n8 block j of
  // each of its m64 row blocks r, rows 64r + 16w + l / 4 (+ 8) and columns
  // 8j + 2 (l % 4) (+ 1) of its wgmmas' output: elements 4j, 4j + 1 (+ 2,
  // + 3) of the block's. Swapped operands: those are the tile's columns and
  // rows, the runs go down columns.
  auto [warp, lane] = warpAndLane();
  Value wgmmaRow = add(add(consumerFirstRow(), mul(warp, 16)), div(lane, 4));
  Value wgmmaColumn = mul(rem(lane, 4), 2);
  bool swapped = c.swapsOperands();
  SmallVector<AccumulatorRun> runs;
  for (int64_t rowBlock = 0; rowBlock < rowBlocks(); ++rowBlock)
    for (int64_t j = 0; j < c.getWgmmaN() / 8; ++j)
      for (int64_t half = 0; half < 2; ++half) {
        SmallVector<Value> pair;
        for (int64_t e = 0; e < 2; ++e)
          pair.push_back(LLVM::ExtractValueOp::create(
              b, loc, acc,
              rowBlock * blockAccumulators() + 4 * j + 2 * half + e));
        int64_t row = 64 * rowBlock + 8 * half, column = 8 * j;
        if (swapped)
          std::swap(row, column);
        runs.push_back({row, column, pair});
      }
  if (swapped)
    epilogue.emit(wgmmaColumn, wgmmaRow, runs);
  else
    epilogue.emit(wgmmaRow, wgmmaColumn, runs);
}

void WgmmaGemmEmitter::emit(gpu::GPUFuncOp kernel, LaunchContract &launch) {
  setUp(kernel);
  guarded(equal(thread, 0), [&] {
    for (int64_t s = 0; s < c.getStages(); ++s) {
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(1),
                                    fullBarrier(idx(s)), Value());
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(releaseArrivals()),
                                    emptyBarrier(idx(s)), Value());
    }
    nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(1), epilogueBarrier(),
                                  Value());
    for (int64_t s = 0; split() && s < c.getStages(); ++s)
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(kSplitters),
                                    splitBarrier(idx(s)), Value());
    if (c.isPingpong())
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(c.getTileThreads()),
                                    turnBarrier(), Value());
    if (c.splitsK()) {
      nvgpu::MBarrierInitOp::create(
          b, loc, barriers, idx((c.getSplitK() - 1) * c.getTileThreads()),
          partialsStoredBarrier(), Value());
      nvgpu::MBarrierInitOp::create(b, loc, barriers, idx(c.getTileThreads()),
                                    partialsTakenBarrier(), Value());
    }
    nvgpu::TmaPrefetchOp::create(b, loc, xMap, Value());
    nvgpu::TmaPrefetchOp::create(b, loc, wMap, Value());
    if (residualMap)
      nvgpu::TmaPrefetchOp::create(b, loc, residualMap, Value());
    // The peers' multicasts, stores and arrivals find the barriers
    // initialized.
    if (c.getClusterSize() > 1)
      NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  if (c.getClusterSize() > 1)
    clusterBarrier();
  else
    gpu::BarrierOp::create(b, loc);
  // The set-up above overlaps the stream's previous kernel.
  emitPredecessorWait(b, loc, kernel, launch);
  auto roles = scf::IfOp::create(b, loc, equal(warpgroup, 0),
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&roles.getThenRegion().front());
    emitProducer();
    b.setInsertionPointToStart(&roles.getElseRegion().front());
    emitConsumer();
  }
  // No block leaves while its peers may still arrive on its barriers.
  if (c.getClusterSize() > 1)
    clusterBarrier();
  gpu::ReturnOp::create(b, loc);
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
  launch.arguments.push_back(KernelArgument::tensorMap(
      1, {RowExpr::constant(n), RowExpr::constant(k)}, type,
      {config.getBlockN() / config.getClusterM(), tileK}));
  argTypes.push_back(ptr);
  launch.arguments.push_back(KernelArgument::lastBlockRowTensorMap(
      0, {RowExpr::rows(), RowExpr::constant(k)}, type, config.getBlockM(),
      tileK));
  SmallVector<int64_t> tensorMapArgs{0, 1, 2};
  if (std::optional<unsigned> residual = residualThroughRing(problem)) {
    // The residual matrix, a launch operand among the epilogue's (its
    // memref argument stays), also as a tensor map in x's boxes, the kernel
    // argument after x's last-rows map.
    unsigned operand = 2 + problem.hasBias + problem.storesOutput +
                       problem.intermediates.size() +
                       problem.columnTypes.size() + *residual;
    tensorMapArgs.push_back(argTypes.size());
    argTypes.push_back(ptr);
    launch.arguments.push_back(KernelArgument::tensorMap(
        operand, {RowExpr::rows(), RowExpr::constant(n)}, type,
        {config.getBlockM(), tileK}));
  }
  completeGemmLaunch(problem, argTypes, launch);
  // A tile staged in the ring holds the producer back until its epilogue
  // is done, so the block's next tile gains no overlap; one block a tile
  // measured the same and leaves the balance to the block scheduler.
  launch.persistent = !problem.readsStagedTile();

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
  WgmmaGemmEmitter(builder, loc, problem).emit(kernel, launch);
  return {kernel, std::move(launch)};
}
