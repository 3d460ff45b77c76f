"""Partitioners: split a joint forward+backward graph into a forward and a backward graph.

`default_partition` saves every forward value the backward reads;
`min_cut_rematerialization_partition` saves the fewest bytes, recomputing cheap ops in the
backward. Both take `(joint_module, joint_inputs, *, num_fwd_outputs)`.
`saved_tensor_bytes` measures what a partition keeps alive for the backward.
"""

from .default import default_partition
from .memory import SavedBytes, saved_tensor_bytes
from .min_cut import min_cut_rematerialization_partition

__all__ = ["SavedBytes", "default_partition", "min_cut_rematerialization_partition", "saved_tensor_bytes"]
