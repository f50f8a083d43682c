//===- Passes.td - lowering configs of fused ops -----------*- tablegen -*-===//

#ifndef FUSION_CODEGEN_CONFIG_PASSES_TD
#define FUSION_CODEGEN_CONFIG_PASSES_TD

include "mlir/Pass/PassBase.td"

def SelectGemmConfig : Pass<"fusion-select-gemm-config", "::mlir::ModuleOp"> {
  let summary = "Decide how each fused GEMM is lowered: set the module's "
                "#fusion.target and each fused_linear's #fusion.lowering";
  let description = [{
    The lowering decisions of the GPU backends, made once and kept in IR,
    where they can be printed, tested and overridden:

    - The module gets `fusion.target = #fusion.target<CHIP>` from `target`,
      unless it has one already; a module whose target differs from an
      explicit `target` is refused.
    - Each `fusion.fused_linear` without a `fusion.lowering` gets one
      (`#fusion.lowering<gemm = CONFIG, ...>`); a lowering already there
      (written by hand) is kept as it is.
    - An op whose new config is a generated GEMM gets tile reductions
      (`tile_reductions = <span = S>` in its lowering) where
      its output is read by one row program whose reductions the tiles can
      compute (docs/architecture.md, "Reductions from the GEMM's tiles"):
      the kernel then writes partials per span of S columns, and the
      output only if the program's elementwise steps read it.
    - A dual GEMM (`dual_weight`) gets the wgmma kernel's dual config
      (cooperative 128x128 tiles, one config for every batch) where the
      strategy gives it the wgmma kernel and that computes it (not 3xTF32);
      elsewhere it is split into two fused_linear ops, the dual product a
      row operand of the other's epilogue, each then selected as usual.

    `strategy` picks the backend: `cublas` (cuBLASLt + epilogue kernels),
    `tiled` (a generated kernel: `mma_sync` with the MMA kind the op's types
    and precision need, or `simt` for f32 in fp32 with `fp32-math=simt`),
    `wgmma` (the generated Hopper kernel, for sm_90; ops it cannot compute,
    f32 tensors in bf16/f16 precision or K rows that are not multiples of
    16 bytes, get cuBLASLt), or
    `auto`, the measured rule of docs/architecture.md: on sm_90 the wgmma
    kernel for f32 tensors in fp32 (3xTF32), for outputs that only
    reductions its tiles compute read (reduced from the tiles, never
    written) and
    for tf32 and 16-bit multiplies whose output no reduction reads and
    whose epilogue holds no accurate power (libdevice's powf, long), no
    special function (`fusion.special`, called out of line), with 16-bit
    results no accurate tangent, and no more than about 200 instructions
    an element (functions about 20, correctly rounded divisions 10, other
    ops 1);
    cuBLASLt for the rest (outputs written for norms or softmax), whose
    small batches (those the wgmma kernel's batch configs take, below;
    no batch norm stage) get the wgmma kernels' batch configs beside
    cuBLASLt's config: the host branches on the batch; on
    older chips the `mma_sync` kernel for f32 in fp32 with
    3xTF32 (faster than cuBLAS's SGEMM, and more accurate), cuBLASLt for
    everything else.

    The tiling of a generated kernel comes from a heuristic: 128x256 blocks
    of 2x4 warps (128x128 when N <= 128; 128x128 of 2x4 warps for 3xTF32,
    SIMT and K rows not 16-byte aligned; wgmma: 128x256 with two consumer
    warpgroups, 128x128 for 3xTF32), and as many pipeline stages (up to
    4) as the chip's shared memory holds. `tile`, `warps` and `stages`
    override it; the config's verifier range-checks the result.
    `schedule=pingpong` gives wgmma kernels two consumer warpgroups that
    take whole tiles in turn (128x128, two m64n128 wgmmas a K step each;
    64x128 for 3xTF32; up to 6 stages), where tile reductions allow it.
    `cluster=2` runs the blocks of wgmma kernels in clusters of two that
    multicast w's tiles, where tile reductions allow it (batch configs stay
    unclustered). Both are opt-in: neither measured faster on the H100. A
    cooperative, unclustered wgmma kernel of a training batch norm (not
    3xTF32, no row operands, the heuristic tiling) swaps its operands
    (`operands = w_x`: each wgmma multiplies w's rows by x's, and a quad of
    lanes holds whole columns, whose moments it sums without the warps'
    merge); its batch configs keep `x_w`, and batches of one block row get
    one, which the kernel that finishes the batch norm takes.
    `swap-operands=false` turns this off. `tile-scheduler=per_block`
    launches cooperative wgmma kernels (and their batch configs) with a
    block a tile instead of persistent blocks (`tile_scheduler =
    per_block`; not with `schedule=pingpong`).

    The batch M is known at run time only. Where a batch of a few block
    rows would leave more than half of the chip's SMs without a tile
    (batch 128 with 16384 output columns: 64 tiles of 128x256 on the
    H100's 132 SMs), the op's lowering also gets `batches`: for
    batches up to `max_rows` rows, narrower tiles (wgmma: halved down to
    64 columns, then 64x64 tiles of one consumer warpgroup where the op has
    no batch norm; tiled: 128x128
    blocks of 2x2 warps), twice as many blocks that still fit the GPU at
    once; and batches up to 64 rows, which would leave half of a 128-row
    tile empty, 64-row tiles of the narrowest config's columns (a training
    batch norm's too, whose epilogue batch norm finishes them; no other
    batch norm); batches up to 32 and 16 rows tiles of 32 and
    16 rows by 64 of w's with swapped operands (`operands = w_x`: each
    wgmma's N is the batch's rows) where those fit one wave, else up to 32
    rows 32x128 where those do (no batch norm; 3xTF32 only 64 of w's rows
    wide). Their accumulators hold no rows of the tile: with tile
    reductions those batches write the output and the row program
    reduces it (the tile reductions' `min_rows` is 33).
    wgmma's narrower tiles take rings as deep as shared memory holds, up
    to 8 stages of 128-row tiles, 12 of 64x64 and 16 of the swapped ones:
    a small batch's main loop waits on its loads. The lowering launches the first entry
    whose `max_rows` the batch fits, the op's config above them. An op of
    static batch gets the fitting config as its lowering's `gemm`
    instead; `batch-configs=false` (or a tiling in the options) turns this
    off. Entries that would change the op's tile reductions' span
    are not made; wgmma tiles whose spans are the whole tile (row
    reductions, groups of whole tiles) reduce spans of 64 columns instead,
    where that gives the op batch configs.

    A wgmma config of a batch config entry, or of a static batch, whose
    tiles at its batch would still leave more than half of the SMs idle
    (at most 64 of the H100's 132: 4096 output columns in 64-wide tiles)
    and whose main loop is bound by its arithmetic (3xTF32 tiles, at least
    16 K slices a block; tf32 tiles of 128 rows, at least 32) gets
    `split_k = S`, the largest of 4 and 2 up to `max-split-k` (2 unless
    asked: clusters of 4 measured slower) whose S times as many blocks fit
    the SMs and that divides the K slices (the
    cooperative schedule, unclustered, no tile reductions staged in the
    ring): clusters of S blocks share each tile's K slices and the first
    adds the others' sums. The first block rows of an entry whose later
    rows fill the SMs get entries of their own (with `max-split-k=4`, 4
    blocks a tile where those fit the SMs, then 2). Small batches of tf32
    and 16-bit tiles of 16-64 rows stream w at the DRAM's rate from the
    SMs they have and keep one block a tile.

    An op with a training batch norm and a generated config also gets
    `epilogue_batch_norm = <max_rows = BM>`, BM its block rows, where the
    kernel's scratch for the coefficients fits beside every config's
    pipeline (and, for a static batch, where the batch fits): batches that one block row of tiles holds are normalized by
    the GEMM kernel's epilogue (one kernel instead of the GEMM, the finalize
    kernel and the normalizing pass).

    ```mlir
    // fusion-opt --fusion-select-gemm-config="target=sm_90 strategy=tiled"
    module attributes {fusion.target = #fusion.target<sm_90>} {
      %y = fusion.fused_linear %x, %w ... epilogue { ... }
          {fusion.lowering = #fusion.lowering<gemm = <mma_sync,
           mma = tf32x3, tile = 128x128, warps = 2x4, stages = 4,
           group_m = 8>, tile_reductions = <span = 128>>} : ...
      %max = fusion.reduce max %y : tensor<?x1000xf32> -> tensor<?x1xf32> ...
    }
    ```
  }];
  let options = [
    Option<"target", "target", "::mlir::fusion::Chip",
           /*default=*/"::mlir::fusion::Chip::sm_80",
           "the GPU the kernels are generated for",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::Chip::sm_80, "sm_80", "A100"),
             clEnumValN(::mlir::fusion::Chip::sm_86, "sm_86", "RTX 30, A6000"),
             clEnumValN(::mlir::fusion::Chip::sm_89, "sm_89", "RTX 40, L40"),
             clEnumValN(::mlir::fusion::Chip::sm_90, "sm_90", "H100, H200"))}]>,
    Option<"strategy", "strategy", "::mlir::fusion::GemmStrategy",
           /*default=*/"::mlir::fusion::GemmStrategy::Auto",
           "how fused GEMMs run",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::GemmStrategy::cublas, "cublas",
                        "cuBLASLt GEMM + generated epilogue kernels"),
             clEnumValN(::mlir::fusion::GemmStrategy::tiled, "tiled",
                        "one generated kernel, epilogue in registers"),
             clEnumValN(::mlir::fusion::GemmStrategy::wgmma, "wgmma",
                        "one generated Hopper kernel (TMA, wgmma), "
                        "epilogue in registers; sm_90"),
             clEnumValN(::mlir::fusion::GemmStrategy::Auto, "auto",
                        "per op, by the measured rule"))}]>,
    Option<"fp32Math", "fp32-math", "::mlir::fusion::Fp32Math",
           /*default=*/"::mlir::fusion::Fp32Math::tf32x3",
           "generated kernels, f32 GEMMs in fp32",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::Fp32Math::tf32x3, "tf32x3",
                        "tensor cores, split operands"),
             clEnumValN(::mlir::fusion::Fp32Math::simt, "simt",
                        "f32 fma on the CUDA cores"))}]>,
    ListOption<"tile", "tile", "int64_t",
               "generated kernels: the block tile, BM,BN (default: heuristic)">,
    ListOption<"warps", "warps", "int64_t",
               "generated kernels: warps along M and N, WM,WN (default: "
               "heuristic)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "generated kernels: cp.async pipeline depth (0: heuristic)">,
    Option<"schedule", "schedule", "::mlir::fusion::WgmmaSchedule",
           /*default=*/"::mlir::fusion::WgmmaSchedule::cooperative",
           "wgmma kernels: how the consumer warpgroups share the tiles",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::WgmmaSchedule::cooperative,
                        "cooperative", "together, each its rows of every tile"),
             clEnumValN(::mlir::fusion::WgmmaSchedule::pingpong, "pingpong",
                        "in turn, whole tiles each"))}]>,
    Option<"tileScheduler", "tile-scheduler",
           "::mlir::fusion::TileScheduler",
           /*default=*/"::mlir::fusion::TileScheduler::persistent",
           "wgmma kernels: how the blocks take their tiles",
           [{::llvm::cl::values(
             clEnumValN(::mlir::fusion::TileScheduler::persistent,
                        "persistent", "as many blocks as the GPU holds, each "
                        "a fixed stride of the tiles"),
             clEnumValN(::mlir::fusion::TileScheduler::per_block, "per_block",
                        "a block a tile"))}]>,
    Option<"cluster", "cluster", "int64_t", /*default=*/"1",
           "wgmma kernels: blocks a cluster, which multicast w's tiles (1 "
           "or 2)">,
    Option<"swapOperands", "swap-operands", "bool", /*default=*/"true",
           "wgmma kernels of training batch norms: each wgmma multiplies w's "
           "rows by x's (operands = w_x), so that quads of lanes hold whole "
           "columns">,
    Option<"batchConfigs", "batch-configs", "bool", /*default=*/"true",
           "generated kernels: narrower tiles for batches whose tiles leave "
           "more than half of the SMs idle (a lowering's batches; "
           "not with tile, warps or stages)">,
    Option<"maxSplitK", "max-split-k", "int64_t", /*default=*/"2",
           "wgmma kernels of batch configs and static batches whose tiles "
           "leave more than half of the SMs idle: at most this many blocks "
           "share a tile's K slices (split_k: 1, 2 or 4; 4 measured slower "
           "than 2)">
  ];
  let dependentDialects = ["::mlir::fusion::FusionDialect"];
}

