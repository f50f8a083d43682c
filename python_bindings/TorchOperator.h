//===- TorchOperator.h - fusion::run's call, for the package's C++ -*- C++ -*-//
//
// What TorchOperator.cpp shares with ModuleCall.cpp: fusion::run's checked
// call of a registered entry point, without the dispatcher.
//
//===----------------------------------------------------------------------===//

#ifndef FUSION_PYTHON_TORCHOPERATOR_H
#define FUSION_PYTHON_TORCHOPERATOR_H

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace fusion::torch_ops {

/// The outputs of the entry point registered as `key`, run on `inputs` on
/// the current stream, after fusion::run's checks (which throw c10::Error
/// naming what does not match).
std::vector<at::Tensor> runEntry(const std::string &key,
                                 const std::vector<at::Tensor> &inputs);

} // namespace fusion::torch_ops

#endif // FUSION_PYTHON_TORCHOPERATOR_H
