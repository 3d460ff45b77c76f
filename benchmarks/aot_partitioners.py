"""Saved-activation bytes with each partitioner: a GPT-2 block and a ResNet basic block.

What a training step keeps alive between forward and backward is measured the same way for
every configuration, with `torch.autograd.graph.saved_tensors_hooks`: each tensor saved for
backward is seen once; storages of the block's inputs and parameters are not counted (they
are alive anyway). Rows:

    eager                                   PyTorch's own autograd
    ours default_partition                  aot_autograd.aot_eager
    ours min_cut                            aot_autograd.aot_eager_decomp_partition
    torch.compile aot_eager                 reference (PyTorch's default partition)
    torch.compile aot_eager_decomp_partition reference (PyTorch's min-cut)

and, for ours, the bytes the forward graph hands to the backward, read off the graph
(`aot_autograd.partitioners.saved_tensor_bytes`). Run: `python benchmarks/aot_partitioners.py`.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
import torch.fx as fx  # noqa: E402
from transformers import GPT2Config  # noqa: E402
from transformers.models.gpt2.modeling_gpt2 import GPT2Block  # noqa: E402
from transformers.models.resnet.modeling_resnet import ResNetBasicLayer  # noqa: E402

from aot_autograd import aot_module_simplified, default_decompositions, default_partition, min_cut_rematerialization_partition  # noqa: E402
from aot_autograd.backends import run_graph_module  # noqa: E402
from aot_autograd.partitioners import saved_tensor_bytes  # noqa: E402


class FirstOutput(torch.nn.Module):
    """The block's first output: the hidden states (GPT2Block returns them in a tuple)."""

    def __init__(self, block: torch.nn.Module):
        super().__init__()
        self.block = block

    def forward(self, x):
        out = self.block(x)
        return out[0] if isinstance(out, tuple) else out


def gpt2_block():
    config = GPT2Config(n_embd=512, n_head=8, n_positions=256, attn_implementation="eager")
    return FirstOutput(GPT2Block(config)), torch.randn(4, 128, 512)


def resnet_basic_block():
    return FirstOutput(ResNetBasicLayer(64, 64)), torch.randn(8, 64, 32, 32)


def one_call_graph(module: torch.nn.Module) -> fx.GraphModule:
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output((graph.call_module("module", (x,)),))
    root = torch.nn.Module()
    root.module = module
    return fx.GraphModule(root, graph)


def saved_activation_bytes(run, module: torch.nn.Module, x: torch.Tensor) -> int:
    """Bytes of distinct storages saved for backward by one call, inputs and parameters excepted."""
    alive = {t.untyped_storage().data_ptr() for t in [x, *module.parameters(), *module.buffers()]}
    seen: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in alive:
            seen[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run(x)
    out.sum().backward()
    return sum(seen.values())


def ours(module: torch.nn.Module, x: torch.Tensor, partitioner, decompositions, graphs: list):
    def recording_compiler(gm, example_inputs):
        graphs.append(gm)
        return run_graph_module(gm, example_inputs)

    compiled = aot_module_simplified(
        one_call_graph(module), [x], recording_compiler, decompositions=decompositions, partition_fn=partitioner
    )
    return lambda inp: compiled(inp)[0]


def main() -> None:
    torch.manual_seed(0)
    print(f"{'block':<20}{'configuration':<44}{'saved activations':>20}{'graph says':>14}")
    for name, make in (("GPT-2 block", gpt2_block), ("ResNet basic block", resnet_basic_block)):
        module, x = make()
        module.train()
        x.requires_grad_()
        rows = [("eager", lambda inp: module(inp), None)]
        for label, partitioner, decompositions in (
            ("ours default_partition (aot_eager)", default_partition, None),
            ("ours min_cut (aot_eager_decomp_partition)", min_cut_rematerialization_partition, default_decompositions()),
        ):
            graphs: list = []
            rows.append((label, ours(module, x, partitioner, decompositions, graphs), graphs))
        for backend in ("aot_eager", "aot_eager_decomp_partition"):
            rows.append((f"torch.compile {backend}", torch.compile(module, backend=backend), None))
        for label, run, graphs in rows:
            measured = saved_activation_bytes(run, module, x)
            graph_bytes = f"{saved_tensor_bytes(*graphs).activations / 2**20:11.2f} MiB" if graphs else ""
            print(f"{name:<20}{label:<44}{measured / 2**20:16.2f} MiB{graph_bytes:>14}")
            module.zero_grad()
            x.grad = None


if __name__ == "__main__":
    main()
