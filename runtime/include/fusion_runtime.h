/*===- fusion_runtime.h - the C ABI of fusion-compiled libraries ----------===*
 *
 * A library made by fusion-compile exports, per entry point of the compiled
 * module, one function
 *
 *   int32_t NAME(void *stream, [int64_t batch,] const void *input..., void
 **output...);
 *
 * - `stream`: the cudaStream_t to run on, and so the device (NULL: the
 *   legacy default stream of the current device, which the caller sets with
 *   cudaSetDevice). Work is enqueued asynchronously on it.
 * - `batch`: present when the entry point has dynamic dimensions; every `?`
 *   dimension of its tensors takes this value.
 * - inputs and outputs: device pointers to dense row-major tensors, in the
 *   order of the entry's arguments and results (shapes and dtypes in the
 *   signature file NAME.json beside the library). Every pointer must be
 *   16-byte aligned and point into a device allocation of the stream's device
 *   that is large enough. Outputs do not overlap inputs, but for an output
 *   whose signature names `"updates_input": I` (the header: "may be inputI"):
 *   a training batch norm's updated running statistic, which may be
 *   written into input I's own buffer, passed as both.
 *
 * The function returns FUSION_SUCCESS or another fusion_status; then
 * fusion_last_error_message() tells what failed on this thread. Nothing
 * aborts the host process.
 *
 * Each entry point also has a packed form, for callers that pass a runtime
 * number of buffers (PyTorch's fusion::run operator):
 *
 *   int32_t NAME_packed(void *stream, int64_t batch, void *const *buffers,
 *                       uint32_t flags);
 *
 * - `batch` is always there (ignored where every dimension is static);
 * - `buffers` holds the inputs' then the outputs' pointers;
 * - `flags` may hold FUSION_CALL_BUFFERS_CHECKED: the caller vouches that
 *   every buffer is non-null, 16-byte aligned, large enough and on the
 *   stream's device, so the call asks the driver nothing about them (NAME
 *   checks each with two driver queries).
 *===----------------------------------------------------------------------===*/

#ifndef FUSION_RUNTIME_H
#define FUSION_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fusion_status {
  FUSION_SUCCESS = 0,
  /* A null, misaligned, too small or wrong-device buffer, or a bad size. */
  FUSION_ERROR_INVALID_ARGUMENT = 1,
  /* The CUDA runtime failed (no driver or device, out of memory, launch). */
  FUSION_ERROR_CUDA = 2,
  /* cuBLASLt failed or has no algorithm for the GEMM. */
  FUSION_ERROR_CUBLAS = 3,
} fusion_status;

/* The suffix of an entry point's packed form, and its flags. */
#define FUSION_PACKED_ENTRY_SUFFIX "_packed"
enum { FUSION_CALL_BUFFERS_CHECKED = 1 };

/* The message of the last failure on the calling thread ("" if none). */
const char *fusion_last_error_message(void);

/*===----------------------------------------------------------------------===*
 * Internal ABI: called by the generated host code, not by users.
 *===----------------------------------------------------------------------===*/

/* Element types and GEMM precisions, as the fusion dialect numbers them
 * (ElementType and Precision in FusionAttrs.td; the compiler checks that
 * the two agree). */
enum { FUSION_F32 = 0, FUSION_BF16 = 1, FUSION_F16 = 2 };
enum {
  FUSION_PRECISION_FP32 = 0,
  FUSION_PRECISION_TF32 = 1,
  FUSION_PRECISION_BF16 = 2,
  FUSION_PRECISION_F16 = 3
};
/* How a GEMM's weight is stored (WeightLayout in FusionAttrs.td):
 * [N, K] (torch.nn.Linear's) or [K, N] (x @ w). */
enum { FUSION_WEIGHT_OUT_IN = 0, FUSION_WEIGHT_IN_OUT = 1 };

/* `bytes` of device memory at `ptr`, 16-byte aligned, on the stream's device.
 */
int32_t __fusion_rt_check_buffer(void *stream, const void *ptr, int64_t bytes,
                                 const char *name);
/* `value` >= `minimum`, else an error naming `what`. */
int32_t __fusion_rt_check_size(int64_t value, int64_t minimum,
                               const char *what);
int32_t __fusion_rt_alloc(void *stream, int64_t bytes, void **ptr);
int32_t __fusion_rt_free(void *stream, void *ptr);
int32_t __fusion_rt_copy(void *stream, void *dst, const void *src,
                         int64_t bytes);
/* out[M, N] = alpha * x[M, K] * w[N, K]^T (+ bias[N]), all `dtype`, products
 * in `precision`, f32 accumulation; w stored [K, N] (x * w) where
 * `weight_layout` is FUSION_WEIGHT_IN_OUT; out's rows `out_stride` (>= N)
 * elements apart (columns of a wider matrix: a grouped GEMM's part). */
int32_t __fusion_rt_gemm(void *stream, int32_t dtype, int32_t precision,
                         int32_t weight_layout, int64_t m, int64_t n, int64_t k,
                         const void *x, const void *w, const void *bias,
                         float alpha, void *out, int64_t out_stride);
/* Encodes into `map` (128 bytes, 64-byte aligned) the TMA tensor map of the
 * row-major [rows, columns] matrix of `dtype` at `base`, read in boxes of
 * boxRows x boxColumns, 128-byte swizzled, zeros past its edges. */
int32_t __fusion_rt_tensor_map(void *map, const void *base, int32_t dtype,
                               int64_t rows, int64_t columns, int32_t boxRows,
                               int32_t boxColumns);
/* How __fusion_rt_launch launches a kernel (bits of `flags`):
 * - PERSISTENT: the kernel's blocks stride over gridX work items; at most as
 *   many blocks along X as the stream's device holds at once;
 * - OVERLAP_PREDECESSOR: the kernel waits for the stream's previous kernel
 *   itself (griddepcontrol.wait), so it may start while that one finishes
 *   (programmatic dependent launch). */
enum {
  FUSION_LAUNCH_PERSISTENT = 1,
  FUSION_LAUNCH_OVERLAP_PREDECESSOR = 2
};
/* Launches `kernel` of the embedded fatbin `image` on a (gridX, gridY) grid
 * of `blockX`-thread blocks with `sharedBytes` of dynamic shared memory. */
int32_t __fusion_rt_launch(const void *image, const char *kernel, int64_t gridX,
                           int64_t gridY, int32_t blockX, int32_t sharedBytes,
                           int32_t flags, void *stream, void **args);

/* A library compiled for several GPUs holds one variant of each entry point
 * per target; `targets` lists them as `count` pairs {capability (major * 10
 * + minor), arch_specific}. Sets `chosen` to the index of the variant for
 * the stream's device: of those it runs (capability at most the device's,
 * equal where arch_specific, as sm_90a code runs on sm_90 alone), the
 * newest. */
int32_t __fusion_rt_select_variant(void *stream, const int32_t *targets,
                                   int32_t count, int32_t *chosen);

#ifdef __cplusplus
}
#endif

#endif /* FUSION_RUNTIME_H */
