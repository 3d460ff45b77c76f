"""Splitting a captured graph at DDP's gradient-bucket boundaries.

DDP all-reduces gradients bucket by bucket: a bucket's all-reduce starts once every gradient
in it is ready. One compiled graph is one autograd node, whose backward hands out all
parameter gradients at its very end, so every bucket would wait for the whole backward.
Split into one graph per bucket, each piece is an autograd node of its own: the last piece's
backward finishes first, its gradients fill the first buckets, and their all-reduce overlaps
the backward of the earlier pieces (the idea of torch.compile's DDPOptimizer).

Buckets are filled as DDP fills them: walking the graph backwards (DDP assigns parameters in
reverse order), a parameter joins the bucket of the operation that uses it first, and a new
bucket starts once the current one holds `bucket_bytes_cap` bytes (the first one:
`first_bucket_bytes_cap`). Each piece is compiled with the user's backend on its first call,
with the real inputs it gets then; with symbolic sizes, its placeholders carry the fake values
(sizes `s0`...) and the size symbols come in as int inputs, so each piece stays symbolic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import sympy
import torch
from torch.fx.passes.split_module import split_module


@dataclass
class Bucket:
    parameters: list[str] = field(default_factory=list)  # sources of the parameters' placeholders
    nbytes: int = 0
    nodes: list[torch.fx.Node] = field(default_factory=list)

    @property
    def op_count(self) -> int:
        return sum(1 for n in self.nodes if n.op in ("call_function", "call_method"))

    def __str__(self) -> str:
        return f"{len(self.parameters)} parameters, {self.nbytes} bytes, {self.op_count} ops: {', '.join(self.parameters)}"


@dataclass
class GraphSplit:
    """How one captured graph was split: its buckets in forward order, and the pieces the
    backend compiled (filled on the first call)."""

    buckets: list[Bucket]
    pieces: list[torch.fx.GraphModule] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"split into {len(self.buckets)} graphs at DDP bucket boundaries:"]
        lines += [f"  bucket {i}: {b}" for i, b in enumerate(self.buckets)]
        return "\n".join(lines)


def assign_buckets(gm: torch.fx.GraphModule, example_inputs: list, *, bucket_bytes_cap: int,
                   first_bucket_bytes_cap: int) -> list[Bucket]:
    """The graph's operations grouped into buckets, in forward order."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    first_use: dict[torch.fx.Node, list[tuple[str, int]]] = {}
    for node, value in zip(placeholders, example_inputs):
        if isinstance(value, torch.nn.Parameter) and value.requires_grad and node.users:
            user = min(node.users, key=order.__getitem__)
            name = str(node.meta.get("source", node.name))
            first_use.setdefault(user, []).append((name, value.untyped_storage().nbytes()))
    buckets = [Bucket()]  # buckets[0] is the one being filled: the earliest in forward order
    for node in reversed(gm.graph.nodes):
        if node.op in ("placeholder", "output"):
            continue
        current = buckets[0]
        full = current.nbytes >= (first_bucket_bytes_cap if len(buckets) == 1 else bucket_bytes_cap)
        if full and _feeds_later_code(current):
            buckets.insert(0, Bucket())
        used = first_use.get(node, ())
        buckets[0].parameters[:0] = [name for name, _ in used]  # kept in forward order
        buckets[0].nbytes += sum(nbytes for _, nbytes in used)
        buckets[0].nodes.append(node)
    if len(buckets) > 1 and not buckets[0].parameters:
        # Operations before the first parameter's use have no bucket of their own.
        buckets[1].nodes.extend(buckets.pop(0).nodes)
    for bucket in buckets:
        bucket.nodes.reverse()
    return buckets


def _feeds_later_code(bucket: Bucket) -> bool:
    """Whether a value made in `bucket` is used outside it: a piece must output something
    (until then the bucket grows past its cap, as torch's DDPOptimizer does)."""
    members = set(bucket.nodes)
    return any(user not in members for node in bucket.nodes for user in node.users)


