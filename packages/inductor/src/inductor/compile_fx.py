"""Entry points: `compile_fx` (the "inductor" backend: aot_autograd, then one ATen graph at a
time) and `compile_aten_graph` (lower, schedule, generate, compile, load).

A compiled graph is cached on disk (cache.py) by the hash of its code, its inputs'
sizes/strides/dtypes, the options, and the versions and hardware that decide the code: a warm
start runs the stored wrapper and skips lowering and code generation entirely.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
import types

import aot_autograd
from aot_autograd.backends import run_graph_module
import sympy
import torch
import torch.fx

from . import cache, logs, metrics
from .codegen.targets import BACKENDS, KernelTargets
from .codegen.triton.combo_planning import combine_small_kernels
from .codegen.wrapper import WrapperCodegen
from .decompositions import decompositions
from .errors import InductorError, LoweringError
from .graph import GraphLowering, constant_name
from .ir import KERNEL_STEPS
from .layout_optimization import layout_key, mark_saved_layouts, saved_output_orders
from .memory_order import dense_strides
from .options import CompileOptions
from .passes import fold_attention_masks
from .passes.common_subexpressions import merge_common_subexpressions
from .passes.matmul_epilogues import fold_activations_into_matmuls
from .passes.max_pool_offsets import save_offsets_for_max_pool_backward
from .passes.scatter_adds import fold_adds_into_scatters
from .passes.split_reductions import split_reductions
from .runtime.cuda_graphs import CudaGraphRunner
from .runtime.profiling import profiled_call
from .runtime.wrapper_support import with_layout
from .scheduler import Scheduler
from .size_questions import SizeQuestions
from .sizes import as_expr

output_code_log = logs.channel("output_code")
log = logs.channel("inductor")


class CompiledGraph:
    """A callable running the wrapper; `source` is its Python, `kernel_sources` the kernels it calls."""

    def __init__(self, key: str, source: str, kernel_sources: dict[str, str], constants: dict, cache_hit: bool):
        self.key, self.source, self.kernel_sources, self.cache_hit = key, source, kernel_sources, cache_hit
        module = types.ModuleType("inductor_compiled_graph")
        module.constants = constants
        exec(compile(source, "<inductor wrapper>", "exec"), module.__dict__)
        self._call = module.call
        self._profiled_call = None  # made on the first call under torch.profiler (runtime/profiling.py)
        self.written_inputs: tuple[int, ...] = module.written_inputs  # argument positions written in place
        self.copies_host_values: bool = module.copies_host_values  # CPU values copied to the device
        self.inputs_kept_on_error: bool = getattr(module, "inputs_kept_on_error", False)  # no input written when a call raises
        self.size_key = module.size_key  # the sizes `call` reads from its arguments

    @property
    def kernel_count(self) -> int:
        return len(self.kernel_sources)

    def __call__(self, *args):
        return self.call_boxed(list(args))

    def call_boxed(self, args: list):
        """Runs the graph on `args` and empties the list: a caller that holds no other reference
        to an argument (aot_autograd's backward, with the saved activations) lets the wrapper
        free it after its last use instead of at the end of the call.

        It runs with __torch_function__ off: the graph already holds what a TorchFunctionMode
        or a tensor subclass did to the traced code, and the wrapper calls some externs through
        their Python bindings (torch.addmm, torch.convolution: codegen/wrapper.py), which would
        hand them to the mode again (a mode adding 1 to every result added it twice)."""
        with _NO_TORCH_FUNCTION():
            if torch.autograd._profiler_enabled():
                if self._profiled_call is None:
                    self._profiled_call = profiled_call(self._call, self.kernel_sources, self.key)
                return self._profiled_call(args)
            return self._call(args)


_NO_TORCH_FUNCTION = torch._C.DisableTorchFunction


def _input_key(example_inputs) -> str:
    parts = []
    for x in example_inputs:
        if isinstance(x, torch.Tensor):
            parts.append(f"T{tuple(x.shape)}{x.stride()}{x.dtype}{x.device}")
        else:
            parts.append(f"{type(x).__name__}")
    return ";".join(parts)


def _meta_key(gm) -> str:
    """Symbolic sizes change the generated code: they belong in the key, every node's, as
    inductor reads them (through the shape env's replacements). Two graphs of the same code and
    input shapes `(4, s1)` differ where a guard specialized `s1` (max_pool1d reads sizes as
    ints: s1 -> 6 in one, s1 -> 9 in the other) and so do their output sizes."""
    parts = []
    for node in gm.graph.nodes:
        val = node.meta.get("val", node.meta.get("example_value"))
        if isinstance(val, torch.Tensor):
            parts.append(str(tuple(as_expr(s) for s in val.shape)))
        elif isinstance(val, (torch.SymInt, torch.SymFloat)):
            parts.append(str(as_expr(val)))
        elif node.op == "placeholder":
            parts.append(type(val).__name__)
    return ";".join(parts)


def _uncompiled(gm: torch.fx.GraphModule, example_inputs):
    """The ATen graph run as it is, handing the saved values the partition marked channels-last
    (layout_optimization.py) over so: the backward, compiled, reads them in that layout, and run
    as it is the forward returns eager's. A forward that reads a symbolic float input is known
    to run so when the pair is cut (partition_for_inductor keeps its layouts); one that falls
    back at its lowering (arithmetic on a symbolic number) is found out only here."""
    metrics.counters.graphs_run_uncompiled += 1
    run = run_graph_module(gm, example_inputs)
    orders = {k: order for k, order in saved_output_orders(gm).items() if order is not None}

    def run_with_saved_layouts(*args):
        outputs = list(run(*args))
        for k, order in orders.items():
            strides = tuple(int(stride) for stride in dense_strides(outputs[k].shape, order))
            outputs[k] = with_layout(outputs[k], strides, outputs[k].dtype)
        return outputs

    # The graph runs in its order, which writes inputs last (aot_autograd's copy_ before the
    # output): a call that raises has written none.
    run_with_saved_layouts.inputs_kept_on_error = True
    return run_with_saved_layouts


def compile_aten_graph(gm: torch.fx.GraphModule, example_inputs, *, mode=None, options=None,
                       strided_outputs: bool = False, may_guard: bool = True):
    """Compile a functional ATen graph (placeholders in call order, returns a tuple/list).

    `strided_outputs`: an output may be a strided view in eager's dim order instead of having
    eager's exact strides (a padded matmul's result sliced, as torch.compile returns it); only
    for graphs whose outputs no compiled graph reads later (inference, not a forward's saved
    values, which the backward was traced to read with eager's strides).

    `may_guard`: whether a question about symbolic sizes may become a guard of the caller's
    entry (size_questions.py); not for a backward compiled after the entry's guards were built.

    `mode` and `options`: torch.compile's (options.py: CompileOptions.from_user says what is
    valid; `options` may also be a CompileOptions)."""
    options = CompileOptions.from_user(mode, options)
    targets = KernelTargets.from_options(options)
    targets.check(example_inputs)
    if _reads_symbolic_floats(gm):
        # A float that changes between calls and is no arithmetic on sizes (capture's automatic
        # dynamic float numbers, a float read with `.item()`): kernels take integer sizes, not
        # float arguments, and baking the example value in would be wrong on every other value.
        # The ATen graph runs as it is. (Floats computed from sizes, `n / (n - 1)`, kernels
        # compute from the integer sizes.)
        log.info("inductor: the graph reads a symbolic float; running its ATen graph without compiling it")
        return _uncompiled(gm, example_inputs)
    numbers = _number_symbols(gm)
    if numbers and _sign_sensitive(gm, numbers):
        # Kernels compute sizes' `//`, `%`, abs, max... with non-negative operands in mind; a
        # number input may be negative (where C's division differs from Python's).
        log.info("inductor: the graph divides or compares a symbolic number; running its ATen graph without compiling it")
        return _uncompiled(gm, example_inputs)
    try:
        compiled = _compile_graph(gm, example_inputs, options, targets, strided_outputs,
                                  SizeQuestions.of_graph(gm, may_guard=may_guard))
    except (LoweringError, NotImplementedError, TypeError) as err:
        if not numbers and not _computes_symbolic_floats(gm):
            raise
        # Arithmetic on an int input that changes between calls (capture's automatic dynamic
        # numbers: `abs(n)`, `n == 3`), or float arithmetic on sizes (`max(n / 2, 1.0)`, a float
        # where an op needs a Python number), that lowering or the kernels' printers have no
        # rule for yet: run the ATen graph.
        log.info("inductor: cannot lower arithmetic on a symbolic number (%s); running its ATen graph without compiling it", err)
        return _uncompiled(gm, example_inputs)
    if options.cudagraphs and any(isinstance(x, torch.Tensor) and x.is_cuda for x in example_inputs):
        if compiled.written_inputs:
            # Recording runs the graph once more, and a replay writes the runner's copies of the
            # inputs: both would break writes into the caller's tensors.
            log.info("inductor: the graph writes its inputs %s in place; running it without CUDA graphs",
                     list(compiled.written_inputs))
            return compiled
        if compiled.copies_host_values:
            # A replay would copy from the pinned memory of the recorded call, not this call's values.
            log.info("inductor: the graph reads CPU values on the GPU; running it without CUDA graphs")
            return compiled
        return CudaGraphRunner(compiled)
    return compiled


def _number_symbols(gm: torch.fx.GraphModule) -> set:
    """Symbols of the graph's int inputs that no tensor input has as a size or stride: numbers
    that change between calls (capture's automatic dynamic numbers), which may be negative."""
    placeholders = [node.meta.get("val") for node in gm.graph.find_nodes(op="placeholder")]
    sizes: set = set()
    numbers: set = set()
    for val in placeholders:
        if isinstance(val, torch.Tensor):
            for s in (*val.shape, *val.stride()):
                if isinstance(s, torch.SymInt):
                    sizes |= s.node.expr.free_symbols
        elif isinstance(val, torch.SymInt):
            numbers |= val.node.expr.free_symbols
    return numbers - sizes


def _sign_sensitive(gm: torch.fx.GraphModule, numbers: set) -> bool:
    """Whether a symbolic value the graph computes from `numbers` is more than a polynomial."""
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        for value in val if isinstance(val, (tuple, list)) else (val,):
            if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                expr = value.node.expr
                if expr.free_symbols & numbers and not _polynomial(expr):
                    return True
    return False


def _polynomial(expr) -> bool:
    if isinstance(expr, sympy.logic.boolalg.Boolean):
        return False
    return not expr.atoms(sympy.Function) and all(p.exp.is_Integer and p.exp >= 0 for p in expr.atoms(sympy.Pow))


def _compile_graph(gm, example_inputs, options: CompileOptions, targets: KernelTargets,
                   strided_outputs: bool, sizes: SizeQuestions) -> CompiledGraph:
    """`targets`: each device's kernel backend, as `options` choose them; `sizes`: the
    questions code generation asks about symbolic sizes."""
    constants = _constants(gm)
    # Constants' values reach the wrapper at run time, but their sizes/strides/dtypes are in the kernels.
    key = cache.digest(gm.code, _input_key(example_inputs), _input_key(constants.values()), _meta_key(gm),
                       _environment_key(targets, example_inputs), targets.key(), options.tuning,
                       str(options.pad_mm), str(strided_outputs), f"combo_kernels={options.combo_kernels}",
                       f"gemm_backends={options.gemm_backends}", layout_key(gm, options.layout_optimization))
    cached, key = _cached_graph(key, constants, sizes)
    if cached is not None:
        return cached
    start = time.perf_counter()
    with logs.phase("lowering"):
        ensure_meta_vals(gm, example_inputs)
        merge_common_subexpressions(gm)
        fold_adds_into_scatters(gm)
        fold_activations_into_matmuls(gm, example_inputs, options, targets)
        graph = GraphLowering(gm, example_inputs, options=options, strided_outputs=strided_outputs)
        graph.run()
    with logs.phase("scheduling"):
        split_reductions(graph)
        steps = combine_small_kernels(Scheduler(graph).run(), graph, targets.combo_kernels,
                                      independent=options.combo_kernels)
    buffers = {b.name: b for b in graph.buffers}
    buffers.update(graph.input_buffers())
    kernels = [s for s in steps if isinstance(s, KERNEL_STEPS)]
    # Kernel code generation and builds (kernel_calls does both; the builds log their own phase).
    with logs.phase("codegen", f"{len(kernels)} kernels"):
        calls = targets.kernel_calls(kernels, buffers, {s: graph.hints[s] for s in graph.symbol_sources},
                                     options.tuning, sizes)
        source = WrapperCodegen(graph, steps, calls).generate()
    kernel_sources = {name: call.source for name, call in calls.items()}
    records = {name: {"entry": list(call.entry), "symbol": call.symbol, "source": call.source}
               for name, call in calls.items()}
    folder = cache.publish("graphs", key, {GRAPH_WRAPPER: source, GRAPH_KERNELS: json.dumps(records, indent=1),
                                           GRAPH_SIZE_QUESTIONS: json.dumps(sizes.asked, indent=1)})
    elapsed = time.perf_counter() - start
    metrics.counters.graphs_compiled += 1
    metrics.counters.kernels_generated += len(kernels)
    metrics.counters.codegen_seconds += elapsed
    log.info("inductor: compiled %d kernels in %.2fs", len(kernels), elapsed)
    if output_code_log.isEnabledFor(logging.INFO):
        text = "\n\n".join([source, *kernel_sources.values()])
        output_code_log.info("inductor: output code %s\n%s", folder / GRAPH_WRAPPER, text)
    return CompiledGraph(key, source, kernel_sources, constants, cache_hit=False)


# A graph's cache entry: its wrapper, and each kernel's source with the entry it is built into
# ({name: {"entry": [backend name, key], "symbol": function, "source": text}}), so that kernels
# missing or damaged in the cache are rebuilt on a warm start without generating code again;
# and the questions its code generation asked about symbolic sizes, with their answers.
GRAPH_WRAPPER, GRAPH_KERNELS, GRAPH_SIZE_QUESTIONS = "wrapper.py", "kernels.json", "size_questions.json"


def _cached_graph(key: str, constants: dict, sizes: SizeQuestions) -> tuple[CompiledGraph | None, str]:
    """(the graph from its cache entry, its kernels' entries checked and rebuilt if need be, or
    None; the key a graph compiled now is stored under).

    A graph of symbolic sizes was generated under answers to size questions (32-bit indices
    while the sizes fit): they are asked again, which takes their guards again, and a graph
    that other answers made (example sizes past 2**31) is stored under a key of its own."""
    folder = cache.entry("graphs", key)
    if folder is not None:
        asked = json.loads((folder / GRAPH_SIZE_QUESTIONS).read_text())
        answers = sizes.answers_again(asked)
        if answers != [answer for _, _, answer in asked]:
            key = cache.digest(key, json.dumps(answers))
            folder = cache.entry("graphs", key)
    if folder is None:
        return None, key
    source = (folder / GRAPH_WRAPPER).read_text()
    records = json.loads((folder / GRAPH_KERNELS).read_text())
    for record in records.values():
        kind, kernel_key = record["entry"]
        if cache.entry(kind, kernel_key) is None:
            rebuilt = BACKENDS[kind].rebuild(record["source"], record["symbol"])
            if rebuilt != kernel_key:
                raise InductorError(f"inductor: rebuilding {kind}/{kernel_key} for graph {key} gave {kind}/{rebuilt}")
    compiled = CompiledGraph(key, source, {name: r["source"] for name, r in records.items()}, constants, cache_hit=True)
    metrics.counters.graph_cache_hits += 1
    if output_code_log.isEnabledFor(logging.INFO):
        text = "\n\n".join([source, *compiled.kernel_sources.values()])
        output_code_log.info("inductor: graph cache hit %s\n%s", folder / GRAPH_WRAPPER, text)
    return compiled, key


def _environment_key(targets: KernelTargets, example_inputs) -> str:
    """What besides the graph and options decides the generated code: versions, and the
    toolchains and hardware the kernels are built for (each backend's `environment`)."""
    return cache.digest(torch.__version__, sys.version, cache.inductor_source_hash(),
                        *targets.environment(example_inputs))


def _constants(gm) -> dict:
    found = {}
    for node in gm.graph.nodes:
        if node.op == "get_attr":
            value = gm
            for part in node.target.split("."):
                value = getattr(value, part)
            if isinstance(value, torch.Tensor):
                found[constant_name(node.target)] = value
    return found


def ensure_meta_vals(gm: torch.fx.GraphModule, example_inputs) -> None:
    """Fill node.meta['val'] by running the graph on meta tensors when no tracer did."""
    if all("val" in n.meta for n in gm.graph.nodes if n.op in ("placeholder", "call_function")):
        return

    def to_meta(x):
        if isinstance(x, torch.Tensor):
            return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
        return x

    class MetaPropagation(torch.fx.Interpreter):
        """Records each node's value; `convert` maps inputs and get_attr constants alike."""

        def __init__(self, convert):
            super().__init__(gm)
            self.convert = convert

        def get_attr(self, target, args, kwargs):
            return self.convert(super().get_attr(target, args, kwargs))

        def run_node(self, node):
            result = super().run_node(node)
            node.meta.setdefault("val", result)
            return result

    try:
        MetaPropagation(to_meta).run(*[to_meta(x) for x in example_inputs])
    except (NotImplementedError, RuntimeError) as error:
        # A data-dependent op (nonzero, boolean masks) has no meta kernel: take sizes from a real
        # run on the example inputs. Such sizes are only right for these inputs: callers that
        # need more trace with fake tensors (aot_autograd does) to get symbolic sizes instead.
        log.warning("inductor: meta shape propagation failed (%s); running the graph on the example inputs", error)
        for node in gm.graph.nodes:
            node.meta.pop("val", None)
        MetaPropagation(lambda x: x).run(*example_inputs)


def compile_fx(gm: torch.fx.GraphModule, example_inputs, *, mode=None, options=None):
    """The "inductor" backend: aot_autograd with inductor's decompositions and the min-cut
    partitioner; every forward/backward/inference ATen graph goes to `compile_aten_graph`.

    Passes that change which ATen kernels the trace picks (sdpa's, from its mask) run first."""
    fold_attention_masks(gm)
    # Checked once, here; the backward compiles lazily inside `.backward()` (on CUDA, on
    # autograd's device thread) with the same object.
    options = CompileOptions.from_user(mode, options)

    def compile_graph(graph_module, inputs):
        return compile_aten_graph(graph_module, inputs, options=options)

    def compile_backward(graph_module, inputs):
        # Compiled on the first `.backward()`, after capture built the entry's guards.
        return compile_aten_graph(graph_module, inputs, options=options, may_guard=False)

    def compile_inference(graph_module, inputs):
        return compile_aten_graph(graph_module, inputs, options=options, strided_outputs=True)

    return aot_autograd.aot_module_simplified(
        gm, example_inputs, compile_graph, compile_backward, decompositions=decompositions(),
        partition_fn=functools.partial(partition_for_inductor, options=options), inference_compiler=compile_inference,
        keep_input_mutations=True,
    )


def partition_for_inductor(joint, joint_inputs, *, num_fwd_outputs, options: CompileOptions | None = None):
    """The min-cut partition, after the joint-graph rewrites that change what may be saved; the
    pair agrees on the layouts of saved activations (layout_optimization.py)."""
    save_offsets_for_max_pool_backward(joint)
    forward, backward = aot_autograd.min_cut_rematerialization_partition(joint, joint_inputs, num_fwd_outputs=num_fwd_outputs)
    # A forward that will run uncompiled (a symbolic float input) computes nothing channels-last:
    # the pair keeps eager's layouts rather than copying what it saves into channels-last.
    enabled = False if _reads_symbolic_floats(forward) else (options or CompileOptions()).layout_optimization
    mark_saved_layouts(forward, backward, enabled, joint)
    return forward, backward


def _symbolic_floats(gm):
    return (val for val in (n.meta.get("val") for n in gm.graph.nodes) if isinstance(val, torch.SymFloat))


def _computes_symbolic_floats(gm) -> bool:
    return any(True for _ in _symbolic_floats(gm))


def _reads_symbolic_floats(gm) -> bool:
    """Whether a symbolic float of the graph stands on a float symbol (a float input, a float
    read from data) rather than on integer sizes alone, or is an input whose sizes no other
    input carries. A float input computed from sizes (a forward's `n / (n - 1)` saved for the
    backward) is computed again by the kernels from the sizes the tensors bring, and the value
    passed is not read."""
    carried = _tensor_symbols(gm)
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if isinstance(val, torch.SymFloat):
            symbols = as_expr(val).free_symbols
            if any(not symbol.is_integer for symbol in symbols) or (node.op == "placeholder" and not symbols <= carried):
                return True
    return False


def _tensor_symbols(gm) -> set:
    """The symbols of the graph's tensor inputs' sizes and strides and of its int inputs."""
    found: set = set()
    for node in gm.graph.find_nodes(op="placeholder"):
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            for s in (*val.shape, *val.stride()):
                found |= as_expr(s).free_symbols
        elif isinstance(val, torch.SymInt):
            found |= as_expr(val).free_symbols
    return found


# How compiler.compile checks mode=/options= when it is called, before the first graph
# (torch.compile checks inductor's there too).
compile_fx.parse_options = CompileOptions.from_user
