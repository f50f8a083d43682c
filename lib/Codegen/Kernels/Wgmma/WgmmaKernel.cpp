//===- WgmmaKernel.cpp - the wgmma kernel's shared state ------------------===//

#include "WgmmaKernel.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::wgmma;

bool wgmma::takesRowOperandFromRing(const GemmKernelProblem &p) {
  GemmConfigAttr c = p.config;
  int64_t tileK = kGemmRowBytes / elementBytes(p.elementType);
  return p.inputRowOperand && !p.dualWeight &&
         elementBytes(p.elementType) == 2 && p.n == p.k && !c.swapsOperands() &&
         !c.splitsK() && p.n % c.getBlockN() == 0 && c.getBlockN() % tileK == 0;
}

std::optional<unsigned> wgmma::residualThroughRing(const GemmKernelProblem &p) {
  GemmConfigAttr c = p.config;
  int64_t tileK = kGemmRowBytes / elementBytes(p.elementType);
  if (c.isPingpong() || c.isClustered() || c.splitsK() || c.swapsOperands() ||
      p.readsStagedTile() || takesRowOperandFromRing(p) || p.dualWeight ||
      p.n % 8 != 0 || c.getBlockN() % tileK != 0)
    return std::nullopt;
  for (auto [operand, source] : llvm::enumerate(p.rows))
    if (source.groups == p.n && !source.isDraw())
      return operand;
  return std::nullopt;
}

WgmmaKernel::WgmmaKernel(OpBuilder &builder, Location loc,
                         const GemmKernelProblem &problem)
    : IndexEmitter(builder, loc), p(problem), c(problem.config),
      mma(*problem.config.getMma()), layout(problem.sharedLayout()),
      elementType(problem.elementType),
      tileK(kGemmRowBytes / elementBytes(elementType)),
      warpgroups(c.getConsumerThreads() / kWarpgroupThreads),
      turns(c.getConsumerThreads() / c.getTileThreads()) {}

void WgmmaKernel::consumerBarrier() {
  Value id = i32(kConsumerBarrier);
  if (c.isPingpong())
    id = arith::AddIOp::create(
        b, loc, id,
        arith::IndexCastUIOp::create(b, loc, b.getI32Type(), consumer));
  NVVM::BarrierOp::create(b, loc, Type(), id, i32(c.getTileThreads()), {},
                          Value());
}

void WgmmaKernel::fenceSharedProxies() {
  NVVM::FenceProxyOp::create(
      b, loc,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void WgmmaKernel::setMaxRegisters(int32_t count,
                                  NVVM::SetMaxRegisterAction action) {
  if (warpgroups != 2)
    return;
  NVVM::SetMaxRegisterOp::create(
      b, loc, b.getI32IntegerAttr(count),
      NVVM::SetMaxRegisterActionAttr::get(b.getContext(), action));
}

void WgmmaKernel::setUp(gpu::GPUFuncOp kernel) {
  takeArguments(kernel);
  setUpThreadRoles();
  setUpSharedMemory();
  accumulatorType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(totalAccumulators(), b.getF32Type()));
  blockAccumulatorType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(blockAccumulators(), b.getF32Type()));
}

void WgmmaKernel::takeArguments(gpu::GPUFuncOp kernel) {
  auto args = kernel.getArguments();
  auto mapType = [&](int64_t boxRows) {
    return nvgpu::TensorMapDescriptorType::get(
        b.getContext(),
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
  // Each block of a cluster loads its share of w's tile (stored [K, N]: in
  // boxes of a K slice's rows).
  int64_t weightBoxRows =
      weightNMajor() ? tileK : c.getBlockN() / c.getClusterM();
  weightMapType = mapType(weightBoxRows);
  wMap = cast(args[1], weightMapType);
  // The maps after x's last-rows map: the dual weight's or the residual's
  // (which a dual GEMM does not take through the ring).
  unsigned maps = 3;
  if (p.dualWeight)
    dualMap = cast(args[maps++], mapType(weightBoxRows));
  if (residualThroughRing(p))
    residualMap = cast(args[maps++], mapType(c.getBlockM()));
  // The maps of w's parts past the first.
  if (!p.weightParts.empty()) {
    weightPartMaps.push_back(args[1]);
    for (size_t part = 1; part < p.weightParts.size(); ++part)
      weightPartMaps.push_back(args[maps++]);
  }
  epilogueArgs = GemmEpilogueArguments::take(p, args.drop_front(maps));
}

std::pair<Value, Value> WgmmaKernel::weightMapAt(Value column) {
  if (weightPartMaps.empty())
    return {wMap, column};
  // Parts start at whole tiles (whyNotWeightParts): the last part whose
  // first column is at or before `column` holds it.
  Value map = weightPartMaps.front(), first = idx(0);
  for (size_t part = 1; part < weightPartMaps.size(); ++part) {
    Value start = idx(p.partOffset(part));
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, column, start);
    map = LLVM::SelectOp::create(b, loc, past, weightPartMaps[part], map);
    first = select(past, start, first);
  }
  return {UnrealizedConversionCastOp::create(b, loc, weightMapType, map)
              .getResult(0),
          sub(column, first)};
}

void WgmmaKernel::prefetchWeightMaps() {
  if (weightPartMaps.empty())
    nvgpu::TmaPrefetchOp::create(b, loc, wMap, Value());
  for (Value map : weightPartMaps)
    nvgpu::TmaPrefetchOp::create(
        b, loc,
        UnrealizedConversionCastOp::create(b, loc, weightMapType, map)
            .getResult(0),
        Value());
  if (dualMap)
    nvgpu::TmaPrefetchOp::create(b, loc, dualMap, Value());
}

void WgmmaKernel::setUpThreadRoles() {
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
}

void WgmmaKernel::setUpSharedMemory() {
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
      nvgpu::MBarrierGroupType::get(b.getContext(), workgroup(),
                                    getWgmmaBarrierCount(c)));
}