def VerifyLowering : Pass<"fusion-verify-lowering"> {
  let summary = "Check each fused op's lowering attributes against the "
                "generated kernels and the target chip, and each "
                "fusion_rt.launch against that chip";
  let description = [{
    The lowering-config verifier (`Codegen/Config/Verifiers.h`). The
    dialects' verifiers check what the IR says by itself: a
    `#fusion.gemm_config`'s tiling, a `#fusion.batch_gemm_config`'s rows.
    This pass checks what needs the op, the kernel library or the chip of
    the enclosing `#fusion.target`:

    - a `fusion.lowering`'s `gemm` config: its MMA kind against the op's
      types and precision, its K rows' alignment and slices, and its shared
      memory against the chip;
    - its `tile_reductions` against the config and the op's output;
    - its `batches` against the config and tile reductions, each entry as a
      config of its own;
    - its `epilogue_batch_norm` against the op's batch norm stage and the
      configs;
    - a `fusion_rt.launch`'s shared memory and programmatic dependent
      launch against the chip.

    `fusion-select-gemm-config` and `fusion-lower-to-gpu` run the same
    checks on what they keep, choose and lower; this pass runs them on
    any module (hand-written configs, tests).
  }];
}

#endif // FUSION_CODEGEN_CONFIG_PASSES_TD
