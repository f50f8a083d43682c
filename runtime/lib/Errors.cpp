//===- Errors.cpp - status codes and the per-thread error message ---------===//

#include "Internal.h"

using namespace fusion::runtime;

static thread_local std::string lastError;

int32_t fusion::runtime::fail(fusion_status status,
                              const std::string &message) {
  lastError = message;
  return status;
}

int32_t fusion::runtime::checkCuda(cudaError_t error, const char *what) {
  if (error == cudaSuccess)
    return FUSION_SUCCESS;
  cudaGetLastError(); // Reset the runtime's last error for later calls.
  return fail(FUSION_ERROR_CUDA, std::string(what) + ": " +
                                     cudaGetErrorName(error) + ": " +
                                     cudaGetErrorString(error));
}

DeviceGuard::DeviceGuard(void *stream) {
  status_ = checkCuda(cudaGetDevice(&previous_), "cudaGetDevice");
  if (status_ != FUSION_SUCCESS)
    return;
  device_ = previous_;
  // cudaStreamGetDevice would invalidate a CUDA graph capture; a capturing
  // stream runs on the current device (the caller made it current, as
  // PyTorch does while capturing).
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (stream) {
    status_ = checkCuda(
        cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture),
        "cudaStreamIsCapturing");
    if (status_ != FUSION_SUCCESS)
      return;
  }
  if (stream && capture == cudaStreamCaptureStatusNone) {
    status_ = checkCuda(
        cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &device_),
        "cudaStreamGetDevice");
    if (status_ == FUSION_SUCCESS && device_ != previous_)
      status_ = checkCuda(cudaSetDevice(device_), "cudaSetDevice");
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && device_ != previous_)
    cudaSetDevice(previous_);
}

extern "C" const char *fusion_last_error_message(void) {
  return lastError.c_str();
}
