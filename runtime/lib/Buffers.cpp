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

/// The device's workspace pool: private, so that its setting touches no one
/// else's allocations, and keeping freed memory, so that a call's workspace
/// costs no mapping of new memory once the first call has run.
static int32_t getPool(int device, cudaMemPool_t *pool) {
  static std::mutex mutex;
  static std::map<int, cudaMemPool_t> pools;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = pools.find(device); it != pools.end()) {
    *pool = it->second;
    return FUSION_SUCCESS;
  }
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  if (int32_t status = checkCuda(cudaMemPoolCreate(pool, &props),
                                 "cudaMemPoolCreate (workspace)"))
    return status;
  uint64_t keepAll = UINT64_MAX;
  if (int32_t status =
          checkCuda(cudaMemPoolSetAttribute(
                        *pool, cudaMemPoolAttrReleaseThreshold, &keepAll),
                    "cudaMemPoolSetAttribute (workspace)"))
    return status;
  pools[device] = *pool;
  return FUSION_SUCCESS;
}

extern "C" int32_t __fusion_rt_alloc(void *stream, int64_t bytes, void **ptr) {
  *ptr = nullptr;
  if (bytes <= 0)
    return FUSION_SUCCESS;
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  cudaMemPool_t pool;
  if (int32_t status = getPool(guard.device(), &pool))
    return status;
  return checkCuda(cudaMallocFromPoolAsync(ptr, bytes, pool,
                                           static_cast<cudaStream_t>(stream)),
                   "cudaMallocFromPoolAsync (workspace)");
}

extern "C" int32_t __fusion_rt_free(void *stream, void *ptr) {
  if (!ptr)
    return FUSION_SUCCESS;
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  return checkCuda(cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream)),
                   "cudaFreeAsync (workspace)");
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
