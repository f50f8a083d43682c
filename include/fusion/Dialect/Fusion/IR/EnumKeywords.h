//===- EnumKeywords.h - enum cases written as bare keywords -----*- C++ -*-===//
//
// The assembly of the dialect's enums where an op or attribute writes a
// case as a bare keyword (`precision tf32`, `weight_layout in_out`,
// `#fusion.gemm_config<wgmma, ...>`): one parser, whose error lists the
// cases.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_DIALECT_FUSION_IR_ENUMKEYWORDS_H
#define FUSION_DIALECT_FUSION_IR_ENUMKEYWORDS_H

#include "mlir/IR/OpImplementation.h"

namespace mlir::fusion {

/// A keyword naming a case of `EnumT`, into `value`; else an error naming
/// `what` and the `expected` cases.
template <typename EnumT>
ParseResult parseEnumKeyword(AsmParser &parser, EnumT &value, StringRef what,
                             StringRef expected) {
  StringRef name;
  SMLoc nameLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<EnumT> symbol = symbolizeEnum<EnumT>(name);
  if (!symbol)
    return parser.emitError(nameLoc) << "unknown " << what << " '" << name
                                     << "' (expected " << expected << ")";
  value = *symbol;
  return success();
}

/// The same into an enum attribute `attr` of `AttrT`.
template <typename AttrT>
ParseResult parseEnumAttrKeyword(AsmParser &parser, AttrT &attr, StringRef what,
                                 StringRef expected) {
  decltype(std::declval<AttrT>().getValue()) value;
  if (parseEnumKeyword(parser, value, what, expected))
    return failure();
  attr = AttrT::get(parser.getContext(), value);
  return success();
}

} // namespace mlir::fusion

#endif // FUSION_DIALECT_FUSION_IR_ENUMKEYWORDS_H
