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

static int32_t getKernel(const void *image, const char *name,
                         cudaKernel_t *kernel) {
  static std::mutex mutex;
  static std::map<const void *, cudaLibrary_t> libraries;
  static std::map<std::pair<const void *, std::string>, cudaKernel_t> kernels;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(image, std::string(name));
  if (auto it = kernels.find(key); it != kernels.end()) {
    *kernel = it->second;
    return FUSION_SUCCESS;
  }
  cudaLibrary_t &library = libraries[image];
  if (!library) {
    if (int32_t status = checkCuda(
            cudaLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr,
                                nullptr, 0),
            "cudaLibraryLoadData (the kernels need sm_80 or newer)")) {
      libraries.erase(image);
      return status;
    }
  }
  if (int32_t status = checkCuda(cudaLibraryGetKernel(kernel, library, name),
                                 "cudaLibraryGetKernel"))
    return status;
  kernels[key] = *kernel;
  return FUSION_SUCCESS;
}

extern "C" int32_t __fusion_rt_launch(const void *image, const char *name,
                                      int64_t gridX, int64_t gridY,
                                      int32_t blockX, void *stream,
                                      void **args) {
  if (gridX <= 0 || gridY <= 0)
    return FUSION_SUCCESS; // Nothing to do for an empty tensor.
  if (gridX > 0x7fffffff || gridY > 65535)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                std::string("grid of kernel ") + name + " is too large");
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  cudaKernel_t kernel;
  if (int32_t status = getKernel(image, name, &kernel))
    return status;
  dim3 grid(static_cast<unsigned>(gridX), static_cast<unsigned>(gridY));
  return checkCuda(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                    grid, dim3(blockX), args, 0,
                                    static_cast<cudaStream_t>(stream)),
                   name);
}

namespace {
/// Orders `waiter` after the work enqueued on `signaller` so far.
int32_t wait(cudaStream_t waiter, cudaStream_t signaller) {
  cudaEvent_t event;
  if (int32_t status = checkCuda(
          cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
          "cudaEventCreateWithFlags"))
    return status;
  int32_t status = checkCuda(cudaEventRecord(event, signaller),
                             "cudaEventRecord");
  if (status == FUSION_SUCCESS)
    status = checkCuda(cudaStreamWaitEvent(waiter, event, 0),
                       "cudaStreamWaitEvent");
  cudaEventDestroy(event); // Released once the recorded work completes.
  return status;
}
} // namespace

extern "C" int32_t __fusion_rt_fork(void *stream, void **side) {
  static std::mutex mutex;
  static std::map<int, cudaStream_t> streams;
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  {
    std::lock_guard<std::mutex> lock(mutex);
    cudaStream_t &sideStream = streams[guard.device()];
    if (!sideStream) {
      if (int32_t status = checkCuda(
              cudaStreamCreateWithFlags(&sideStream, cudaStreamNonBlocking),
              "cudaStreamCreateWithFlags")) {
        streams.erase(guard.device());
        return status;
      }
    }
    *side = sideStream;
  }
  return wait(static_cast<cudaStream_t>(*side),
              static_cast<cudaStream_t>(stream));
}

extern "C" int32_t __fusion_rt_join(void *stream, void *side) {
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  return wait(static_cast<cudaStream_t>(stream),
              static_cast<cudaStream_t>(side));
}
