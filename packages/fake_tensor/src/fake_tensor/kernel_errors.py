"""Errors torch's C++ kernels raise about fakes, restated as fake_tensor errors.

A few C++ kernels work below the dispatcher, where no mode or op rule sees them, and fail
on fakes in torch's own words, which name neither the op nor the cause. The mode restates
them as its `with` block exits, naming the user's line. It matters beyond the message:
callers treat a plain RuntimeError as what eager would raise too (capture re-raises it in
the traced program), while these calls succeed in eager.
"""

from __future__ import annotations

from .errors import DataDependentError, FakeTensorError, StaticSizesRequiredError
from .symbolic.provenance import user_frame_in

# A kernel read a tensor argument's values from memory (`tensor_split` given a 1-d tensor
# of split indices): on a fake there is no data.
_NO_DATA = "but its data is not allocated yet"
# A composite kernel asked a fake with symbolic sizes for plain-int metadata (`cov` calls
# numel()); c10 refuses. Kernels the mode runs itself are rerun specialized instead
# (specialization.py); these run before the mode sees any op.
_SYMBOLIC_SIZES = "on tensor with symbolic sizes/strides"


def restated(error: BaseException | None) -> FakeTensorError | None:
    """The fake_tensor error `error` stands for; None for any other error."""
    if type(error) is not RuntimeError:
        return None
    message = str(error)
    if _NO_DATA in message:
        return DataDependentError(
            _where(error),
            "its C++ kernel reads a tensor argument's values directly, as tensor_split does "
            "with a tensor of split indices; pass such arguments as Python ints",
        )
    if _SYMBOLIC_SIZES in message:
        return StaticSizesRequiredError(_where(error))
    return None


def _where(error: BaseException) -> str:
    return user_frame_in(error.__traceback__) or "a torch function"
