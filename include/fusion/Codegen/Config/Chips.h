//===- Chips.h - the chips fusion generates code for ------------*- C++ -*-===//
//
// What the config selection, the lowering-config verifier and the kernel
// builders need to know of each #fusion.target chip.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_CODEGEN_CONFIG_CHIPS_H
#define FUSION_CODEGEN_CONFIG_CHIPS_H

#include "fusion/Dialect/Fusion/IR/FusionAttrs.h"

#include <string>

namespace mlir::fusion {

/// What fusion needs to know of a chip.
struct ChipInfo {
  Chip chip;
  /// The most dynamic shared memory one block may use (opt-in), in bytes.
  int64_t maxSharedBytesPerBlock;
  /// Streaming multiprocessors of the chip's reference part.
  int64_t smCount;
  /// cp.async, ldmatrix and mma.sync of bf16/f16/tf32 (sm_80 and newer).
  bool hasMmaSync;
  /// TMA, mbarrier transactions and wgmma (sm_90, as its arch-specific
  /// sm_90a target).
  bool hasWgmma;
  /// Programmatic dependent launch (griddepcontrol, sm_90): a kernel may
  /// start while the stream's previous one finishes.
  bool hasGridDependencyControl;
};

const ChipInfo &getChipInfo(Chip chip);
/// "sm_80, sm_86, sm_89, sm_90", for diagnostics.
std::string getSupportedChipList();

} // namespace mlir::fusion

#endif // FUSION_CODEGEN_CONFIG_CHIPS_H
