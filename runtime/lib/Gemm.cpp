//===- Gemm.cpp - the GEMM of a fused linear through cuBLASLt -------------===//
//
// Row-major out[M, N] = x[M, K] * w[N, K]^T is, column-major,
// out^T[N, M] = op_T(w)[N, K] * x^T[K, M]: A = w (K x N, transposed),
// B = x (K x M), C = D = out (N x M). The bias epilogue adds bias[N] to each
// column of D, i.e. to each row of `out`. cuBLASLt's bias epilogue adds in
// D's type: a 16-bit D is rounded before the bias, which loses a sum that
// cancels (0 for a true -1.2e-4 of parts near 0.06). 16-bit GEMMs take the
// bias as C instead, broadcast by a leading dimension of 0, with beta = 1:
// C is added in the compute type, and D rounded once.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <tuple>

using namespace fusion::runtime;

namespace {

/// The most workspace an algorithm may ask for; each call takes what its
/// algorithm asks (allocateWorkspace), so that calls on several streams
/// never share one and libraries share the memory.
constexpr size_t kMaxWorkspaceBytes = 32u << 20;

int32_t checkCublas(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return FUSION_SUCCESS;
  return fail(FUSION_ERROR_CUBLAS, std::string(what) + ": " +
                                       cublasLtGetStatusName(status) + ": " +
                                       cublasLtGetStatusString(status));
}

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
};

/// A GEMM shape's descriptors and chosen algorithm.
struct Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  /// The bias as C (16-bit GEMMs with a bias), or null.
  cublasLtMatrixLayout_t biasAsC = nullptr;
  cublasLtMatmulAlgo_t algorithm;
  size_t workspaceBytes = 0;
};

/// Device, dtype, precision, weight layout, M, N, K, whether there is a
/// bias, the output's row stride.
using PlanKey = std::tuple<int, int32_t, int32_t, int32_t, int64_t, int64_t,
                           int64_t, bool, int64_t>;

std::mutex mutex;
std::map<int, DeviceState> devices;
std::map<PlanKey, Plan> plans;

cudaDataType_t dataType(int32_t dtype) {
  switch (dtype) {
  case FUSION_BF16:
    return CUDA_R_16BF;
  case FUSION_F16:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

/// Half-precision operands are exact in f32, so only f32 operands see the
/// precision.
cublasComputeType_t computeType(int32_t dtype, int32_t precision) {
  if (dtype != FUSION_F32)
    return CUBLAS_COMPUTE_32F;
  switch (precision) {
  case FUSION_PRECISION_TF32:
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  case FUSION_PRECISION_BF16:
    return CUBLAS_COMPUTE_32F_FAST_16BF;
  case FUSION_PRECISION_F16:
    return CUBLAS_COMPUTE_32F_FAST_16F;
  default:
    return CUBLAS_COMPUTE_32F;
  }
}

int32_t getDevice(int device, DeviceState *&state) {
  state = &devices[device];
  if (state->handle)
    return FUSION_SUCCESS;
  return checkCublas(cublasLtCreate(&state->handle), "cublasLtCreate");
}

int32_t makePlan(cublasLtHandle_t handle, const PlanKey &key, Plan &plan) {
  auto [device, dtype, precision, weightLayout, m, n, k, hasBias, outStride] =
      key;
  cudaDataType_t type = dataType(dtype);
  // Column-major, as cuBLAS sees them: out^T [N, M] = w' [N, K] x^T [K, M],
  // where w' is an [N, K] weight read transposed (its [K, N] column-major
  // view) or a [K, N] one read as it is (an [N, K] column-major matrix).
  bool weightInOut = weightLayout == FUSION_WEIGHT_IN_OUT;
  cublasOperation_t weightOperation = weightInOut ? CUBLAS_OP_N : CUBLAS_OP_T,
                    plain = CUBLAS_OP_N;
  bool biasEpilogue = hasBias && dtype == FUSION_F32;
  cublasLtEpilogue_t epilogue =
      biasEpilogue ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  if (int32_t status = checkCublas(
          cublasLtMatmulDescCreate(&plan.operation,
                                   computeType(dtype, precision), CUDA_R_32F),
          "cublasLtMatmulDescCreate"))
    return status;
  cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_TRANSA,
                                 &weightOperation, sizeof(weightOperation));
  cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_TRANSB,
                                 &plain, sizeof(plain));
  cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                 &epilogue, sizeof(epilogue));
  if (biasEpilogue)
    cublasLtMatmulDescSetAttribute(plan.operation,
                                   CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type,
                                   sizeof(type));
  if (int32_t status = checkCublas(
          weightInOut ? cublasLtMatrixLayoutCreate(&plan.a, type, n, k, n)
                      : cublasLtMatrixLayoutCreate(&plan.a, type, k, n, k),
          "cublasLtMatrixLayoutCreate"))
    return status;
  if (int32_t status =
          checkCublas(cublasLtMatrixLayoutCreate(&plan.b, type, k, m, k),
                      "cublasLtMatrixLayoutCreate"))
    return status;
  if (int32_t status = checkCublas(
          cublasLtMatrixLayoutCreate(&plan.c, type, n, m, outStride),
          "cublasLtMatrixLayoutCreate"))
    return status;
  if (hasBias && !biasEpilogue)
    if (int32_t status = checkCublas(
            cublasLtMatrixLayoutCreate(&plan.biasAsC, type, n, m, 0),
            "cublasLtMatrixLayoutCreate"))
      return status;

  cublasLtMatmulPreference_t preference;
  cublasLtMatmulPreferenceCreate(&preference);
  size_t workspace = kMaxWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference,
                                       CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof(workspace));
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle, plan.operation, plan.a, plan.b,
                                     plan.biasAsC ? plan.biasAsC : plan.c,
                                     plan.c, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (int32_t error = checkCublas(status, "cublasLtMatmulAlgoGetHeuristic"))
    return error;
  if (found == 0)
    return fail(FUSION_ERROR_CUBLAS,
                "cuBLASLt has no algorithm for a " + std::to_string(m) + "x" +
                    std::to_string(n) + "x" + std::to_string(k) + " GEMM");
  plan.algorithm = result.algo;
  plan.workspaceBytes = result.workspaceSize;
  return FUSION_SUCCESS;
}

} // namespace

