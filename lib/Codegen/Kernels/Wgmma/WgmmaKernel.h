//===- WgmmaKernel.h - the parts of the Hopper GEMM kernel ------*- C++ -*-===//
//
// The wgmma kernel (WgmmaGemmKernel.cpp) is built from parts in the manner
// of CUTLASS's sm90 collectives, each a class over the kernel's shared
// state (WgmmaKernel):
// - WgmmaRing: the ring of shared-memory stages and its mbarriers (full,
//   empty, split, epilogue; the ping-pong turns; split-K's), the pipeline
//   that producer and consumers hand stages through;
// - WgmmaTileScheduler: which tiles a block (or cluster, or a ping-pong
//   consumer) takes, and the ring slices of each;
// - WgmmaMainloop: the wgmmas of a tile's K slices, from shared memory or
//   (3xTF32) with the register operand split into tf32 parts;
// - WgmmaRowOperands: epilogue row operands that come through the ring (x
//   itself where N = K, a residual loaded after the K slices);
// - WgmmaSplitK: split-K's sums across the blocks of a cluster;
// - WgmmaProducer and WgmmaConsumer: the two warpgroup roles, which
//   combine the parts (the consumer ends each tile in GemmEpilogueEmitter).
// A new schedule or operand is a new part, or a change to the one part it
// concerns.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_LIB_CODEGEN_KERNELS_WGMMA_WGMMAKERNEL_H
#define FUSION_LIB_CODEGEN_KERNELS_WGMMA_WGMMAKERNEL_H

#include "fusion/Codegen/Kernels/GemmEpilogue.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <optional>
#include <vector>

namespace mlir::fusion::wgmma {

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
/// The named barrier of the splitters, after the consumers' (a ping-pong
/// kernel's two).
constexpr int32_t kSplitterBarrier = 3;

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
bool takesRowOperandFromRing(const GemmKernelProblem &p);

/// The row operand, an [M, N] matrix (x too, where N = K but
/// takesRowOperandFromRing does not hold), that the producer loads into the
/// ring by TMA after each tile's K slices: blockN / tileK slices of
/// x's shape (its rows of the tile, tileK columns each), which the consumers
/// read in the accumulators' layout as the epilogue goes (loadInputRows)
/// and release, instead of loading it from global memory between two main
/// loops with the tensor cores idle. The cooperative schedule's ring order
/// (a ping-pong consumer's epilogue would hold the other's turn),
/// unclustered, without split_k, a tile not staged in the ring, rows of
/// 16-byte multiples (TMA's strides). Any K: the residual's stages go back
/// to the producer as the epilogue takes them, so the next tile's first K
/// slices wait little.
std::optional<unsigned> residualThroughRing(const GemmKernelProblem &p);

/// What every part of one kernel reads: the problem, its config and shared
/// layout, and the values the kernel sets up at its start (setUp).
class WgmmaKernel : public IndexEmitter {
public:
  WgmmaKernel(OpBuilder &builder, Location loc,
              const GemmKernelProblem &problem);

  /// The tensor maps, the shared memory and the barriers from the kernel's
  /// arguments; the thread's roles; the tiles.
  void setUp(gpu::GPUFuncOp kernel);

