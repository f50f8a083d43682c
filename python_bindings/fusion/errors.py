"""The exceptions of the fusion package."""


class UnsupportedOperationError(Exception):
    """The model uses an operation fusion cannot compile. The message names
    the operation and where in the model's source it is."""


class FusionRuntimeError(RuntimeError):
    """A compiled library rejected its arguments or failed on the device."""
