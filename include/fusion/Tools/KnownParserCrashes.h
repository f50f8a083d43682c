//===- KnownParserCrashes.h - inputs that crash upstream's parser -*- C++ -*-===//
//
// Inputs that crash MLIR 22's parser instead of getting a diagnostic, found
// by mutation testing, so that fusion's tools refuse them before parsing
// (docs/known-issues.md). Header-only: the tools share it without a library.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_TOOLS_KNOWNPARSERCRASHES_H
#define FUSION_TOOLS_KNOWNPARSERCRASHES_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>

namespace mlir::fusion {

/// The offset of the first dense array of `index` (`array<index: 1>`) in
/// `text` outside comments and string literals, or StringRef::npos. Dense
/// arrays hold i1 to i64, f32 and f64; for `index` MLIR 22's attribute
/// parser dereferences null and the process dies.
inline size_t findDenseIndexArray(llvm::StringRef text) {
  // The code only: comments and string literals blanked out, offsets kept.
  std::string code(text.size(), ' ');
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      code[i] = c;
      inString = false;
    } else if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), text.size()) - 1;
    } else {
      // MLIR's lexer skips NUL bytes (other than the buffer's end) as
      // whitespace: `array\0<index` is `array<index` to the parser.
      code[i] = c == '\0' ? ' ' : c;
    }
  }
  auto isIdentifierChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  llvm::StringRef view(code);
  for (size_t at = view.find("array"); at != llvm::StringRef::npos;
       at = view.find("array", at + 1)) {
    if (at > 0 && isIdentifierChar(view[at - 1]))
      continue;
    llvm::StringRef rest = view.drop_front(at + 5).ltrim();
    if (!rest.consume_front("<"))
      continue;
    rest = rest.ltrim();
    if (rest.consume_front("index") &&
        (rest.empty() || !isIdentifierChar(rest[0])))
      return at;
  }
  return llvm::StringRef::npos;
}

/// Reports, at its position, the first input in `buffer` known to crash the
/// parser; returns whether there was one.
inline bool reportKnownParserCrash(const llvm::MemoryBuffer &buffer) {
  size_t offset = findDenseIndexArray(buffer.getBuffer());
  if (offset == llvm::StringRef::npos)
    return false;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(
      llvm::errs(),
      llvm::SMLoc::getFromPointer(buffer.getBufferStart() + offset),
      llvm::SourceMgr::DK_Error,
      "dense arrays of 'index' are not supported (elements must be i1 to "
      "i64, f32 or f64): MLIR 22's parser crashes on them, so the input is "
      "refused before parsing (docs/known-issues.md)");
  return true;
}

} // namespace mlir::fusion

#endif // FUSION_TOOLS_KNOWNPARSERCRASHES_H
