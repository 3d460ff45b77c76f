"""Layout optimization: convolutions run channels-last (NHWC) while callers see eager's strides.

oneDNN and cuDNN are faster on channels-last activations (oneDNN: a small depthwise conv
108 us row-major vs 76 us channels-last; cuDNN under bf16/fp16 much more), so, as
torch.compile's inductor does (`layout_optimization`, torch/_inductor/graph.py
`decide_layout_opt` and `find_nodes_prefer_channels_last`), a graph decides once whether its
2-d convolutions take channels-last inputs. If so, every 4-d value computed on the way into a
convolution, and from one up to the graph's last convolution, is computed channels-last: the
batch norms and activations between convolutions write what the next one reads, with no
copies back and forth. Only a graph input in another layout is copied (the stem's image);
aten converts weights itself (it lays a row-major weight out as the input when the input is
channels-last), so they are passed as they are.

What a caller sees keeps eager's strides: graph outputs are laid out as traced
(output_layouts.py). The exception is what a training forward saves for its backward: the
partition (`mark_saved_layouts`) records which saved activations stay channels-last, on the
forward's output node and on the backward's placeholders, and both graphs are compiled by it.
"""

from __future__ import annotations

import math
import operator

import torch
import torch.fx as fx

aten = torch.ops.aten

# An NCHW tensor's dims from outermost to innermost in memory when it is channels-last (NHWC).
CHANNELS_LAST = (0, 2, 3, 1)
CONVOLUTIONS = (aten.convolution.default, aten.convolution_backward.default)

# GraphModule.meta key: the decision the partition took for a training pair (its forward alone
# would be decided as an inference graph); absent, a graph decides for itself.
DECISION = "layout_optimization"
# Forward output node meta: the memory order of each saved value, aligned with the output
# tuple's tail (the saved values come last: partitioners/joint.py); None keeps eager's.
SAVED_ORDERS = "saved_memory_orders"
# Backward placeholder meta: the memory order the forward saved this value in.
INPUT_ORDER = "memory_order"

# Values whose 4-d result is not an NCHW activation propagation may follow: views (a ConvNeXt
# block's permute to NHWC, whose layer norm runs over the last dim) and batched matmuls.
_STOPS = (aten.bmm.default, aten.mm.default)

# torch's inference heuristic for CUDA: the measured speed of channels-last relative to
# row-major per kind of convolution, by flops (< 1 is faster), from torchbench's convolutions.
_GROUPED, _SMALL, _IN_OUT, _DEFAULT = 1.358, 0.783, 0.725, 0.823


def decide(gm: fx.GraphModule, enabled: bool | None, *, training: bool) -> bool:
    """Whether `gm`'s convolutions should run channels-last (torch's heuristics, why below).
    `enabled`: the option; None (its default) decides on CPU and for CUDA inference graphs,
    True for CUDA training graphs too."""
    convs = _convolutions(gm)
    if enabled is False or not convs:
        return False
    devices = {_arg_val(n, 0).device.type for n in convs}
    if devices == {"cpu"}:
        # oneDNN's channels-last kernels are faster (a small depthwise convolution 108 us ->
        # 76 us; a ResNet stem 7.4 -> 3.4 ms, one core), and torch.compile turns the layout on
        # whenever oneDNN runs the CPU convolutions; but see _activations_outweigh_weight_copies.
        return (torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled
                and _activations_outweigh_weight_copies(convs))
    if devices != {"cuda"} or (enabled is None and training):
        # A row-major timm ResNet-50 (64 images, bf16 autocast, H200): inference 4.71 ms
        # row-major, 3.77 channels-last (torch.compile 3.30); a training step 18.2 ms row-major,
        # 26.4 channels-last (torch.compile 21.4). Our channels-last training steps lose, so
        # training graphs keep eager's layout unless asked for.
        return False
    if len(gm.graph.nodes) >= 300 * len(convs):
        return False  # a few convolutions in a large graph (vision transformers' stems): copies cost more
    if any(_symbolic(_arg_val(n, k)) for n in convs for k in (0, 1)):
        return False  # torch measured slowdowns under dynamic shapes (pytorch#102670)
    if not training:
        flops = {kind: 0.0 for kind in ("grouped", "small", "in_out", "default")}
        for node in convs:
            flops[_kind(node)] += _flops(node)
        weighted = (flops["grouped"] * _GROUPED + flops["small"] * _SMALL
                    + flops["in_out"] * _IN_OUT + flops["default"] * _DEFAULT)
        return weighted <= sum(flops.values())
    # Training: grouped convolutions of several input channels per group ran up to 31x slower
    # channels-last (depthwise ones, one channel per group, ran 1.86x faster); convolutions
    # narrowing the channels (UNet's decoder) and nets of only small ones slowed down too.
    return not any(_kind(n) in ("grouped", "in_out") for n in convs) and not all(_kind(n) == "small" for n in convs)


