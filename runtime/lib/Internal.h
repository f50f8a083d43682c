//===- Internal.h - shared helpers of the fusion runtime --------*- C++ -*-===//

#ifndef FUSION_RUNTIME_INTERNAL_H
#define FUSION_RUNTIME_INTERNAL_H

#include "fusion_runtime.h"

#include <cuda_runtime.h>

#include <string>

namespace fusion::runtime {

/// Records `message` as this thread's last error and returns `status`.
int32_t fail(fusion_status status, const std::string &message);

/// FUSION_SUCCESS, or FUSION_ERROR_CUDA with `what` and CUDA's message.
int32_t checkCuda(cudaError_t error, const char *what);

/// Makes the stream's device current for the lifetime of the guard.
class DeviceGuard {
public:
  explicit DeviceGuard(void *stream);
  ~DeviceGuard();
  int32_t status() const { return status_; }
  int device() const { return device_; }

private:
  int previous_ = -1;
  int device_ = -1;
  int32_t status_ = FUSION_SUCCESS;
};

/// A workspace of `bytes` for `stream`, whose device `device` is current
/// (a DeviceGuard's), from that device's default memory pool, which every
/// library of the process shares; null for no bytes.
int32_t allocateWorkspace(int device, void *stream, int64_t bytes,
                          void **ptr);

/// Frees a workspace of allocateWorkspace in `stream`'s order (the stream's
/// device current); nothing for null.
int32_t freeWorkspace(void *stream, void *ptr);

} // namespace fusion::runtime

#endif // FUSION_RUNTIME_INTERNAL_H
