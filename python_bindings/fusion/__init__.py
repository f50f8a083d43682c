"""fusion: compile PyTorch models' linear layers and the cheap ops after
them into fused GPU (or CPU) kernels.

    import fusion                    # registers the backend "fusion"
    fast = torch.compile(model, backend="fusion")   # any model: the fusible
    y = fast(x)                      # parts fused, the rest PyTorch's

    compiled = fusion.compile(model, (x,), precision="tf32")  # whole module
    y = compiled(x)                  # same interface and gradients as model
    compiled.save("model.fusion")    # the library and how to rebind it
    again = fusion.load("model.fusion", model)   # no compiler needed
    print(fusion.explain(model, x))  # each GEMM: what fused, where it stopped

Compiling needs the native compiler extension; running compiled or cached
libraries needs only PyTorch (and CUDA for GPU libraries).
"""

from . import dynamo  # Registers the torch.compile backend "fusion".
from .dynamo import explain
from .errors import (FusionBackendWarning, FusionRuntimeError,
                     UnsupportedOperationError)
from .module import CompiledModule, compile, load

__all__ = ["CompiledModule", "FusionBackendWarning", "FusionRuntimeError",
           "MLIRError", "UnsupportedOperationError", "compile", "explain",
           "load"]


def __getattr__(name):
    # The compiler's exception lives in the native extension, which a machine
    # that only runs libraries does not need.
    if name == "MLIRError":
        from ._fusion import MLIRError
        return MLIRError
    raise AttributeError(name)