extern "C" int32_t __fusion_rt_gemm(void *stream, int32_t dtype,
                                    int32_t precision, int32_t weightLayout,
                                    int64_t m, int64_t n, int64_t k,
                                    const void *x, const void *w,
                                    const void *bias, float alpha, void *out,
                                    int64_t outStride) {
  if (m <= 0 || n <= 0)
    return FUSION_SUCCESS;
  if (outStride < n)
    return fail(FUSION_ERROR_INVALID_ARGUMENT,
                "a GEMM's output rows of " + std::to_string(n) +
                    " columns are " + std::to_string(outStride) + " apart");
  DeviceGuard guard(stream);
  if (guard.status() != FUSION_SUCCESS)
    return guard.status();
  std::lock_guard<std::mutex> lock(mutex);
  DeviceState *device;
  if (int32_t status = getDevice(guard.device(), device))
    return status;
  PlanKey key{guard.device(),  dtype,    precision, weightLayout, m, n, k,
              bias != nullptr, outStride};
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan plan;
    if (int32_t status = makePlan(device->handle, key, plan))
      return status;
    it = plans.emplace(key, plan).first;
  }
  Plan &plan = it->second;
  if (bias && !plan.biasAsC)
    cublasLtMatmulDescSetAttribute(
        plan.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  void *workspace = nullptr;
  if (int32_t status = allocateWorkspace(
          guard.device(), stream, static_cast<int64_t>(plan.workspaceBytes),
          &workspace))
    return status;
  float beta = plan.biasAsC ? 1.0f : 0.0f;
  const void *c = plan.biasAsC ? bias : out;
  int32_t status = checkCublas(
      cublasLtMatmul(device->handle, plan.operation, &alpha, w, plan.a, x,
                     plan.b, &beta, c, plan.biasAsC ? plan.biasAsC : plan.c,
                     out, plan.c, &plan.algorithm, workspace,
                     plan.workspaceBytes, static_cast<cudaStream_t>(stream)),
      "cublasLtMatmul");
  // Freed in stream order whether or not the GEMM was enqueued.
  if (int32_t freed = freeWorkspace(stream, workspace))
    return status ? status : freed;
  return status;
}
