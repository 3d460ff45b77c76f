"""`AnalysisMode`: the dispatch mode `infer_shapes` runs above its FakeTensorMode.

Every ATen op passes through it first. It
- converts real tensors the analysed code reaches by itself (closures, globals, a module
  called from a function) into fakes, so they need not be passed as arguments; no data is
  copied;
- names the op as the origin of the guards recorded while it runs;
- tracks bounds on integer tensor values and checks indexing against them (value_bounds.py).
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map
from torch.utils.weak import WeakIdKeyDictionary

from fake_tensor.analysis.value_bounds import INDEX_CHECKS, VALUE_RULES, IntValues, require_in_bounds
from fake_tensor.tensor import is_fake


class AnalysisMode(TorchDispatchMode):
    def __init__(self, fake_mode):
        super().__init__()
        self.fake_mode = fake_mode
        self.shape_env = fake_mode.shape_env
        self._values = WeakIdKeyDictionary()

    def values_of(self, t) -> IntValues | None:
        return self._values.get(t) if isinstance(t, torch.Tensor) else None

    def _fake(self, value):
        if isinstance(value, torch.Tensor) and not is_fake(value):
            return self.fake_mode.from_real(value)
        return value

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        args, kwargs = tree_map(self._fake, (args, kwargs or {}))
        packet = func.overloadpacket
        check = INDEX_CHECKS.get(packet)
        if check is not None:
            for index, indexed, dim in check(args, kwargs):
                values = self.values_of(index)
                if values is not None:
                    require_in_bounds(self.shape_env, func, values, indexed, dim)
        with self.shape_env.attributing_to(str(func)):
            out = func(*args, **kwargs)
        rule = VALUE_RULES.get(packet)
        if rule is not None and isinstance(out, torch.Tensor) and not out.is_floating_point():
            values = rule(self.values_of, args, kwargs)
            if values is not None:
                self._values[out] = values
        return out
