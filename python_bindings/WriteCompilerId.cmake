# Writes the compiler's identity to OUTPUT: the SHA-256 of the compiler
# extension, of the runtime archive it links into every library and of the
# package's sources that turn a program into IR (FORMULAS, comma-separated:
# a changed formula changes the libraries as a changed compiler does). It is
# part of the keys of the compiled-library cache (fusion/cache.py), which
# machines without the compiler read too.
file(SHA256 "${EXTENSION}" extension)
if(RUNTIME)
  file(SHA256 "${RUNTIME}" runtime)
endif()
set(formulas "")
string(REPLACE "," ";" formula_files "${FORMULAS}")
foreach(formula_file IN LISTS formula_files)
  file(SHA256 "${formula_file}" formula)
  string(APPEND formulas "${formula}")
endforeach()
string(SHA256 id "${extension}${runtime}${formulas}")
file(WRITE "${OUTPUT}" "${id}\n")
