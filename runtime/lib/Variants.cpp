//===- Variants.cpp - choosing an entry point's variant for the device ----===//
//
// A library compiled for several targets (fusion-compile --target=sm_80,
// sm_90) dispatches each call to the variant compiled for the stream's
// device.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <atomic>
#include <string>

using namespace fusion::runtime;

/// `device`'s compute capability, major * 10 + minor; asked of CUDA once a
/// device (every call of a multi-target entry point needs it).
static int32_t getCapability(int device, int32_t *capability) {
  constexpr int kCachedDevices = 64;
  static std::atomic<int32_t> known[kCachedDevices] = {};
  bool cached = device >= 0 && device < kCachedDevices;
  if (cached && (*capability = known[device].load(std::memory_order_relaxed)))
    return FUSION_SUCCESS;
  int major = 0, minor = 0;
  if (int32_t status =
          checkCuda(cudaDeviceGetAttribute(
                        &major, cudaDevAttrComputeCapabilityMajor, device),
                    "cudaDeviceGetAttribute (compute capability)"))
    return status;
  if (int32_t status =
          checkCuda(cudaDeviceGetAttribute(
                        &minor, cudaDevAttrComputeCapabilityMinor, device),
                    "cudaDeviceGetAttribute (compute capability)"))
    return status;
  *capability = major * 10 + minor;
  if (cached)
    known[device].store(*capability, std::memory_order_relaxed);
  return FUSION_SUCCESS;
}

static std::string targetName(int32_t capability, bool archSpecific) {
  return "sm_" + std::to_string(capability) + (archSpecific ? "a" : "");
}

extern "C" int32_t __fusion_rt_select_variant(void *stream,
                                              const int32_t *targets,
                                              int32_t count, int32_t *chosen) {
  if (!targets || count <= 0 || !chosen)
    return fail(FUSION_ERROR_INVALID_ARGUMENT, "no variants to choose from");
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  int32_t device;
  if (int32_t status = getCapability(guard.device(), &device))
    return status;
  int32_t best = -1;
  for (int32_t i = 0; i < count; ++i) {
    int32_t capability = targets[2 * i];
    bool runs =
        targets[2 * i + 1] ? capability == device : capability <= device;
    if (runs && (best < 0 || capability > targets[2 * best]))
      best = i;
  }
  if (best < 0) {
    std::string available;
    for (int32_t i = 0; i < count; ++i)
      available +=
          (i ? ", " : "") + targetName(targets[2 * i], targets[2 * i + 1] != 0);
    return fail(FUSION_ERROR_CUDA, "this library has kernels for " + available +
                                       ", none of which runs on " +
                                       targetName(device, false));
  }
  *chosen = best;
  return FUSION_SUCCESS;
}
