//===- Buffers.cpp - argument checks, workspace, copies -------------------===//

#include "Internal.h"

#include <cuda.h>

#include <map>
#include <mutex>

using namespace fusion::runtime;

/// cuMemGetAddressRange through the runtime's driver entry point, so the
/// library needs no link-time libcuda.
static CUresult getAddressRange(CUdeviceptr *base, size_t *size,
                                CUdeviceptr ptr) {
  using Fn = CUresult (*)(CUdeviceptr *, size_t *, CUdeviceptr);
  static Fn fn = [] {
    void *symbol = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &symbol, 12000,
                                         cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return Fn(nullptr);
    return reinterpret_cast<Fn>(symbol);
  }();
  return fn ? fn(base, size, ptr) : CUDA_ERROR_NOT_SUPPORTED;
}

extern "C" int32_t __fusion_rt_check_buffer(void *stream, const void *ptr,
                                            int64_t bytes, const char *name) {
  if (!ptr)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string(name) + " is a null pointer");
  if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string(name) + " is not 16-byte aligned");
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  cudaPointerAttributes attributes;
  if (int32_t status = checkCuda(cudaPointerGetAttributes(&attributes, ptr),
                                 "cudaPointerGetAttributes"))
    return status;
  if (attributes.type != cudaMemoryTypeDevice &&
      attributes.type != cudaMemoryTypeManaged)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string(name) + " is not device memory");
  if (attributes.device != guard.device())
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string(name) + " is on device " +
                    std::to_string(attributes.device) +
                    " but the stream runs on device " +
                    std::to_string(guard.device()));
  CUdeviceptr base = 0;
  size_t size = 0;
  auto address = reinterpret_cast<CUdeviceptr>(ptr);
  if (attributes.type == cudaMemoryTypeDevice &&
      getAddressRange(&base, &size, address) == CUDA_SUCCESS &&
      address + static_cast<uint64_t>(bytes) > base + size)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string(name) + " needs " + std::to_string(bytes) +
                    " bytes but its allocation has " +
                    std::to_string(base + size - address) + " from there");
  return FUSION_SUCCESS;
}

extern "C" int32_t __fusion_rt_check_size(int64_t value, int64_t minimum,
                                          const char *what) {
  if (value >= minimum)
    return FUSION_SUCCESS;
  return fail(FUSION_ERROR_INVALID_ARGUMENT,
              std::string(what) + " must be at least " +
                  std::to_string(minimum) + ", got " + std::to_string(value));
}

/// What the default pool keeps across synchronizations, at least: its
/// release threshold counts reserved bytes, which it maps in chunks of
/// megabytes, so that a threshold of a small workspace's bytes released
/// the chunk at every synchronization and the next call mapped it again
/// (run 36: 100 us a call more).
constexpr uint64_t kKeptBytesGranularity = 64ull << 20;

/// The device's default memory pool, with its release threshold raised
/// (never lowered) to at least `bytes` rounded up to
/// kKeptBytesGranularity, so that a workspace that large costs no mapping
/// of new memory once one has run, synchronizations between calls
/// included. The default pool is the one every library of the process
/// shares (each links its own copy of this runtime): a private pool for
/// each library kept its memory, and some 600 of them exhausted the pools a
/// process may create (run 36).
static int32_t getPool(int device, int64_t bytes, cudaMemPool_t *pool) {
  // The pool and the threshold this library has seen, a device: queried
  // once, so that calls under a CUDA graph capture make no pool calls. The
  // application or another library may raise the threshold further, which
  // only keeps more memory.
  struct Seen {
    cudaMemPool_t pool = nullptr;
    uint64_t threshold = 0;
  };
  static std::mutex mutex;
  static std::map<int, Seen> seen;
  std::lock_guard<std::mutex> lock(mutex);
  Seen &known = seen[device];
  if (!known.pool)
    if (int32_t status =
            checkCuda(cudaDeviceGetDefaultMemPool(&known.pool, device),
                      "cudaDeviceGetDefaultMemPool (workspace)"))
      return status;
  *pool = known.pool;
  if (static_cast<uint64_t>(bytes) <= known.threshold)
    return FUSION_SUCCESS;
  uint64_t wanted = (static_cast<uint64_t>(bytes) + kKeptBytesGranularity -
                     1) / kKeptBytesGranularity * kKeptBytesGranularity;
  uint64_t threshold = 0;
  if (int32_t status = checkCuda(
          cudaMemPoolGetAttribute(*pool, cudaMemPoolAttrReleaseThreshold,
                                  &threshold),
          "cudaMemPoolGetAttribute (workspace)"))
    return status;
  if (threshold < wanted) {
    threshold = wanted;
    if (int32_t status = checkCuda(
            cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold,
                                    &threshold),
            "cudaMemPoolSetAttribute (workspace)"))
      return status;
  }
  known.threshold = threshold;
  return FUSION_SUCCESS;
}

int32_t fusion::runtime::allocateWorkspace(int device, void *stream,
                                           int64_t bytes, void **ptr) {
  *ptr = nullptr;
  if (bytes <= 0)
    return FUSION_SUCCESS;
  cudaMemPool_t pool;
  if (int32_t status = getPool(device, bytes, &pool))
    return status;
  return checkCuda(cudaMallocFromPoolAsync(ptr, bytes, pool,
                                           static_cast<cudaStream_t>(stream)),
                   "cudaMallocFromPoolAsync (workspace)");
}

int32_t fusion::runtime::freeWorkspace(void *stream, void *ptr) {
  if (!ptr)
    return FUSION_SUCCESS;
  return checkCuda(cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream)),
                   "cudaFreeAsync (workspace)");
}

extern "C" int32_t __fusion_rt_alloc(void *stream, int64_t bytes, void **ptr) {
  *ptr = nullptr;
  if (bytes <= 0)
    return FUSION_SUCCESS;
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  return allocateWorkspace(guard.device(), stream, bytes, ptr);
}

extern "C" int32_t __fusion_rt_free(void *stream, void *ptr) {
  if (!ptr)
    return FUSION_SUCCESS;
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  return freeWorkspace(stream, ptr);
}

extern "C" int32_t __fusion_rt_copy(void *stream, void *dst, const void *src,
                                    int64_t bytes) {
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  return checkCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                   static_cast<cudaStream_t>(stream)),
                   "cudaMemcpyAsync");
}
