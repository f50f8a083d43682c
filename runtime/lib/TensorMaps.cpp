//===- TensorMaps.cpp - TMA tensor maps of the Hopper GEMM kernels --------===//
//
// cuTensorMapEncodeTiled is a driver function; the runtime links the CUDA
// runtime statically and no libcuda, so it is looked up once through the
// runtime's driver entry points.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstring>
#include <mutex>
#include <string>

using namespace fusion::runtime;

namespace {

/// cuTensorMapEncodeTiled, or null with `*error` saying why not.
PFN_cuTensorMapEncodeTiled_v12000 lookupEncode(const std::string **error) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  static std::string lookupError;
  static std::once_flag once;
  std::call_once(once, [] {
    void *function = nullptr;
    cudaDriverEntryPointQueryResult found;
    cudaError_t status = cudaGetDriverEntryPointByVersion(
        "cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found);
    if (status != cudaSuccess)
      lookupError = std::string("cudaGetDriverEntryPointByVersion("
                                "cuTensorMapEncodeTiled): ") +
                    cudaGetErrorString(status);
    else if (found != cudaDriverEntryPointSuccess || !function)
      lookupError = "the driver has no cuTensorMapEncodeTiled (TMA needs "
                    "CUDA 12 and an sm_90 GPU)";
    else
      encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  });
  *error = &lookupError;
  return encode;
}

} // namespace

extern "C" int32_t __fusion_rt_tensor_map(void *map, const void *base,
                                          int32_t dtype, int64_t rows,
                                          int64_t columns, int32_t boxRows,
                                          int32_t boxColumns) {
  static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");
  std::memset(map, 0, sizeof(CUtensorMap));
  // An empty batch launches nothing; its map is never read.
  if (rows == 0)
    return FUSION_SUCCESS;
  CUtensorMapDataType type;
  uint64_t bytes;
  switch (dtype) {
  case FUSION_F32:
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    bytes = 4;
    break;
  case FUSION_BF16:
    type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    bytes = 2;
    break;
  case FUSION_F16:
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    bytes = 2;
    break;
  default:
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                "tensor map of unknown element type " + std::to_string(dtype));
  }
  // Every failing call reports on its own thread.
  const std::string *error;
  PFN_cuTensorMapEncodeTiled_v12000 encode = lookupEncode(&error);
  if (!encode)
    return fail(FUSION_ERROR_CUDA, *error);
  // Innermost dimension first: the columns (K), then the rows.
  cuuint64_t sizes[2] = {static_cast<cuuint64_t>(columns),
                         static_cast<cuuint64_t>(rows)};
  cuuint64_t strides[1] = {static_cast<cuuint64_t>(columns) * bytes};
  cuuint32_t box[2] = {static_cast<cuuint32_t>(boxColumns),
                       static_cast<cuuint32_t>(boxRows)};
  cuuint32_t elementStrides[2] = {1, 1};
  CUresult result =
      encode(static_cast<CUtensorMap *>(map), type, 2, const_cast<void *>(base),
             sizes, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                "cuTensorMapEncodeTiled failed (error " +
                    std::to_string(static_cast<int>(result)) + ") for a " +
                    std::to_string(rows) + " x " + std::to_string(columns) +
                    " matrix");
  return FUSION_SUCCESS;
}
