// fusion-compile builds a loadable library with its signature; the library
// rejects bad arguments with a status and a message, no GPU needed.
// REQUIRES: cuda-toolkit
// RUN: rm -rf %t && mkdir -p %t
// RUN: fusion-compile %S/../../../examples/linear_leaky_relu.mlir -o %t/a.so --precision=tf32
// RUN: FileCheck %s --check-prefix=JSON < %t/a.json
// RUN: FileCheck %s --check-prefix=HEADER < %t/a.h
// RUN: %python %S/Inputs/call_errors.py %t/a.so linear_leaky_relu | FileCheck %s --check-prefix=CALL

// JSON: "batch": true
// JSON: "c_prototype": "int32_t linear_leaky_relu(void *stream, int64_t batch, const void *input0 /* f32[batch][8192] */, const void *input1 /* f32[8192][8192] */, const void *input2 /* f32[8192] */, void *output0 /* f32[batch][8192] */)"
// JSON: "dtype": "f32"
// JSON-NEXT: "index": 0
// JSON-NEXT: "shape": [
// JSON-NEXT: null,
// JSON-NEXT: 8192
// JSON: "name": "linear_leaky_relu"
// JSON: "library": "a.so"

// HEADER: const char *fusion_last_error_message(void);
// HEADER: int32_t linear_leaky_relu(void *stream, int64_t batch,

// CALL: status 1: batch must be at least 1, got 0
// CALL: status 1: input #0 is a null pointer
// CALL: status 1: input #0 is not 16-byte aligned
