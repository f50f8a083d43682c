//===- Chips.cpp - the chips fusion generates code for --------------------===//

#include "fusion/Codegen/Config/Chips.h"

using namespace mlir;
using namespace mlir::fusion;

namespace {
// Shared memory per block with the opt-in carve-out (CUDA programming guide,
// compute capabilities table); SM counts of the A100, RTX A6000, L40S, H100.
constexpr ChipInfo kChips[] = {
    {Chip::sm_80, 163 * 1024, 108, true, false, false},
    {Chip::sm_86, 99 * 1024, 84, true, false, false},
    {Chip::sm_89, 99 * 1024, 142, true, false, false},
    {Chip::sm_90, 227 * 1024, 132, true, true, true},
};
} // namespace

const ChipInfo &mlir::fusion::getChipInfo(Chip chip) {
  for (const ChipInfo &info : kChips)
    if (info.chip == chip)
      return info;
  llvm_unreachable("every Chip has a ChipInfo");
}

std::string mlir::fusion::getSupportedChipList() {
  std::string list;
  for (const ChipInfo &info : kChips) {
    if (!list.empty())
      list += ", ";
    list += stringifyChip(info.chip).str();
  }
  return list;
}