def _activations_outweigh_weight_copies(convs) -> bool:
    """Whether the activations the forward convolutions read outnumber the weight elements aten
    lays out channels-last on every call: a row-major KxK weight of several input channels per
    group is copied each time (a 512x512x3x3 one: 2 ms on one core, more than its convolution
    gains), while depthwise and 1x1 weights already are channels-last. A ResNet-18 at batch 1
    (11M such weight elements, 2M activation elements) ran 103 ms channels-last against 64 ms
    row-major on one core (torch.compile: 76 ms); a MobileNet-like net or a larger batch pays.
    With symbolic sizes (unknown activation sizes), torch's choice: channels-last."""
    activations = weights = 0
    for node in convs:
        if _is_backward(node):
            continue
        x, w = _arg_val(node, 0), _arg_val(node, 1)
        if _symbolic(x) or _symbolic(w):
            return True
        activations += math.prod(x.shape)
        if w.shape[1] > 1 and w.shape[2] * w.shape[3] > 1:
            weights += math.prod(w.shape)
    return activations >= weights


def channels_last_nodes(gm: fx.GraphModule, enabled: bool) -> frozenset:
    """The nodes whose 4-d values lowering computes channels-last; empty when the graph decides
    against it. Convolutions' inputs and outputs, what computes them (a batch norm and ReLU
    feeding the next convolution), and what reads them up to the last convolution (the
    residual adds between blocks; a backward's gradients flowing to the previous layer)."""
    chosen = gm.meta.get(DECISION)
    if chosen is None:
        chosen = decide(gm, enabled, training=any(n.target is aten.convolution_backward.default for n in gm.graph.nodes))
    nodes = list(gm.graph.nodes)
    convs = [n for n in nodes if n.target in CONVOLUTIONS]
    if not chosen or not convs:  # a backward of a frozen convolution: none of its own
        return frozenset()
    found = set(convs)
    for node in reversed(nodes):
        if node not in found and _follows(node) and any(user in found for user in node.users):
            found.add(node)
    last = nodes.index(convs[-1])
    for node in nodes[:last]:
        if node in found:
            found.update(user for user in node.users if _follows(user))
    return frozenset(n for n in found if _is_4d(n.meta.get("val")) or n.target in CONVOLUTIONS)


def mark_saved_layouts(forward: fx.GraphModule, backward: fx.GraphModule, enabled: bool, joint: fx.GraphModule) -> None:
    """Record, for a training pair cut from `joint`, the decision (taken on the joint graph,
    which holds both the convolutions and their backward) and which saved activations the
    forward hands over channels-last: values it computes channels-last anyway. Saved graph
    inputs keep their own layout."""
    chosen = decide(joint, enabled, training=True)
    forward.meta[DECISION] = backward.meta[DECISION] = chosen
    output = forward.graph.find_nodes(op="output")[0]
    saved = [p for p in backward.graph.find_nodes(op="placeholder") if not p.name.startswith("tangents")]
    tail = list(output.args[0])[len(output.args[0]) - len(saved):]
    if not chosen or [getattr(v, "name", None) for v in tail] != [p.name for p in saved]:
        return
    preferred = channels_last_nodes(forward, enabled)
    orders = tuple(_saved_order(v, preferred) for v in tail)
    output.meta[SAVED_ORDERS] = orders
    for placeholder, order in zip(saved, orders):
        if order is not None:
            placeholder.meta[INPUT_ORDER] = order