class BucketedGraph:
    """The compiled form of a split graph: the pieces run in order, each compiled by
    `backend` on the first call."""

    def __init__(self, gm: torch.fx.GraphModule, buckets: list[Bucket], backend: Callable, split: GraphSplit):
        index = {node: i for i, bucket in enumerate(buckets) for node in bucket.nodes}
        self.size_inputs = _size_symbol_inputs(gm)
        self.split_gm = split_module(gm, gm, lambda node: index[node], keep_original_order=True)
        self.backend = backend
        self.split = split
        self.compiled = False

    def __call__(self, *args):
        if self.size_inputs:
            args = (*args, *(getattr(args[position], kind)(dim) for position, kind, dim in self.size_inputs))
        if self.compiled:
            return self.split_gm(*args)
        out = _CompilingInterpreter(self.split_gm, self.backend, self.split).run(*args)
        self.split_gm.recompile()
        self.compiled = True
        return out


class _CompilingInterpreter(torch.fx.Interpreter):
    """Runs the split graph once, compiling each piece with the real values it receives and
    putting the compiled piece in its place."""

    def __init__(self, split_gm, backend, split: GraphSplit):
        super().__init__(split_gm)
        self.backend = backend
        self.split = split

    def call_module(self, target, args, kwargs):
        piece = self.fetch_attr(target)
        single = _make_output_a_tuple(piece)
        compiled = _Piece(self.backend(piece, list(args)), single)
        self.split.pieces.append(piece)
        self.module.delete_submodule(target)
        setattr(self.module, target, compiled)
        return compiled(*args)


def _make_output_a_tuple(piece: torch.fx.GraphModule) -> bool:
    """Backends get graphs that return a tuple; returns whether it was a single value."""
    output = next(n for n in piece.graph.nodes if n.op == "output")
    if isinstance(output.args[0], (tuple, list)):
        return False
    output.args = ((output.args[0],),)
    piece.recompile()
    return True


class _Piece(torch.nn.Module):
    def __init__(self, compiled: Callable, single: bool):
        super().__init__()
        self.compiled = compiled
        self.single = single

    def forward(self, *args):
        out = self.compiled(*args)
        return out[0] if self.single else out


def _size_symbol_inputs(gm: torch.fx.GraphModule) -> list[tuple[int, str, int]]:
    """Adds an int placeholder for each size symbol that only the inputs' shapes carry, and
    returns where each is read from: (input position, "size" or "stride", dim).

    A piece that receives a tensor whose size is `s0` must also receive `s0` itself: split_module
    passes on the node that binds a symbol, and fails without one (KeyError: s0). A placeholder
    binds it for every piece (a `sym_size` node would make a piece depend on itself when it
    reads the same tensor). Each piece then compiles for symbolic sizes, as the whole graph."""
    placeholders = list(gm.graph.find_nodes(op="placeholder"))
    bound = {v.node.expr for n in placeholders if isinstance(v := n.meta.get("example_value"), torch.SymInt)}
    reads = []
    for position, node in enumerate(placeholders):
        value = node.meta.get("example_value")
        if not isinstance(value, torch.Tensor):
            continue
        places = [("size", d, s) for d, s in enumerate(value.shape)] + [("stride", d, s) for d, s in enumerate(value.stride())]
        for kind, dim, size in places:
            symbol = size.node.expr if isinstance(size, torch.SymInt) else None
            if isinstance(symbol, sympy.Symbol) and symbol not in bound:
                bound.add(symbol)
                reads.append((position, kind, dim, size))
    last = placeholders[-1]
    for position, kind, dim, size in reads:
        with gm.graph.inserting_after(last):
            last = gm.graph.placeholder(f"{placeholders[position].name}_{kind}_{dim}")
        last.meta["example_value"] = size
    gm.recompile()
    return [(position, kind, dim) for position, kind, dim, _ in reads]


class DDPBucketing:
    """A backend wrapper: graphs whose parameters span more than one DDP bucket are split
    (each split is appended to `splits`, for `compiler.explain`); others go to `backend`
    whole."""

    def __init__(self, backend: Callable, splits: list[GraphSplit], *, bucket_bytes_cap: int, first_bucket_bytes_cap: int):
        self.backend = backend
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_bytes_cap = first_bucket_bytes_cap
        self.splits = splits

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
        buckets = assign_buckets(gm, example_inputs, bucket_bytes_cap=self.bucket_bytes_cap,
                                 first_bucket_bytes_cap=self.first_bucket_bytes_cap)
        split = GraphSplit(buckets)
        self.splits.append(split)
        if len(buckets) == 1:
            split.pieces.append(gm)
            return self.backend(gm, example_inputs)
        return BucketedGraph(gm, buckets, self.backend, split)
