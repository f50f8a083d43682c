# Writes the compiler's identity to OUTPUT: the SHA-256 of the compiler
# extension and of the runtime archive it links into every library. It is
# part of the keys of the compiled-library cache (fusion/cache.py), which
# machines without the compiler read too.
file(SHA256 "${EXTENSION}" extension)
if(RUNTIME)
  file(SHA256 "${RUNTIME}" runtime)
endif()
string(SHA256 id "${extension}${runtime}")
file(WRITE "${OUTPUT}" "${id}\n")
