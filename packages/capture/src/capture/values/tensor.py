"""Tensors: an FX node of the graph being built plus the fake tensor it evaluates to.

Metadata (`shape`, `dtype`, `device`, `dim()`, ...) is read from the fake tensor and becomes a
Python constant: the tensor guards of the graph inputs make it true for every call that hits
the cache. Everything else done to a tensor is a node of the graph.
"""

from __future__ import annotations

import operator

import torch
from guards import AttrSource, IdentityMatch, ModuleGlobalSource

from ..errors import Unsupported
from ..sources import HeldSource
from .base import Value
from .callables import BuiltinValue, MethodValue
from .class_lookup import MISSING, lookup_static
from .constant import ConstantValue
from .exceptions import raise_user_error
from .symbolic import contains_symbolic

# Attributes answered from the fake tensor's metadata.
METADATA_ATTRIBUTES = frozenset(
    {
        "shape", "dtype", "device", "layout", "ndim", "requires_grad", "is_cuda", "is_cpu",
        "is_meta", "is_sparse", "is_quantized", "is_mkldnn", "is_nested", "is_leaf",
        "is_complex", "itemsize", "nbytes", "is_mps", "is_xpu",
    }
)  # fmt: skip

# Attributes that compute a new tensor: recorded as `getattr(x, name)` nodes.
COMPUTED_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})

# Methods that leave the graph (real memory, Python data) or change autograd state; their
# calls are refused by rules in capture.calls.torch_rules (so the graph breaks at the call).
REFUSED_METHODS = {
    "data_ptr": "reads a memory address",
    "tolist": "converts tensor data to Python values",
    "item": "converts tensor data to a Python number",
    "__array__": "converts to a numpy array",
    "backward": "runs autograd",
    "register_hook": "registers an autograd hook",
    # Returns a handle, which would otherwise pass for a metadata answer and the hook be
    # registered on the fake tensor only.
    "register_post_accumulate_grad_hook": "registers an autograd hook",
    "untyped_storage": "exposes the storage",
    "storage": "exposes the storage",
    "retain_grad": "changes autograd state",
    # Where the storage lives, which no tensor guard checks (a later call's tensor may be moved
    # to shared memory, or pinned, and the answer baked in would be stale).
    "is_shared": "reads where the storage lives",
    "is_pinned": "reads where the storage lives",
    # In-place changes of a tensor's shape, strides or storage: functionalization cannot turn
    # them into graph values (aot_autograd refuses them), so they run outside the graph.
    **dict.fromkeys(
        ("resize_", "resize_as_", "set_", "t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "swapdims_", "swapaxes_"),
        "changes the tensor's shape or storage in place",
    ),
}


_ABSENT = object()


class TensorKey:
    """A tensor as a dict key or set member while tracing: equal only to itself, as torch
    hashes tensors by identity (`{t: 1}[t]`, `t in {t}`)."""

    __slots__ = ("fake",)

    def __init__(self, fake: torch.Tensor):
        self.fake = fake

    def __hash__(self) -> int:
        return id(self.fake)

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorKey) and other.fake is self.fake

    def __repr__(self) -> str:
        return f"<tensor key {id(self.fake):#x}>"


def tensor_key(frame, value: TensorValue) -> TensorKey:
    """The key of `value`. Two input tensors used as keys are two keys only while they are two
    objects: an entry that told them apart is guarded so (f(x, x) then f(x, y) recaptures)."""
    register_input_key(frame.session, value)
    return TensorKey(value.fake)


def register_input_key(session, value: TensorValue) -> None:
    """Guard `value`, an input tensor used as a key, distinct from the other inputs told apart
    by identity (Session.keep_distinct; keys of a dict passed in among them: distinct by
    construction, so that costs their guard nothing)."""
    # Only graph inputs: a tensor the graph computes is new in every call.
    if value.node.op == "placeholder":
        session.keep_distinct(value)