  OpBuilder &builder() { return b; }
  Location location() { return loc; }
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
  void consumerBarrier();
  /// The first row that this consumer warpgroup multiplies of the operand
  /// the warpgroups split (x's tile, or w's with operands = w_x).
  Value consumerFirstRow() {
    return c.isPingpong() ? idx(0)
                          : mul(consumer, c.getWgmmaRowsPerWarpgroup());
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
  /// A dual GEMM's (GemmKernelProblem::dualWeight) accumulators follow the
  /// thread's others in one struct, as many again.
  bool dual() const { return p.dualWeight; }
  int64_t totalAccumulators() const {
    return accumulators() * (dual() ? 2 : 1);
  }
  /// Shared memory that one proxy (generic loads and stores, or the async
  /// proxy of TMA and wgmma) wrote or read is next accessed by the other.
  void fenceSharedProxies();
  /// Moves this warpgroup's registers to `count` a thread; only with two
  /// consumer warpgroups, whose budget the counts are set for.
  void setMaxRegisters(int32_t count, NVVM::SetMaxRegisterAction action);
  /// 3xTF32 (the register operand split into tf32 parts).
  bool split() const { return c.isWgmmaSplit(); }
  /// w (and the dual weight) stored [K, N]: each stage holds w's tile as
  /// boxes of tileK columns of N (weightBoxBytes each), K slice rows of 128
  /// bytes, which the wgmmas read N-major (16 bits) or 3xTF32's splitters
  /// transpose (splitTransposedStage).
  bool weightNMajor() const { return p.weightLayout == WeightLayout::in_out; }
  int64_t weightBoxBytes() const { return tileK * kGemmRowBytes; }
  /// Where the epilogue stages its output tile: the ring, which the
  /// producer then leaves alone until its release.
  bool stagesInRing() const { return p.readsStagedTile(); }
  /// The K slices of a tile (split_k: of the block's share of them).
  int64_t kSlices() const {
    return countKSlices(p.elementType, p.k) / c.getSplitK();
  }
  /// The ring slices of a residual (residualThroughRing) after each tile's
  /// K slices, and the ring slices a tile takes in all.
  int64_t residualSlices() const {
    return residualThroughRing(p) ? c.getBlockN() / tileK : 0;
  }
  int64_t slicesPerTile() const { return kSlices() + residualSlices(); }

  const GemmKernelProblem &p;
  GemmConfigAttr c;
  MmaKind mma;
  GemmSharedLayout layout;
  Type elementType;
  int64_t tileK, warpgroups;
  /// The consumer warpgroups that take the block's tiles in turn: 2 with
  /// the ping-pong schedule, else 1 (they share each tile).
  int64_t turns;

  /// x's tensor maps: of whole tiles' rows, and of the rows of the
  /// batch's last block row (its boxes encoded by the host; the type
  /// shows the tile's). The residual's tensor map where
  /// residualThroughRing (else null).
  Value xMap, xLastRowsMap, wMap, residualMap, barriers, shared;
  /// The dual weight's tensor map (a dual GEMM; else null), in w's boxes.
  Value dualMap;
  /// The pointers to the tensor maps of w's parts, w's first (a grouped
  /// GEMM, GemmKernelProblem::weightParts; else empty).
  SmallVector<Value> weightPartMaps;
  /// w's tensor map holding output column `column` (the first of a tile's,
  /// or of its share of a cluster's tile) and the column's place in it.
  std::pair<Value, Value> weightMapAt(Value column);
  /// The type of w's tensor maps (and its parts').
  Type weightMapType;
  /// Prefetches w's tensor maps (and the dual weight's).
  void prefetchWeightMaps();
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

private:
  /// The steps of setUp: the tensor maps and the epilogue's operands; the
  /// thread's roles and the tiles; the aligned ring and its barriers.
  void takeArguments(gpu::GPUFuncOp kernel);
  void setUpThreadRoles();
  void setUpSharedMemory();
};

/// The base of the parts: the kernel's state and the index arithmetic.
class WgmmaPart : protected IndexEmitter {
protected:
  explicit WgmmaPart(WgmmaKernel &kernel)
      : IndexEmitter(kernel.builder(), kernel.location()), kernel(kernel),
        p(kernel.p), c(kernel.c) {}

  WgmmaKernel &kernel;
  const GemmKernelProblem &p;
  GemmConfigAttr c;
};

/// The ring of `stages` shared-memory stages that the producer fills with K
/// slices and the consumers release (CUTLASS's PipelineTmaAsync), and the
/// kernel's other mbarriers. The ring's slices are numbered across the
/// block's tiles: slice s takes stage s % stages, in its use s / stages.
class WgmmaRing : WgmmaPart {
public:
  explicit WgmmaRing(WgmmaKernel &kernel) : WgmmaPart(kernel) {}

  /// Initializes every barrier (the block's first thread).
  void initBarriers();
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

  /// Waits for phase `parity` (i1) of mbarrier `index`, acquiring what
  /// the threads that arrived released at `scope` (cluster: the peers'
  /// stores into this block's shared memory).
  void waitBarrier(Value parity, Value index,
                   NVVM::MemScopeKind scope = NVVM::MemScopeKind::CTA);
  /// The shared-memory address of barrier `index`.
  Value barrierAddress(Value index);

  /// The ring's stage of K slice `kTile` of the tile whose slices start at
  /// `firstSlice`; waiting for its data, and releasing it to the producer.
  Value stageOf(Value firstSlice, Value kTile) {
    return rem(add(firstSlice, kTile), c.getStages());
  }
  void waitFull(Value firstSlice, Value kTile) {
    waitSlice(firstSlice, kTile, &WgmmaRing::fullBarrier);
  }
  /// 3xTF32: waits for K slice `kTile` and its remainders.
  void waitSplit(Value firstSlice, Value kTile) {
    waitFull(firstSlice, kTile);
    waitSlice(firstSlice, kTile, &WgmmaRing::splitBarrier);
  }
  /// Waits for the phase of per-stage barrier `barrierOf` that K slice
  /// `kTile`'s use of its stage completes.
  void waitSlice(Value firstSlice, Value kTile,
                 Value (WgmmaRing::*barrierOf)(Value));
  /// Releases stage `stage` to the producer (clusters: both blocks'
  /// producers), once this warp's wgmmas that read it are done.
  void release(Value stage);
  /// The arrivals that release a stage: each tile thread's, or with
  /// clusters each tile warp's in each block of the cluster.
  int64_t releaseArrivals() const {
    return c.isClustered() ? c.getTileThreads() / 32 * c.getClusterM()
                           : c.getTileThreads();
  }
  /// The producer: waits until the consumers have released the stage of
  /// ring slice `slice`'s previous use; that stage.
  Value acquireStage(Value slice);
  /// The ring's stage (i32) after `stage`, and its phase parity after
  /// `parity`: the parity flips where the stage wraps to 0.
  std::pair<Value, Value> nextStage(Value stage, Value parity);