def _saved_order(value, preferred) -> tuple | None:
    """The memory order a forward computing `preferred` channels-last hands `value` over in:
    channels-last for those, the matching order for a permute of one (a ConvNeXt block's NHWC
    view of its depthwise convolution, which is then dense row-major); None: eager's strides."""
    if not isinstance(value, fx.Node) or value.op != "call_function" or not _is_4d(value.meta.get("val")):
        return None
    if value in preferred:
        return CHANNELS_LAST
    source = value.args[0] if value.target is aten.permute.default else None
    if isinstance(source, fx.Node) and source in preferred and source.op == "call_function":
        dims = [d % 4 for d in value.args[1]]
        return tuple(dims.index(d) for d in CHANNELS_LAST)
    return None


def saved_output_orders(gm: fx.GraphModule) -> dict[int, tuple | None]:
    """Output position -> the memory order the backward reads that saved value in, for each
    saved value of a forward the partition marked (None: exactly the traced strides)."""
    output = gm.graph.find_nodes(op="output")[0]
    orders = output.meta.get(SAVED_ORDERS)
    if not orders:
        return {}
    first = len(output.args[0]) - len(orders)
    return {first + k: order for k, order in enumerate(orders)}


def layout_key(gm: fx.GraphModule, enabled: bool) -> str:
    """What of the layout choice is not in the graph's code: for the compiled-graph cache key."""
    marks = [str(n.meta.get(INPUT_ORDER) or n.meta.get(SAVED_ORDERS) or "") for n in gm.graph.nodes
             if n.op in ("placeholder", "output")]
    return f"layout_optimization={enabled},{gm.meta.get(DECISION)}:{';'.join(marks)}"


def _follows(node: fx.Node) -> bool:
    """Whether a node's value may be laid out as its neighbours': computed here, not a view."""
    if node.op != "call_function" or node.target in _STOPS:
        return False
    return node.target is operator.getitem or not (isinstance(node.target, torch._ops.OpOverload) and node.target.is_view)


def _convolutions(gm: fx.GraphModule) -> list[fx.Node]:
    """The graph's 2-d convolutions (and their backward): channels-last is a 4-d layout."""
    return [n for n in gm.graph.nodes if n.target in CONVOLUTIONS and _is_4d(_arg_val(n, 1 if _is_backward(n) else 0))]


def _is_backward(node: fx.Node) -> bool:
    return node.target is aten.convolution_backward.default


def _arg_val(node: fx.Node, k: int):
    arg = node.args[k]
    return arg.meta.get("val") if isinstance(arg, fx.Node) else None


def _is_4d(val) -> bool:
    return isinstance(val, torch.Tensor) and val.dim() == 4


def _symbolic(val) -> bool:
    return any(not isinstance(s, int) for s in (*val.shape, *val.stride()))


def _kind(node: fx.Node) -> str:
    """torch's classes of convolution by weight shape (out, in per group, kh, kw)."""
    weight = _arg_val(node, 2 if _is_backward(node) else 1)
    groups = node.args[9 if _is_backward(node) else 8]
    out_channels, in_channels, kernel = weight.shape[0], weight.shape[1], weight.shape[2]
    if groups > 1 and in_channels > 1:
        return "grouped"
    if out_channels <= 64 and in_channels <= 64:
        return "small"
    if out_channels * 2 <= in_channels and kernel > 1:
        return "in_out"
    return "default"


def _flops(node: fx.Node) -> float:
    """Multiply-adds x 2 of a (forward) convolution: each output element sums in/groups x kh x kw."""
    weight = _arg_val(node, 2 if _is_backward(node) else 1)
    output = _arg_val(node, 0) if _is_backward(node) else node.meta.get("val")
    return 2.0 * math.prod(output.shape) * math.prod(weight.shape[1:])