class TensorValue(Value):
    """`real` is the tensor a graph input was read from (None for tensors the graph computes,
    which carry no Python attributes of their own)."""

    def __init__(self, node: torch.fx.Node, fake: torch.Tensor, source=None, python_cls=torch.Tensor, real=None):
        super().__init__(source)
        self.node = node
        self.fake = fake
        self.python_cls = python_cls
        self.real = real

    def python_type(self) -> type:
        return self.python_cls

    def describe(self) -> str:
        shape = "x".join(str(s) for s in self.fake.shape)
        return f"a Tensor ({str(self.fake.dtype).removeprefix('torch.')}[{shape}])"

    def as_fake(self):
        return self.fake

    def as_node_arg(self):
        return self.node

    def get_attr(self, frame, name):
        graph = frame.session.graph
        if name == "nbytes" and contains_symbolic(self.fake.shape):
            # Tensor.nbytes is numel() times the element size, but reads a numel that C++ cannot
            # give for symbolic sizes (an error, in tracing and in aot_autograd's graph alike).
            numel = self.get_attr(frame, "numel").call(frame, [], {})
            return frame.call_builtin(operator.mul, [numel, ConstantValue(self.fake.itemsize)], {})
        if name in METADATA_ATTRIBUTES:
            value = getattr(self.fake, name)
            if name == "is_leaf":
                self._guard_leafness(frame, value)
            if contains_symbolic(value):
                # A dynamic size: the graph computes it from the tensor (`getattr(x, "shape")`).
                return graph.call_function(frame, getattr, [self, ConstantValue(name)], {})
            return graph.wrap_metadata(value)
        if name in COMPUTED_ATTRIBUTES:
            return graph.call_function(frame, getattr, [self, ConstantValue(name)], {})
        if name == "grad":
            return self._grad(frame)
        descriptor, _ = lookup_static(self.python_cls, name)
        if descriptor is MISSING:
            own = self._own_attribute(frame, name)
            if own is not _ABSENT:
                return own

            raise_user_error(frame, AttributeError, f"'Tensor' object has no attribute {name!r}")
        if name == "__class__" or isinstance(descriptor, (classmethod, staticmethod)):
            # Bound as Python binds them through an instance: `x.__class__` is type(x), where
            # `getattr(torch.Tensor, "__class__")` is the metaclass (a callable, not a method
            # of x); a classmethod (`__torch_function__`) binds the class, a staticmethod nothing.
            return frame.bind_class_attribute(self, self.python_cls, descriptor, name)
        attribute = getattr(self.python_cls, name)
        if callable(attribute):
            if self.python_cls is torch.Tensor:
                # `torch.Tensor.relu = f` after compiling must reach the graph's next capture
                # (under aot_eager and inductor the old method was baked in): one identity guard
                # per method name used, on an object torch keeps (a method descriptor).
                frame.session.add_guard(IdentityMatch(AttrSource(ModuleGlobalSource("torch", "Tensor"), name), attribute))
            return MethodValue(BuiltinValue(attribute), self)
        raise Unsupported(f"attribute Tensor.{name}")

    def _guard_leafness(self, frame, is_leaf: bool) -> None:
        """Tensor guards check requires_grad, not whether an input is a leaf: an input that
        requires grad may come as a leaf in one call and the output of an op in the next."""
        if self.node.op == "placeholder" and self.fake.requires_grad and self.source is not None:
            from guards import AttrSource, ConstantMatch

            frame.session.add_guard(ConstantMatch(AttrSource(self.source, "is_leaf"), is_leaf))

    def _grad(self, frame) -> Value:
        """`x.grad`: for a tensor the frame receives, its gradient is a graph input of its own
        (`L['p'].grad`, guarded like any tensor input, or guarded None), as torch.compile
        does; a gradient written earlier in the trace (`p.grad = g`) is that value."""
        session = frame.session
        if self.real is not None:
            pending = session.side_effects.pending_attr(self.real, "grad")
            if pending is not None:
                return pending
        if self.node.op != "placeholder":
            # Computed by the graph: no backward has run on it inside the graph.
            return ConstantValue(None)
        from guards import AttrSource

        if self.source is None or isinstance(self.source, HeldSource):
            raise Unsupported(
                "reading .grad of a tensor the compiled function holds as a constant",
                hint="pass the tensor to the compiled function, or read its gradient outside it",
            )
        return session.wrap(self.real.grad, AttrSource(self.source, "grad"))

    def set_attr(self, frame, name, value):
        is_input = self.real is not None and self.node.op == "placeholder" and self.source is not None and not isinstance(self.source, HeldSource)
        if name == "grad" and is_input:
            # Replayed onto the tensor after the graph runs (zero_grad's `p.grad = None`).
            if not (isinstance(value, TensorValue) or (value.is_python_constant() and value.as_python_constant() is None)):
                raise Unsupported(f"setting .grad of a tensor to {value.describe()}")
            frame.session.side_effects.store_attr(self, "grad", value, obj=self.real)
            return
        if lookup_static(self.python_cls, name)[0] is MISSING:
            # A Python attribute of the tensor's own (`t.tag = ...`): on a tensor passed in, a
            # write replayed after the graph; on one the graph computes, kept with its fake
            # tensor (in-place ops return the same one) and set on the output that escapes.
            if is_input:
                frame.session.side_effects.store_attr(self, name, value, obj=self.real)
                return
            if self.node.op != "placeholder" and self.real is None and not _is_graph_input(frame, self.fake):
                _computed_attributes(self.fake, create=True)[name] = value
                return
        raise Unsupported(
            f"setting attribute {name!r} of a tensor",
            hint="keep the value in a local variable or module attribute instead",
        )

    def get_item(self, frame, key):
        return frame.session.graph.call_function(frame, operator.getitem, [self, key], {})

    def set_item(self, frame, key, value):
        frame.session.graph.call_function(frame, operator.setitem, [self, key, value], {})

    def unpack(self, frame):
        if self.fake.dim() == 0:
            raise Unsupported("iterating over a 0-d tensor")
        count = self.fake.shape[0]
        if not isinstance(count, int):
            # One item per row: the count is specialized, guarded as `int(n)` is (as torch.compile does).
            try:
                count = int(count)
            except Exception:  # noqa: BLE001 (a size with no value to specialize to: data-dependent)
                raise Unsupported("iterating over a tensor whose first dimension is data-dependent") from None
        return [self.get_item(frame, ConstantValue(i)) for i in range(count)]

    def length(self, frame):
        if self.fake.dim() == 0:
            raise Unsupported("len() of a 0-d tensor")
        return self.get_attr(frame, "shape").get_item(frame, ConstantValue(0))

    def truth(self, frame):
        raise Unsupported(
            "branching on the value of a tensor (data-dependent control flow)",
            hint="use torch.where, or move the condition outside the compiled function",
        )

    def has_attr(self, frame, name):
        # Through the class's MRO, as get_attr reads it: `hasattr(torch.Tensor, "mro")` holds
        # (an attribute of the metaclass) where `hasattr(x, "mro")` does not.
        if lookup_static(self.python_cls, name)[0] is not MISSING:
            return True
        return self._own_attribute(frame, name, read=False) is not _ABSENT

    def _own_attribute(self, frame, name, read=True):
        """`name` from the tensor's instance dict (`x.tag = ...` set before the call), read
        and guarded through its source (with `read` False only its presence is guarded, and
        True stands for it); `_ABSENT` (guarded absent) when it has none.

        Only names the class does not define are looked up here: an instance attribute that
        shadows a Tensor method is not something programs do (torch.compile ignores it too),
        and guarding every method call on it would cost each input a guard."""
        computed = _computed_attributes(self.fake)
        if name in computed:
            return computed[name] if read else True
        pending = frame.session.side_effects.pending_attr(self.real, name) if self.real is not None else None
        if pending is not None:  # written earlier in this call (tensors refuse `del t.name`)
            return pending if read else True
        instance_dict = getattr(self.real, "__dict__", None) or {}
        if not instance_dict and self.source is None:
            return _ABSENT  # computed by the graph: no attributes of its own
        from guards import AttrSource, HasAttr

        if isinstance(self.source, HeldSource):
            if instance_dict:
                raise Unsupported(f"attribute {name!r} of a tensor held by the compiled function")
            return _ABSENT
        if name not in instance_dict or not read:
            frame.session.add_guard(HasAttr(self.source, name, name in instance_dict))
            return True if name in instance_dict else _ABSENT
        return frame.session.wrap(instance_dict[name], AttrSource(self.source, name))

    def reconstruct(self, writer):
        if self.node.op == "placeholder":
            return writer.source(self.source)
        attributes = _computed_attributes(self.fake)
        if attributes:
            pairs = ", ".join(f"{k!r}: {writer.value(v)}" for k, v in attributes.items())
            builder = writer.name_for(_with_attributes, "with_attributes")
            return writer.bind(self, f"{builder}({writer.graph_output(self)}, {{{pairs}}})")
        return writer.graph_output(self)

    def inner_values(self):
        return list(_computed_attributes(self.fake).values())


def _computed_attributes(fake: torch.Tensor, create: bool = False) -> dict:
    """The Python attributes the trace set on a tensor the graph computes, kept on its fake
    tensor (made for this trace alone), by name."""
    attributes = fake.__dict__.get("_capture_python_attributes")
    if attributes is None:
        attributes = {}
        if create:
            fake.__dict__["_capture_python_attributes"] = attributes
    return attributes


def _is_graph_input(frame, fake) -> bool:
    """An in-place op on an input gives back the input itself, whatever value holds it."""
    return any(node.meta.get("example_value") is fake for node in frame.session.graph.fx.find_nodes(op="placeholder"))


def _with_attributes(tensor: torch.Tensor, attributes: dict) -> torch.Tensor:
    for name, value in attributes.items():
        setattr(tensor, name, value)
    return tensor