  /// Ping-pong: waits for the main loop of the tile before this one (whose
  /// slices start at `firstSlice`) to end its turn; nothing for the block's
  /// first tile.
  void waitForTurn(Value firstSlice);
  /// Ping-pong: ends the turn of this consumer's main loop.
  void endTurn();
  /// All threads of the cluster meet (arrive and wait).
  void clusterBarrier();

  /// Byte offsets of stage buffers (from the aligned origin): x's, then
  /// w's (a dual GEMM: each followed by the dual weight's; 3xTF32: then a
  /// buffer of remainders a stage).
  Value aOffset(Value stage) {
    return mul(stage, c.getBlockM() * kGemmRowBytes);
  }
  Value bOffset(Value stage) {
    return add(mul(stage, weightRows() * kGemmRowBytes),
               c.getStages() * c.getBlockM() * kGemmRowBytes);
  }
  Value dualOffset(Value stage) {
    return add(bOffset(stage), c.getBlockN() * kGemmRowBytes);
  }
  /// The weight rows of a stage: w's tile, and the dual weight's.
  int64_t weightRows() const { return c.getBlockN() * (kernel.dual() ? 2 : 1); }
  int64_t stageBytes() const {
    return (c.getBlockM() + weightRows()) * kGemmRowBytes;
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
};

/// Which tiles a block takes (a cluster's blocks together, a ping-pong
/// consumer every other one of its block's), and their ring slices.
class WgmmaTileScheduler : WgmmaPart {
public:
  explicit WgmmaTileScheduler(WgmmaKernel &kernel) : WgmmaPart(kernel) {}

  /// `body(tile, iteration)` for each tile of the block, or of its
  /// iterations `turn`, `turn` + `turns`, ...: tile number blockIdx +
  /// iteration * gridDim.
  void forEachTile(function_ref<void(Value tile, Value iteration)> body,
                   Value turn = Value(), int64_t turns = 1);
  /// `body(kTile)` for each K slice of a tile.
  void forEachSlice(function_ref<void(Value kTile)> body);
  /// The ring slice where the tile of block iteration `iteration` starts.
  Value firstSliceOf(Value iteration) {
    return mul(iteration, kernel.slicesPerTile());
  }
};

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

/// Epilogue row operands that come through the ring: x's rows where N = K
/// (takesRowOperandFromRing), a residual after the K slices
/// (residualThroughRing).
class WgmmaRowOperands : WgmmaPart {
public:
  WgmmaRowOperands(WgmmaKernel &kernel, WgmmaRing &ring)
      : WgmmaPart(kernel), ring(ring) {}

  /// The producer's loads of the tile's residual slices, the ring's slices
  /// `firstSlice` + K slices and on.
  void loadResidualSlices(Value firstSlice, const GemmTilePosition &position);
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

private:
  WgmmaRing &ring;
};

/// The consumers' wgmmas: a tile's main loop over its K slices, the
/// operands' descriptors, and 3xTF32's split of the register operand.
class WgmmaMainloop : WgmmaPart {
public:
  WgmmaMainloop(WgmmaKernel &kernel, WgmmaRing &ring,
                WgmmaRowOperands &operands)
      : WgmmaPart(kernel), ring(ring), operands(operands) {}

