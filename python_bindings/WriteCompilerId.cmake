# Writes the SHA-256 of the compiler extension to OUTPUT: the identity of the
# compiler in the keys of the compiled-library cache (fusion/cache.py), which
# machines without the compiler read too.
file(SHA256 "${EXTENSION}" id)
file(WRITE "${OUTPUT}" "${id}\n")
