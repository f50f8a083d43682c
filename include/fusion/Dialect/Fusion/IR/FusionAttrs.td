//===- FusionAttrs.td - fusion enums and attributes --------*- tablegen -*-===//

#ifndef FUSION_DIALECT_FUSION_IR_FUSIONATTRS_TD
#define FUSION_DIALECT_FUSION_IR_FUSIONATTRS_TD

include "fusion/Dialect/Fusion/IR/FusionBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Fusion_Precision : I32EnumAttr<"Precision",
    "arithmetic the GEMM of a fused linear is computed in", [
      I32EnumAttrCase<"fp32", 0>,
      I32EnumAttrCase<"tf32", 1>,
      I32EnumAttrCase<"bf16", 2>,
      I32EnumAttrCase<"f16", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_PrecisionAttr : EnumAttr<Fusion_Dialect, Fusion_Precision,
                                    "precision"> {
  let assemblyFormat = "`<` $value `>`";
  let description = [{
    The multiply precision of the GEMM; accumulation is always f32.
    `fp32`: full fp32 products. `tf32`: operands rounded to tf32 (10-bit
    mantissa). `bf16`/`f16`: operands rounded to that 16-bit type.
  }];
}

// Printed as a bare keyword in op syntax (`fusion.reduce max %x ...`).
def Fusion_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a row reduction combines the values of a group: the f32 sum, or the "
    "IEEE maximum/minimum, NaN propagating, as torch.amax/amin", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::mlir::fusion";
}

def Fusion_BatchNormMode : I32EnumAttr<"BatchNormMode",
    "whether batch normalization uses batch or running statistics", [
      I32EnumAttrCase<"training", 0>,
      I32EnumAttrCase<"inference", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

// A double, written as a plain float literal.
def Fusion_DoubleParameter : APFloatParameter<""> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer.printFloat($_self) }];
}

def Fusion_BatchNormConfigAttr : AttrDef<Fusion_Dialect, "BatchNormConfig"> {
  let mnemonic = "batch_norm";
  let summary = "BatchNorm1d configuration: mode, epsilon and momentum";
  let description = [{
    `training`: normalize with the biased batch variance and update the
    running statistics as `running = (1 - momentum) * running + momentum *
    batch_stat`, where the running variance takes the unbiased batch variance
    `M / (M - 1) * var`. `inference`: normalize with the running statistics.
    Shared by `fusion.batch_norm` and the batch-norm stage of
    `fusion.fused_linear`.

    Example: `#fusion.batch_norm<training, epsilon = 1.0e-05, momentum = 0.1>`
  }];
  let parameters = (ins "BatchNormMode":$mode,
                        Fusion_DoubleParameter:$epsilon,
                        Fusion_DoubleParameter:$momentum);
  let assemblyFormat =
      "`<` $mode `,` `epsilon` `=` $epsilon `,` `momentum` `=` $momentum `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isTraining() const { return getMode() == BatchNormMode::training; }
    double getEpsilonValue() const { return getEpsilon().convertToDouble(); }
    double getMomentumValue() const { return getMomentum().convertToDouble(); }
  }];
}

//===----------------------------------------------------------------------===//
// Lowering decisions. Each concept is defined once, here: the compiler, the
// runtime's C ABI (runtime/include/fusion_runtime.h, checked against these
// codes at compile time) and the Python package (through the native
// extension) share these names and numbers.
//===----------------------------------------------------------------------===//

