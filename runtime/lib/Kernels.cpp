//===- Kernels.cpp - loading embedded kernels and launching them ----------===//
//
// Fatbins are loaded as context-independent CUDA libraries: the runtime
// loads them into each device's context on first use there, so one library
// serves every device of the process.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <map>
#include <mutex>
#include <utility>

using namespace fusion::runtime;

/// The kernel `name` of `image`, allowed `sharedBytes` of dynamic shared
/// memory on `device`.
static int32_t getKernel(const void *image, const char *name, int device,
                         int32_t sharedBytes, cudaKernel_t *kernel) {
  static std::mutex mutex;
  static std::map<const void *, cudaLibrary_t> libraries;
  static std::map<std::pair<const void *, std::string>, cudaKernel_t> kernels;
  // Kernels whose shared-memory limit is raised, per device.
  static std::map<std::pair<cudaKernel_t, int>, int32_t> sharedLimits;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(image, std::string(name));
  auto raiseLimit = [&]() -> int32_t {
    // Beyond 48 KiB a kernel must opt in, per device.
    if (sharedBytes <= 48 * 1024)
      return FUSION_SUCCESS;
    int32_t &limit = sharedLimits[{*kernel, device}];
    if (limit >= sharedBytes)
      return FUSION_SUCCESS;
    if (int32_t status = checkCuda(
            cudaKernelSetAttributeForDevice(
                *kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                sharedBytes, device),
            "cudaKernelSetAttributeForDevice (shared memory of a tiled "
            "kernel; sm_80 or newer needed)"))
      return status;
    limit = sharedBytes;
    return FUSION_SUCCESS;
  };
  if (auto it = kernels.find(key); it != kernels.end()) {
    *kernel = it->second;
    return raiseLimit();
  }
  cudaLibrary_t &library = libraries[image];
  if (!library) {
    if (int32_t status = checkCuda(
            cudaLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr,
                                nullptr, 0),
            "cudaLibraryLoadData (the kernels need the GPU of the "
            "library's --target or newer; Hopper (wgmma) kernels run on "
            "sm_90 GPUs alone)")) {
      libraries.erase(image);
      return status;
    }
  }
  if (int32_t status = checkCuda(cudaLibraryGetKernel(kernel, library, name),
                                 "cudaLibraryGetKernel"))
    return status;
  kernels[key] = *kernel;
  return raiseLimit();
}

extern "C" int32_t __fusion_rt_launch(const void *image, const char *name,
                                      int64_t gridX, int64_t gridY,
                                      int32_t blockX, int32_t sharedBytes,
                                      void *stream, void **args) {
  if (gridX <= 0 || gridY <= 0)
    return FUSION_SUCCESS; // Nothing to do for an empty tensor.
  if (gridX > 0x7fffffff || gridY > 65535)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string("grid of kernel ") + name + " is too large");
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  cudaKernel_t kernel;
  if (int32_t status =
          getKernel(image, name, guard.device(), sharedBytes, &kernel))
    return status;
  dim3 grid(static_cast<unsigned>(gridX), static_cast<unsigned>(gridY));
  return checkCuda(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                    grid, dim3(blockX), args,
                                    static_cast<size_t>(sharedBytes),
                                    static_cast<cudaStream_t>(stream)),
                   name);
}