  /// The consumers' main loop over the K slices of one tile, the ring's
  /// slices `firstSlice` and on: the accumulators, every stage released.
  /// Where takesRowOperandFromRing, the slices of the tile's columns (from
  /// `columnBase`) also give `inputRows` each run's x elements.
  Value emitMainLoop(Value firstSlice, Value columnBase,
                     std::vector<SmallVector<Value>> &inputRows);
  /// 3xTF32: the remainders of stage `stage`'s w tile into its remainder
  /// buffer, fenced for the tensor cores, by thread `splitter` of
  /// kSplitters.
  void splitStage(Value stage, Value splitter);

private:
  /// splitStage of a w stored [K, N]: each box of the stage transposed to
  /// K-major as it is split.
  void splitTransposedStage(Value stage, Value splitter);
  /// emitMainLoop for 3xTF32.
  Value emitSplitMainLoop(Value firstSlice);
  /// Register A: this thread's fragments of the consumer's 64 rows of x in
  /// stage `stage`, per K step its four high parts then its four low parts
  /// (i32 bits, which tf32 wgmma reads).
  SmallVector<Value> loadRegisterParts(Value stage);
  /// wgmma with A from the registers `aParts` (four).
  Value wgmmaRegisterA(Value acc, ValueRange aParts, Value bDescriptor,
                       bool fromZero);
  /// The low word (i32) of the wgmma descriptor of the matrix at byte
  /// `offset` (index) from the ring's origin; `nMajor`: w's tile stored
  /// [K, N] (WgmmaKernel::weightNMajor).
  Value descriptorLow(Value offset, bool nMajor = false);
  /// The bytes from one K step's matrix to the next in a stage.
  int64_t kStepBytes(bool nMajor) const;
  /// Whether the wgmmas read w's tile N-major (stored [K, N], not
  /// transposed by 3xTF32's splitters), as their A (swapped operands) or B.
  bool readsWeightNMajor() const {
    return kernel.weightNMajor() && !kernel.split();
  }
  bool weightIsA() const { return readsWeightNMajor() && c.swapsOperands(); }
  bool weightIsB() const { return readsWeightNMajor() && !c.swapsOperands(); }
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
  /// The wgmma of row block `rowBlock` into its accumulators of `acc`
  /// (`dual`: the dual GEMM's).
  Value wgmma(Value acc, int64_t rowBlock, Value a, Value bDescriptor,
              bool fromZero, bool dual = false);
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

  WgmmaRing &ring;
  WgmmaRowOperands &operands;
};

/// split_k: the blocks of a cluster share each tile's K slices; the peers
/// store their sums into the first block's shared memory, which adds them
/// in the order of their ranks and runs the epilogue alone.
class WgmmaSplitK : WgmmaPart {
public:
  WgmmaSplitK(WgmmaKernel &kernel, WgmmaRing &ring)
      : WgmmaPart(kernel), ring(ring) {}

  /// This thread's sums of the tile, a peer's, into the cluster's first
  /// block (tile iteration `iteration` of the block).
  void storePartials(Value acc, Value iteration);
  /// `acc` plus the peers' sums of tile iteration `iteration`, in the
  /// order of their ranks, in the cluster's first block; the peers' slots
  /// released.
  Value addPeerPartials(Value acc, Value iteration);

private:
  /// The byte offset (from the ring's origin) of this thread's 16-byte
  /// chunk `chunk` of a peer's sums in slot `slot` (the slots are [peer,
  /// chunk, thread] in the first block).
  Value partialOffset(Value slot, int64_t chunk) {
    return add(add(mul(slot, c.getBlockM() * c.getBlockN() * 4),
                   kernel.layout.partials + chunk * c.getTileThreads() * 16),
               mul(kernel.consumerThread, 16));
  }

  WgmmaRing &ring;
};

/// The producer warpgroup: its first thread streams each tile's K slices
/// (and residual) into the ring with TMA; with 3xTF32 its last warps split
/// each stage's shared-memory operand.
class WgmmaProducer : WgmmaPart {
public:
  WgmmaProducer(WgmmaKernel &kernel, WgmmaRing &ring,
                WgmmaTileScheduler &scheduler, WgmmaMainloop &mainloop,
                WgmmaRowOperands &operands)
      : WgmmaPart(kernel), ring(ring), scheduler(scheduler), mainloop(mainloop),
        operands(operands) {}

  void emit();

private:
  /// 3xTF32: the producer warpgroup's splitters write each stage's w
  /// remainders once it is loaded.
  void emitSplitters();

  WgmmaRing &ring;
  WgmmaTileScheduler &scheduler;
  WgmmaMainloop &mainloop;
  WgmmaRowOperands &operands;
};

/// The consumer warpgroups: each tile's main loop, split-K's sums, and the
/// epilogue on the accumulators.
class WgmmaConsumer : WgmmaPart {
public:
  WgmmaConsumer(WgmmaKernel &kernel, WgmmaRing &ring,
                WgmmaTileScheduler &scheduler, WgmmaMainloop &mainloop,
                WgmmaRowOperands &operands, WgmmaSplitK &splitK)
      : WgmmaPart(kernel), ring(ring), scheduler(scheduler), mainloop(mainloop),
        operands(operands), splitK(splitK) {}

  void emit();

private:
  /// The epilogue of one tile on its accumulators `acc`.
  void emitEpilogue(GemmEpilogueEmitter &epilogue, Value acc);

  WgmmaRing &ring;
  WgmmaTileScheduler &scheduler;
  WgmmaMainloop &mainloop;
  WgmmaRowOperands &operands;
  WgmmaSplitK &splitK;
};

} // namespace mlir::fusion::wgmma

#endif // FUSION_LIB_CODEGEN_KERNELS_WGMMA_WGMMAKERNEL_H