def Fusion_ElementType : I32EnumAttr<"ElementType",
    "element type of the tensors fusion computes on", [
      I32EnumAttrCase<"f32", 0>,
      I32EnumAttrCase<"bf16", 1>,
      I32EnumAttrCase<"f16", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_ElementTypeAttr : EnumAttr<Fusion_Dialect, Fusion_ElementType,
                                      "element_type"> {
  let assemblyFormat = "`<` $value `>`";
}

def Fusion_WeightLayout : I32EnumAttr<"WeightLayout",
    "how a GEMM's weight is stored: `out_in`, `[out_features, in_features]` "
    "row-major (torch.nn.Linear's: y = x w^T); `in_out`, `[in_features, "
    "out_features]` (y = x w: `x @ w`, `addmm(b, x, w)`, GPT-2's Conv1D)", [
      I32EnumAttrCase<"out_in", 0>,
      I32EnumAttrCase<"in_out", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_WeightLayoutAttr : EnumAttr<Fusion_Dialect, Fusion_WeightLayout,
                                      "weight_layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Fusion_GemmStrategy : I32EnumAttr<"GemmStrategy",
    "how fusion-select-gemm-config chooses the backend of a fused GEMM", [
      I32EnumAttrCase<"cublas", 0>,
      I32EnumAttrCase<"tiled", 1>,
      I32EnumAttrCase<"Auto", 2, "auto">,
      // The generated Hopper kernel (wgmma, TMA; sm_90 only).
      I32EnumAttrCase<"wgmma", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_Fp32Math : I32EnumAttr<"Fp32Math",
    "how a generated kernel computes an f32 GEMM in fp32 precision", [
      I32EnumAttrCase<"tf32x3", 0>,
      I32EnumAttrCase<"simt", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_GemmBackend : I32EnumAttr<"GemmBackend",
    "the kernel family a fused GEMM is lowered to", [
      I32EnumAttrCase<"cublaslt", 0>,
      I32EnumAttrCase<"mma_sync", 1>,
      I32EnumAttrCase<"simt", 2>,
      I32EnumAttrCase<"wgmma", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_WgmmaSchedule : I32EnumAttr<"WgmmaSchedule",
    "how a wgmma kernel's consumer warpgroups share the output tiles", [
      // Together: each multiplies 64 rows of every tile of the block.
      I32EnumAttrCase<"cooperative", 0>,
      // In turn: each multiplies whole tiles, alternating with the other,
      // so that one's epilogue runs under the other's main loop.
      I32EnumAttrCase<"pingpong", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_TileScheduler : I32EnumAttr<"TileScheduler",
    "how a wgmma kernel's blocks take their output tiles", [
      // As many blocks as the GPU holds at once, each a fixed stride of the
      // tiles (blockIdx, blockIdx + gridDim, ...).
      I32EnumAttrCase<"persistent", 0>,
      // A block a tile: the GPU's block scheduler starts each on the next
      // multiprocessor that frees up.
      I32EnumAttrCase<"per_block", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_WgmmaOperands : I32EnumAttr<"WgmmaOperands",
    "which operand a wgmma kernel's consumer warpgroups split the rows of", [
      // x's: each wgmma multiplies rows of x by all of the tile's w rows, its
      // accumulators hold rows of the output tile.
      I32EnumAttrCase<"x_w", 0>,
      // w's: each wgmma multiplies rows of w by all of the tile's x rows,
      // its accumulators hold the output tile transposed (W X^T).
      I32EnumAttrCase<"w_x", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_MmaKind : I32EnumAttr<"MmaKind",
    "the tensor-core multiply of an mma_sync or wgmma kernel", [
      // mma.sync m16n8k16 on bf16 / f16 tensors.
      I32EnumAttrCase<"bf16", 0>,
      I32EnumAttrCase<"f16", 1>,
      // mma.sync m16n8k8 on f32 operands rounded to tf32.
      I32EnumAttrCase<"tf32", 2>,
      // fp32-accurate: each f32 operand split into tf32 high and low parts,
      // three m16n8k8 products.
      I32EnumAttrCase<"tf32x3", 3>,
      // f32 operands rounded to bf16 / f16 in registers, m16n8k16.
      I32EnumAttrCase<"f32_as_bf16", 4>,
      I32EnumAttrCase<"f32_as_f16", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_Chip : I32EnumAttr<"Chip",
    "an NVIDIA GPU architecture fusion generates code for", [
      I32EnumAttrCase<"sm_80", 80>,
      I32EnumAttrCase<"sm_86", 86>,
      I32EnumAttrCase<"sm_89", 89>,
      I32EnumAttrCase<"sm_90", 90>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::fusion";
}

def Fusion_TargetAttr : AttrDef<Fusion_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the GPU the kernels of a module are generated for";
  let description = [{
    Set on the module (as `fusion.target`) by `fusion-select-gemm-config`,
    or written by hand; the lowering-config verifier
    (`fusion-verify-lowering`) checks the GEMM configs of the module's
    fused ops and its launches against the chip's resources
    (`Codegen/Config/Chips.h`: shared memory per block, SM count), and
    `fusion-lower-to-gpu` targets its kernels at it.

    Example: `module attributes {fusion.target = #fusion.target<sm_90>}`
  }];
  let parameters = (ins EnumParameter<Fusion_Chip>:$chip);
  let assemblyFormat = "`<` $chip `>`";
  let extraClassDeclaration = [{
    /// The name of the discardable attribute holding a module's target.
    static ::llvm::StringRef getAttrName() { return "fusion.target"; }
    /// The target of the closest enclosing op that has one, or null.
    static TargetAttr lookup(::mlir::Operation *op);
  }];
}

def Fusion_GemmConfigAttr : AttrDef<Fusion_Dialect, "GemmConfig"> {
  let mnemonic = "gemm_config";
  let summary = "how one fused GEMM is lowered: backend, MMA, tiling";
  let description = [{
    The `gemm` of a `fusion.fused_linear`'s `#fusion.lowering` (and the
    config of each of its batch configs), set by
    `fusion-select-gemm-config` or written by hand (a hand-written lowering
    is kept); `fusion-lower-to-gpu` lowers the op exactly as it says.

    - `cublaslt`: a cuBLASLt GEMM, then generated epilogue kernels.
    - `mma_sync`: one generated tensor-core kernel (cp.async pipeline,
      ldmatrix, mma.sync of the `mma` kind) with the epilogue in registers.
    - `simt`: the same kernel with f32 fma on the CUDA cores (f32 tensors
      in fp32 only).
    - `wgmma`: one generated Hopper kernel (sm_90) whose blocks stride
      over the output tiles (a block an SM, unless the epilogue stages
      its tile): a producer warpgroup issues TMA loads into a ring of
      `stages` shared-memory buffers, `warps / 4` consumer warpgroups
      multiply with wgmma (each 64 or 128 rows of the tile: one or two m64
      wgmmas a K step, with their own accumulators), mbarriers hand the
      buffers over; the epilogue runs on the accumulators while the
      producer loads the next tile. `warps` counts the consumer warps (one
      column of warpgroups: `warps = 8x1` for a 128-row tile of two
      warpgroups, `warps = 4x1` for a 64- or 128-row tile of one).

      `schedule = pingpong` (wgmma only; `cooperative` is the default and
      is not printed): two consumer warpgroups of `warps = 4x1` take the
      block's tiles in turn, each a whole tile, so that one's
      epilogue runs while the other's wgmmas keep the tensor cores busy
      (CUTLASS's ping-pong kernel schedule). The epilogue must not read
      its tile back (row reductions over spans of whole 8-column blocks).

      `cluster = 2` (wgmma only; 1, the default, is not printed): blocks
      run in clusters of two that take output tiles of adjacent block
      rows and the same block column, and each loads half of the shared
      w tile into both blocks' stages (TMA multicast), so that L2 serves
      w once per pair. The epilogue must not read its tile back (the
      peer's loads land in the ring).

      `operands = w_x` (wgmma, cooperative, unclustered, no row operands
      or row reductions, no 3xTF32; `x_w` is the default and is not
      printed): each wgmma multiplies w's rows by x's, so that a consumer
      warpgroup's accumulators hold 64 or 128 columns of the tile
      (`warps / 4` warpgroups split `tile`'s N, 64 columns per m64 wgmma)
      by all its rows (the wgmma's N is `tile`'s M). Each quad of lanes
      then holds whole columns of the tile, and a training batch norm's
      column moments sum within the lanes and their quad instead of across
      the warps; the 16-bit output leaves through movmatrix transposes.

      `split_k = S` (wgmma, cooperative, unclustered; 1, the default, is
      not printed): blocks run in clusters of S (2 or 4) that share each
      output tile, each multiplying its share of the K slices (S must
      divide them); the others store their sums into shared memory of the
      cluster's first block (distributed shared memory), which adds them
      in the order of the blocks' ranks and runs the epilogue. Tiles that
      leave most SMs idle (small batches, narrow outputs) then multiply on
      S times as many SMs. The epilogue must not read its tile back.

      `tile_scheduler = per_block` (wgmma, not ping-pong; `persistent`,
      the default, is not printed): the kernel is launched with a block a
      tile instead of as many blocks as the GPU holds at once, each
      striding over a fixed share of the tiles. The GPU's block scheduler
      then starts each tile on the next multiprocessor that frees up, so
      that a kernel sharing the GPU with others (NCCL's beside a DDP
      backward) loses the multiprocessors they hold, not the tiles of the
      blocks waiting for them; each block pays its own set-up and no tile's
      epilogue overlaps the next tile's loads. (A kernel whose epilogue
      stages its tile in the ring is launched so either way.)

      A wgmma kernel in 3xTF32 reads x's high and low tf32 parts from
      registers and w's from shared memory, and sums each pair of K slices
      from zero before adding it to the running sums.

    The generated kernels take a thread-block `tile` (BMxBN), a grid of
    `warps` (WMxWN), `stages` of cp.async pipeline and a rasterization
    group of `group_m` block rows. The attribute's verifier checks the
    tiling's shape rules; the lowering-config verifier
    (`fusion-verify-lowering`, run by `fusion-select-gemm-config` and
    `fusion-lower-to-gpu`) checks the MMA kind against the op's types and
    precision, and the shared memory against the module's
    `#fusion.target`.

    Examples: `#fusion.gemm_config<cublaslt>`,
    `#fusion.gemm_config<mma_sync, mma = bf16, tile = 128x256, warps = 2x4, stages = 4, group_m = 8>`,
    `#fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8>`,
    `#fusion.gemm_config<wgmma, mma = bf16, tile = 128x128, warps = 4x1, stages = 6, group_m = 8, schedule = pingpong, cluster = 2>`,
    `#fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, operands = w_x>`,
    `#fusion.gemm_config<wgmma, mma = tf32x3, tile = 16x64, warps = 4x1, stages = 16, group_m = 8, operands = w_x, split_k = 2>`,
    `#fusion.gemm_config<wgmma, mma = bf16, tile = 128x256, warps = 8x1, stages = 4, group_m = 8, tile_scheduler = per_block>`
  }];
  let parameters = (ins EnumParameter<Fusion_GemmBackend>:$backend,
                        OptionalParameter<"std::optional<MmaKind>">:$mma,
                        DefaultValuedParameter<"int64_t", "0">:$blockM,
                        DefaultValuedParameter<"int64_t", "0">:$blockN,
                        DefaultValuedParameter<"int64_t", "0">:$warpsM,
                        DefaultValuedParameter<"int64_t", "0">:$warpsN,
                        DefaultValuedParameter<"int64_t", "0">:$stages,
                        DefaultValuedParameter<"int64_t", "0">:$groupM,
                        DefaultValuedParameter<"WgmmaSchedule",
                            "WgmmaSchedule::cooperative">:$schedule,
                        DefaultValuedParameter<"int64_t", "1">:$clusterM,
                        DefaultValuedParameter<"WgmmaOperands",
                            "WgmmaOperands::x_w">:$operands,
                        DefaultValuedParameter<"int64_t", "1">:$splitK,
                        DefaultValuedParameter<"TileScheduler",
                            "TileScheduler::persistent">:$tileScheduler);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "GemmBackend":$backend), [{
      return $_get($_ctxt, backend, std::nullopt, 0, 0, 0, 0, 0, 0,
                   WgmmaSchedule::cooperative, int64_t(1),
                   WgmmaOperands::x_w, int64_t(1),
                   TileScheduler::persistent);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether the GEMM is a generated kernel (mma_sync or simt).
    bool isGenerated() const { return getBackend() != GemmBackend::cublaslt; }
    bool isWgmma() const { return getBackend() == GemmBackend::wgmma; }
    /// Whether the kernel is a wgmma kernel in 3xTF32, whose producer
    /// warpgroup writes the remainders of the operand the wgmmas read from
    /// shared memory (w's, or x's with swapped operands) there.
    bool isWgmmaSplit() const {
      return isWgmma() && getMma() == MmaKind::tf32x3;
    }
    bool isPingpong() const {
      return getSchedule() == WgmmaSchedule::pingpong;
    }
    /// Whether each wgmma multiplies w's rows by x's (operands = w_x).
    bool swapsOperands() const {
      return getOperands() == WgmmaOperands::w_x;
    }
    /// wgmma: the rows of a consumer warpgroup's accumulators (64 per m64
    /// wgmma it issues each K step), rows of the tile or, where the
    /// operands are swapped, columns; and the columns of each wgmma (N).
    int64_t getWgmmaRowsPerWarpgroup() const {
      return (swapsOperands() ? getBlockN() : getBlockM()) * 4 / getWarpsM();
    }
    int64_t getWgmmaN() const {
      return swapsOperands() ? getBlockM() : getBlockN();
    }
    /// Whether blocks run in clusters that multicast w's tile.
    bool isClustered() const { return getClusterM() > 1; }
    /// Whether the kernel is launched with a block a tile.
    bool isPerBlock() const {
      return getTileScheduler() == TileScheduler::per_block;
    }
    /// Whether the blocks of a cluster share each tile's K slices.
    bool splitsK() const { return getSplitK() > 1; }
    /// The blocks of a cluster (multicast pairs or K shares).
    int64_t getClusterSize() const { return getClusterM() * getSplitK(); }
    /// Threads that compute one tile (its `warps`).
    int64_t getTileThreads() const { return 32 * getWarpsM() * getWarpsN(); }
    /// Threads of the block's consumers (all of them but a wgmma kernel's
    /// producer warpgroup): a ping-pong kernel's two warpgroups.
    int64_t getConsumerThreads() const {
      return getTileThreads() * (isPingpong() ? 2 : 1);
    }
    /// Threads of a block: a wgmma kernel adds its producer warpgroup.
    int64_t getThreads() const {
      return getConsumerThreads() + (isWgmma() ? 128 : 0);
    }
    int64_t getWarpTileM() const { return getBlockM() / getWarpsM(); }
    int64_t getWarpTileN() const { return getBlockN() / getWarpsN(); }
  }];
}

def Fusion_BatchGemmConfigAttr : AttrDef<Fusion_Dialect, "BatchGemmConfig"> {
  let mnemonic = "batch_gemm_config";
  let summary = "the GEMM config of a fused_linear for batches up to a size";
  let description = [{
    One entry of a `#fusion.lowering`'s `batches`, an array in increasing
    `max_rows`: a call whose batch (the row count M, known at run time) is
    at most `max_rows` launches the kernel of `config` instead of the
    lowering's `gemm`; the first entry that
    fits wins, and batches larger than every entry's get the op's config.

    `fusion-select-gemm-config` adds entries of narrower tiles where the
    op's tiles would leave more than half of the GPU's SMs without a tile
    (batch 128 with 16384 output columns: 64 tiles of 128x256 on the H100's
    132 SMs), so that twice as many blocks share the weight's streaming.
    The lowering-config verifier (`fusion-verify-lowering`, run by
    `fusion-select-gemm-config` and `fusion-lower-to-gpu`) checks each
    entry against the op as it checks
    the lowering's `gemm`, and that it keeps the op config's backend, its
    block rows where the op has a batch norm (whose moments are planned
    per block row; but for batches that one block row of the entry's
    tiles holds and the lowering's `epilogue_batch_norm` finishes), and
    the lowering's tile reductions' span.

    An op whose config is cuBLASLt's may have entries of one generated
    backend (no batch norm): small batches then launch that backend's
    kernels and larger ones cuBLASLt's GEMM, each writing the same output
    (`fusion-select-gemm-config` gives them to outputs that norms and
    softmax read after they are written, with `strategy=auto`).

    Example: `batches = [#fusion.batch_gemm_config<max_rows = 128, #fusion.gemm_config<wgmma, mma = tf32, tile = 128x128, warps = 8x1, stages = 4, group_m = 8>>]` in a `#fusion.lowering`
  }];
  let parameters = (ins "int64_t":$maxRows, "GemmConfigAttr":$config);
  let assemblyFormat = "`<` `max_rows` `=` $maxRows `,` qualified($config) `>`";
  let genVerifyDecl = 1;
}

def Fusion_TileReductionsAttr : AttrDef<Fusion_Dialect, "TileReductions"> {
  let mnemonic = "tile_reductions";
  let summary = "a generated GEMM computes its reader's reductions from its tiles";
  let description = [{
    The `tile_reductions` of a `fusion.fused_linear`'s `#fusion.lowering`
    with a generated GEMM config, set by `fusion-select-gemm-config` where
    the op's
    output is read by one row program (a `fusion.reduce` of its rows or
    groups of columns and the ops after it reading the same matrix or the
    row values) whose reductions the tiles can compute (see
    `TileReductions.h`), or written by hand. `fusion-lower-to-gpu` then
    has the GEMM kernel write each tile row's partials over spans of
    `span` columns, and the row program merge them in column order; the
    output matrix is written only if elementwise steps of the program read
    it (a softmax or norm), never for reductions alone. Without the
    attribute the kernel writes the output and the row program reads it.

    `span` is the tile width (whole rows, or groups of whole tiles) or the
    group width where groups tile a tile (whole 16-byte chunks). The
    lowering-config verifier checks it against the config and the output's
    width;
    `fusion-lower-to-gpu` rejects the op if its readers are no such row
    program.

    `min_rows` (default 1, not printed) is the smallest batch whose GEMM
    reduces its tiles: smaller batches, which end a batch config (the
    swapped-operand tiles of small batches, whose accumulators hold no rows
    of the tile), write the output and the row program reduces it; the
    host branches on the batch between the two.

    Example: `tile_reductions = <span = 64, min_rows = 33>` in a
    `#fusion.lowering`.
  }];
  let parameters = (ins "int64_t":$span,
                        DefaultValuedParameter<"int64_t", "1">:$minRows);
  let assemblyFormat =
      "`<` `span` `=` $span (`,` `min_rows` `=` $minRows^)? `>`";
  let builders = [
    AttrBuilder<(ins "int64_t":$span), [{
      return $_get($_ctxt, span, int64_t(1));
    }]>
  ];
}

def Fusion_EpilogueBatchNormAttr
    : AttrDef<Fusion_Dialect, "EpilogueBatchNorm"> {
  let mnemonic = "epilogue_batch_norm";
  let summary = "a generated GEMM finishes its training batch norm for small batches";
  let description = [{
    The `epilogue_batch_norm` of the `#fusion.lowering` of a
    `fusion.fused_linear` with a training batch-norm stage and a generated
    GEMM config, set by
    `fusion-select-gemm-config` (where the kernel's scratch for the
    coefficients fits beside the pipeline), or written by hand. A call
    whose batch (the row count M, known at run time) is at most `max_rows`
    fits one block row of the GEMM's tiles, so each tile's column moments
    are the batch's: its kernel (of the config the batch gets, see
    the lowering's `batches`: batch configs below `max_rows` have
    finishing kernels of their own) normalizes the output in its
    epilogue (the wgmma kernel in registers, the tiled kernel as its staged
    tile leaves), applies the elementwise op the batch norm feeds (if it is
    the norm's one reader), updates the running statistics of its columns
    and writes the output once. Larger batches, and calls without the
    attribute, take the GEMM kernel that writes the output and
    per-block-row moments, a finalize kernel and a normalizing pass. The
    selection leaves the attribute off where the op after the norm reads
    the norm's statistics, or where its columns would overflow the chip's
    shared memory; `fusion-verify-lowering` refuses it there.

    The lowering-config verifier checks that `max_rows` is positive and at
    most the config's block rows, that the op has a training batch norm and a
    generated config, and that every config that finishes some of these
    batches has operands = x_w.

    Example: `epilogue_batch_norm = <max_rows = 128>` in a
    `#fusion.lowering`.
  }];
  let parameters = (ins "int64_t":$maxRows);
  let assemblyFormat = "`<` `max_rows` `=` $maxRows `>`";
}

def Fusion_LoweringAttr : AttrDef<Fusion_Dialect, "Lowering"> {
  let mnemonic = "lowering";
  let summary = "how a fused_linear is lowered: its GEMM config and what "
                "goes with it";
  let description = [{
    A `fusion.fused_linear`'s lowering decisions, as one discardable
    attribute `fusion.lowering` (IREE's `lowering_config`): set by
    `fusion-select-gemm-config`, or written by hand (the selection keeps
    it), and consumed by `fusion-lower-to-gpu`.

    - `gemm`: the op's `#fusion.gemm_config`, that of every batch that no
      entry of `batches` takes;
    - `batches` (optional): `#fusion.batch_gemm_config` entries in
      increasing `max_rows`, the configs of small batches;
    - `tile_reductions` (optional): the GEMM computes its reader's
      reductions from its tiles;
    - `epilogue_batch_norm` (optional): the GEMM finishes its training batch
      norm for batches of one block row.

    The attribute's parts verify by themselves; the lowering-config
    verifier (`fusion-verify-lowering`, `Codegen/Config/Verifiers.h`)
    checks them together, against the op and the chip.

    Example: `fusion.lowering = #fusion.lowering<gemm = <wgmma, mma = bf16,
    tile = 128x256, warps = 8x1, stages = 4, group_m = 8>, batches =
    [#fusion.batch_gemm_config<max_rows = 64, #fusion.gemm_config<wgmma,
    mma = bf16, tile = 64x64, warps = 4x1, stages = 8, group_m = 8>>],
    tile_reductions = <span = 256>>`
  }];
  let parameters = (ins
      "GemmConfigAttr":$gemm,
      OptionalArrayRefParameter<"BatchGemmConfigAttr">:$batches,
      OptionalParameter<"TileReductionsAttr">:$tileReductions,
      OptionalParameter<"EpilogueBatchNormAttr">:$epilogueBatchNorm);
  // `gemm` first, then the optional parts in any order, each once.
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "GemmConfigAttr":$gemm), [{
      return $_get($_ctxt, gemm, ArrayRef<BatchGemmConfigAttr>(),
                   TileReductionsAttr(), EpilogueBatchNormAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The attribute's name on a fused_linear.
    static ::llvm::StringRef getAttrName() { return "fusion.lowering"; }
    /// The lowering of `op`, if it has one.
    static LoweringAttr of(::mlir::Operation *op) {
      return op->getAttrOfType<LoweringAttr>(getAttrName());
    }
  }];
}

#endif // FUSION_DIALECT_FUSION_IR_FUSIONATTRS_TD
