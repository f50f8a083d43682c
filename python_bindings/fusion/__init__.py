"""fusion: compile PyTorch linear-layer chains into fused GPU (or CPU)
libraries, and run them as drop-in replacements of the modules.

    compiled = fusion.compile(model, (x,), precision="tf32")
    with torch.no_grad():            # no gradients yet: inference only
        y = compiled(x)              # same interface as model(x)
    compiled.save("model.fusion")    # the library and how to rebind it
    again = fusion.load("model.fusion", model)   # no compiler needed

`fusion.compile` needs the native compiler extension; `fusion.load`, the
runtime and the modules it returns need only PyTorch (and CUDA for GPU
libraries).
"""

from . import dynamo  # Registers the torch.compile backend "fusion".
from .errors import FusionRuntimeError, UnsupportedOperationError
from .module import CompiledModule, compile, load

__all__ = ["CompiledModule", "FusionRuntimeError", "MLIRError",
           "UnsupportedOperationError", "compile", "load"]


def __getattr__(name):
    # The compiler's exception lives in the native extension, which a machine
    # that only runs libraries does not need.
    if name == "MLIRError":
        from ._fusion import MLIRError
        return MLIRError
    raise AttributeError(name)
