//===- Kernels.cpp - loading embedded kernels and launching them ----------===//
//
// Fatbins are loaded as context-independent CUDA libraries: the runtime
// loads them into each device's context on first use there, so one library
// serves every device of the process.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
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

/// The blocks of `kernel` that `device` holds at once: whole clusters of a
/// kernel compiled with a cluster size, whose blocks must share a GPC.
static int32_t countResidentBlocks(cudaKernel_t kernel, int device,
                                   int32_t blockX, int32_t sharedBytes,
                                   int64_t *count) {
  const void *func = reinterpret_cast<const void *>(kernel);
  cudaFuncAttributes attributes;
  if (int32_t status = checkCuda(cudaFuncGetAttributes(&attributes, func),
                                 "cudaFuncGetAttributes"))
    return status;
  if (attributes.requiredClusterWidth > 1) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(attributes.requiredClusterWidth);
    config.blockDim = dim3(blockX);
    config.dynamicSmemBytes = static_cast<size_t>(sharedBytes);
    int clusters = 0;
    if (int32_t status =
            checkCuda(cudaOccupancyMaxActiveClusters(&clusters, func, &config),
                      "cudaOccupancyMaxActiveClusters"))
      return status;
    if (clusters <= 0)
      return fail(FUSION_ERROR_CUDA,
                  "a cluster of the kernel does not fit the device");
    *count = static_cast<int64_t>(clusters) * attributes.requiredClusterWidth;
    return FUSION_SUCCESS;
  }
  int perMultiprocessor = 0, multiprocessors = 0;
  if (int32_t status =
          checkCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                        &perMultiprocessor, func, blockX,
                        static_cast<size_t>(sharedBytes)),
                    "cudaOccupancyMaxActiveBlocksPerMultiprocessor"))
    return status;
  if (int32_t status = checkCuda(
          cudaDeviceGetAttribute(&multiprocessors,
                                 cudaDevAttrMultiProcessorCount, device),
          "cudaDeviceGetAttribute (multiprocessors)"))
    return status;
  if (perMultiprocessor <= 0)
    return fail(FUSION_ERROR_CUDA,
                "a block of the kernel does not fit a multiprocessor");
  *count = static_cast<int64_t>(perMultiprocessor) * multiprocessors;
  return FUSION_SUCCESS;
}

/// countResidentBlocks, once per kernel, device and launch shape.
static int32_t getResidentBlocks(cudaKernel_t kernel, int device,
                                 int32_t blockX, int32_t sharedBytes,
                                 int64_t *blocks) {
  static std::mutex mutex;
  static std::map<std::tuple<cudaKernel_t, int, int32_t, int32_t>, int64_t>
      known;
  std::lock_guard<std::mutex> lock(mutex);
  int64_t &count = known[{kernel, device, blockX, sharedBytes}];
  if (!count)
    if (int32_t status =
            countResidentBlocks(kernel, device, blockX, sharedBytes, &count))
      return status;
  *blocks = count;
  return FUSION_SUCCESS;
}

extern "C" int32_t __fusion_rt_launch(const void *image, const char *name,
                                      int64_t gridX, int64_t gridY,
                                      int32_t blockX, int32_t sharedBytes,
                                      int32_t flags, void *stream,
                                      void **args) {
  if (gridX <= 0 || gridY <= 0)
    return FUSION_SUCCESS; // Nothing to do for an empty tensor.
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  cudaKernel_t kernel;
  if (int32_t status =
          getKernel(image, name, guard.device(), sharedBytes, &kernel))
    return status;
  if (flags & FUSION_LAUNCH_PERSISTENT) {
    int64_t resident = 0;
    if (int32_t status = getResidentBlocks(kernel, guard.device(), blockX,
                                           sharedBytes, &resident))
      return status;
    gridX = std::min(gridX, resident);
  }
  if (gridX > 0x7fffffff || gridY > 65535)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string("grid of kernel ") + name + " is too large");
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(gridX),
                        static_cast<unsigned>(gridY));
  config.blockDim = dim3(blockX);
  config.dynamicSmemBytes = static_cast<size_t>(sharedBytes);
  config.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute overlap = {};
  if (flags & FUSION_LAUNCH_OVERLAP_PREDECESSOR) {
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &overlap;
    config.numAttrs = 1;
  }
  return checkCuda(
      cudaLaunchKernelExC(&config, reinterpret_cast<const void *>(kernel),
                          args),
      name);
}
