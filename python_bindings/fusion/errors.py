"""The exceptions of the fusion package."""


class UnsupportedOperationError(Exception):
    """The model uses an operation fusion cannot compile. The message names
    the operation and where in the model's source it is."""


class LibraryNotCachedError(UnsupportedOperationError):
    """A library is not in the cache, and this machine has no fusion
    compiler to compile it (a GPU machine the cache was carried to)."""


class FusionRuntimeError(RuntimeError):
    """A compiled library rejected its arguments or failed on the device."""


class FusionBackendWarning(UserWarning):
    """Under torch.compile, a part of the graph that fusion would fuse runs
    as PyTorch because fusion failed on it (the message names the op, its
    line and the error): the model's results are PyTorch's."""
