// On a GPU: the compiled workloads agree with PyTorch in every precision and
// shape, and bad arguments are rejected (scripts/gpu-check.sh).
// REQUIRES: cuda-device, cuda-toolkit, torch-cuda
// RUN: %S/../../scripts/gpu-check.sh build %t > /dev/null
// RUN: %S/../../scripts/gpu-check.sh run %t --no-bench | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: correctness: [[N:[0-9]+]]/[[N]] cases within bounds; 4 bad-argument cases rejected: yes
