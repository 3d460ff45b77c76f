"""Running compiled graphs: the autograd.Function of the training path, the inference path,
and the epilogue both share (input mutations copied back, aliased outputs rebuilt as views)."""

from .epilogue import GraphEffects
from .inference import InferencePlan
from .training import TrainingPlan, needs_grad_mode

__all__ = ["GraphEffects", "InferencePlan", "TrainingPlan", "needs_grad_mode"]
