"""Modules inside compiled code (docs/design.md, rule 22): each kernel that torch.compile's inductor generates
counts for the module it came from, so the modules of a compiled model are regions again.

While a profile with compiled modules is open (:class:`tracking`), and only then:

- inductor keeps provenance (``trace.provenance_tracking_to_timeline``): each compiled graph carries, per
  kernel, the post-grad nodes it computes and their pre-grad nodes, and each extern kernel call (``addmm``)
  goes through a function of its own in the generated module;
- the dynamo graph each compile starts from (the argument of ``torch._inductor.compile_fx.compile_fx``, which
  torch.compile's inductor backend looks up at each compile) gives each pre-grad node its module
  (``nn_module_stack``), resolved to a module object through the graph's parameters and buffers;
- each compiled graph (``CompiledFxGraph.post_compile``, which runs after a fresh compile and after a load
  from inductor's caches alike) has its kernels mapped: a kernel belongs to the deepest module containing
  every pre-grad node it computes.

A kernel whose module's region is not already open around it (a module inside compiled code) is replaced,
in the generated module's namespace, by RegionWrappers of that region and of its marked ancestors inside
compiled code, for as long as the profile is open; a kernel the code calls from several places, or that a
graph run by several modules puts in different regions, goes through a dispatch by place and by module
(tracking._install). The code dynamo runs is untouched: no recompilation, no graph break. Graphs stay
known for the process's life, so a later profile of the same compiled model maps them again without a new
compile.

Anything that cannot be traced (an older or newer inductor without these attributes, a kernel without
pre-grad nodes, a backward graph: torch 2.15 keeps no provenance for those) stays unmapped and is counted
for the ``COMPILED_MODULES`` warning. Nothing here may disturb a compile: every hook catches its own errors.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import re
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import torch
from torch import nn

from regionprof import _native

#: One step of an ``nn_module_stack`` entry after its frame local (``L['self']``): ``.name``, ``.0``,
#: ``[0]``, ``['name']`` or ``._modules['name']``.
_STACK_STEP = re.compile(r"\._modules\['([^']*)'\]|\.([A-Za-z0-9_]+)|\[(\d+)\]|\['([^']*)'\]")
_STACK_LOCAL = re.compile(r"L\['([^']*)'\]")


def stack_entry_path(entry: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """An ``nn_module_stack`` entry (``"L['self'].blocks[0].attn"``) as (frame local, path below it):
    ``('self', ('blocks', '0', 'attn'))``; None for a form not understood."""
    head = _STACK_LOCAL.match(entry)
    if head is None:
        return None
    steps: List[str] = []
    position = head.end()
    while position < len(entry):
        step = _STACK_STEP.match(entry, position)
        if step is None:
            return None
        steps.append(next(group for group in step.groups() if group is not None))
        position = step.end()
    return head.group(1), tuple(steps)


def common_owner(paths: Sequence[Tuple[str, ...]]) -> Tuple[str, ...]:
    """The deepest module path containing every one of ``paths`` (their common prefix)."""
    owner = paths[0]
    for path in paths[1:]:
        length = 0
        while length < min(len(owner), len(path)) and owner[length] == path[length]:
            length += 1
        owner = owner[:length]
    return owner


@dataclass
class _Kernel:
    name: str  # the name the generated code calls it by, in its module's namespace ("": not found)
    key: str  # inductor's kernel key ("cpp_fused_relu_0:2", "extern_kernels.addmm:1")
    owner: Optional[Tuple[str, ...]]  # its module's path below the compiled frame's module; None: not traced


@dataclass
class _Graph:
    """One compiled graph: its generated module's namespace and its kernels. Dynamo compiles a module's
    forward once for every instance of its class that it can (parameters are graph inputs), so a graph
    belongs to a class, not to one module."""

    namespace: Dict[str, Any]
    backward: bool
    frame_type: Optional[type]  # the class of the module whose frame dynamo compiled; None: not found
    kernels: List[_Kernel] = field(default_factory=list)
    #: Inductor's CompiledFxGraph: once it is gone (torch._dynamo.reset()) its code never runs again.
    compiled: Optional["weakref.ReferenceType[Any]"] = None

    def alive(self) -> bool:
        return self.compiled is None or self.compiled() is not None


_lock = threading.Lock()  # guards _graphs, _sessions, _dynamo_graphs and _patches
_graphs: List[_Graph] = []
_sessions: List["tracking"] = []
#: By compile id: the class of the module whose frame dynamo compiled, each node's module path below it
#: (None: not known), and the nodes that only view their input (_VIEWS). A compile id is kept for its
#: backward graph, compiled later.
_dynamo_graphs: Dict[str, Tuple[Optional[type], Dict[str, Optional[Tuple[str, ...]]], Set[str]]] = {}
_patches: Optional[contextlib.ExitStack] = None
_KEPT_DYNAMO_GRAPHS = 1024  # compile ids whose nodes' modules are kept (a backward graph compiles after its forward)


def _compile_id() -> str:
    return str(torch._guards.CompileContext.current_compile_id())


def _last_entry(node: Any) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """The innermost module of a node's ``nn_module_stack`` as (frame local, path below it); None without."""
    stack = node.meta.get("nn_module_stack") or {}
    return stack_entry_path(str(list(stack.values())[-1][0])) if stack else None


def _note_dynamo_graph(gm: Any, session: "tracking") -> None:
    """Each node of a dynamo graph to its module's path below the frame's module (None: not known), kept
    by the compile id for _note_compiled_graph. The frame's module is found through a graph input that is
    a parameter or buffer of a module of ``session``'s object; a node without a module stack is the
    frame's own. A frame with modules in more than one local (a function given two models) is not traced."""
    frames: Dict[str, nn.Module] = {}  # frame local -> its module
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        example = getattr(node.meta.get("grapharg"), "example", None)
        path = session.tensor_paths.get(id(example)) if example is not None else None
        parsed = _last_entry(node)
        if path is None or parsed is None:
            continue
        local, below = parsed
        if len(below) <= len(path) and path[len(path) - len(below):] == below:
            frame = session.by_path.get(".".join(path[:len(path) - len(below)]))
            if frame is not None:
                frames.setdefault(local, frame)
    owners: Dict[str, Optional[Tuple[str, ...]]] = {}
    views: Set[str] = set()
    if len(frames) == 1:
        (local, frame), = frames.items()
        for node in gm.graph.nodes:
            if node.op not in ("placeholder", "output"):
                parsed = _last_entry(node)
                owners[node.name] = () if parsed is None else parsed[1] if parsed[0] == local else None
                if is_view(node):
                    views.add(node.name)
    _dynamo_graphs[_compile_id()] = (type(frame) if len(frames) == 1 else None, owners, views)
    while len(_dynamo_graphs) > _KEPT_DYNAMO_GRAPHS:  # the oldest first: a long job compiles without end
        del _dynamo_graphs[next(iter(_dynamo_graphs))]


#: Tensor methods and torch functions that only reshape or reinterpret their input: a kernel that also
#: "computes" such a node (the caller's ``logits.view(-1, n)`` folded into the classifier's addmm) does no
#: work of that node's module.
_VIEWS = frozenset(("view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "contiguous", "expand",
                    "expand_as", "flatten", "unflatten", "squeeze", "unsqueeze", "unbind", "split", "chunk",
                    "narrow", "select", "getitem", "size", "dim"))


def is_view(node: Any) -> bool:
    """A node that only views its input: a dynamo graph's ``x.view(...)``, ``torch.flatten``; an exported
    program's ``aten.view.default`` (an operator overload, named ``view.default``)."""
    target = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    return node.op in ("call_method", "call_function") and target.split(".", 1)[0] in _VIEWS


def _extern_wrappers(namespace: Mapping[str, Any], kernel: str) -> List[str]:
    """The functions the generated code calls extern kernel ``kernel`` through (provenance on), in call
    order: ``extern_kernels_<kernel>_<n>`` with its non-word characters as ``_``."""
    prefix = re.sub(r"\W", "_", f"extern_kernels_{kernel}_")
    found = [(int(name[len(prefix):]), name) for name in namespace
             if name.startswith(prefix) and name[len(prefix):].isdigit()]
    return [name for _, name in sorted(found)]


def _kernel_owners(namespace: Mapping[str, Any], mapping: Mapping[str, Any],
                   owners: Mapping[str, Optional[Tuple[str, ...]]],
                   views: Set[str]) -> List[Tuple[str, str, Optional[Tuple[str, ...]]]]:
    """The kernels of one compiled graph from its provenance ``mapping``: (the name the generated code
    calls it by, "" when not found; inductor's kernel key; the path of the deepest module containing every
    pre-grad node it computes, views aside when it computes more than views; None when any is unknown),
    in the order of the keys' handles, which is the order of the generated code's calls."""
    code_to_post: Mapping[str, Sequence[str]] = mapping.get("cppCodeToPost") or {}
    post_to_pre: Mapping[str, Sequence[str]] = mapping.get("postToPre") or {}
    keys_by_name: Dict[str, List[Tuple[int, str]]] = {}
    for key in code_to_post:
        name, _, handle = key.rpartition(":")
        keys_by_name.setdefault(name or key, []).append((int(handle) if handle.isdigit() else 0, key))
    kernels: List[Tuple[str, str, Optional[Tuple[str, ...]]]] = []
    for name, keys in keys_by_name.items():
        keys.sort()
        if name in namespace:
            called = [name] * len(keys)
        else:  # an extern kernel: one wrapper per call, numbered in the order the calls were generated
            called = _extern_wrappers(namespace, name)
            if len(called) != len(keys):
                called = [""] * len(keys)
        found = []
        for (_, key), global_name in zip(keys, called):
            pre = [node for post in code_to_post[key] for node in post_to_pre.get(post, ())]
            working = [node for node in pre if node not in views] or pre
            paths = [owners.get(node) for node in working]
            known = [path for path in paths if path is not None]
            found.append((global_name, key, common_owner(known) if paths and len(known) == len(paths) else None))
        kernels += found
    return kernels


def _note_compiled_graph(graph: Any, generated_call: Any) -> None:
    """Maps a compiled graph's kernels to modules and installs the open profiles' wrappers on them."""
    function = getattr(generated_call, "__func__", generated_call)
    namespace = getattr(function, "__globals__", None)
    if not isinstance(namespace, dict) or "call" not in namespace:
        return  # not a Python wrapper (cpp_wrapper): nothing to wrap
    backward = bool(getattr(graph, "fx_kwargs", {}).get("is_backward", False))
    try:
        mapping = json.loads(getattr(graph, "inductor_provenance_mapping_str", None) or "{}")
    except ValueError:
        mapping = {}
    with _lock:
        if not _sessions or any(known.namespace is namespace for known in _graphs):
            return
        frame_type, owners, views = _dynamo_graphs.get(_compile_id(), (None, {}, set()))
        try:
            alive: Optional["weakref.ReferenceType[Any]"] = weakref.ref(graph)
        except TypeError:
            alive = None
        compiled = _Graph(namespace, backward, frame_type,
                          [_Kernel(*kernel) for kernel in _kernel_owners(namespace, mapping, owners, views)], alive)
        _graphs[:] = [known for known in _graphs if known.alive()]
        _graphs.append(compiled)
        for session in _sessions:
            session.install(compiled)


@dataclass
class Seen:
    """What the compiled graphs of one compiled module held, in one profile."""

    graphs: int = 0  # compiled graphs that ran in it (forward and backward)
    backward_graphs: int = 0  # of which backward: never mapped (no provenance)
    mapped: int = 0  # forward kernels counted for a module
    unmapped: List[str] = field(default_factory=list)  # the keys of the forward kernels that were not


class tracking:
    """For a profile's block: compiled code's kernels counted for their modules' regions (see the module's
    docstring). ``modules``: every module of the profiled object by path (those inside compiled code
    included); ``regions``: path -> (region handle, whether a call wrapper opens it: a module outside
    compiled code); ``compiled``: the paths of the outermost compiled modules, with the handle of the
    region their unmapped kernels go to (None: they are in it already, the compiled call being a region);
    ``framed``: the compiled modules whose calls go through in_frame; ``ops``: kernel op ranges too
    (inductor's ``cpp.enable_kernel_profile`` for CPU kernels)."""

    def __init__(self, modules: Mapping[str, nn.Module], regions: Mapping[str, Tuple[int, bool]],
                 compiled: Mapping[str, Optional[int]], framed: Sequence[str], ops: bool) -> None:
        self.by_path = dict(modules)
        #: id of each parameter and buffer -> the path of the module holding it (as a tuple).
        self.tensor_paths: Dict[int, Tuple[str, ...]] = {}
        for path, module in modules.items():
            for tensor in [*module.parameters(recurse=False), *module.buffers(recurse=False)]:
                self.tensor_paths.setdefault(id(tensor), tuple(path.split(".")) if path else ())
        self._regions = dict(regions)
        self._compiled = dict(compiled)
        self._framed = set(framed)
        self._ops = ops
        self._installed: List[Tuple[Dict[str, Any], str, Any]] = []
        #: Per outermost compiled module's path: what its compiled graphs held.
        self.seen: Dict[str, Seen] = {path: Seen() for path in compiled}
        #: Why graphs could not be mapped (internal errors), for the COMPILED_MODULES warning.
        self.failures: List[str] = []

    def __enter__(self) -> "tracking":
        global _patches
        with _lock:
            if not _sessions:
                _patches = _patch_inductor(self._ops)
            _sessions.append(self)
            _graphs[:] = [known for known in _graphs if known.alive()]
            for graph in _graphs:
                self.install(graph)
        return self

    def install(self, graph: _Graph) -> None:
        """Under _lock: _install, an error in it (a form of generated code not foreseen) noted in
        ``failures`` instead of reaching the profiled program; what it installed is removed at the end."""
        try:
            self._install(graph)
        except Exception as error:  # noqa: BLE001 - the profiled program goes on, the warning says so
            self.failures.append(f"{type(error).__name__}: {error}")

    def __exit__(self, *exc: Any) -> None:
        with _lock:
            self._leave()

    def _leave(self) -> None:
        global _patches
        while self._installed:
            namespace, name, previous = self._installed.pop()
            namespace[name] = previous
        if self in _sessions:
            _sessions.remove(self)
        if not _sessions and _patches is not None:
            _patches.close()
            _patches = None

    def _compiled_path(self, path: Tuple[str, ...]) -> Optional[str]:
        """The outermost compiled module containing ``path`` (its path), or None."""
        for length in range(len(path) + 1):
            candidate = ".".join(path[:length])
            if candidate in self._compiled:
                return candidate
        return None

    def _install(self, graph: _Graph) -> None:
        """Under _lock: the wrappers of ``graph``'s kernels, for each module of this profile's object that
        runs it (each module of its frame's class inside, or being, a compiled module). A kernel name the
        generated code calls from several places (one kernel for every layer of a stack) or that several
        modules run (blocks of one shape, compiled regionally) may need different regions at each call:
        the call is then told apart by its place, counted from the start of the graph's call, and by the
        module whose compiled call runs it (in_frame). Where that cannot be done the kernel counts as not
        mapped and has no wrapper."""
        frames = [(compiled, tuple(path.split(".")) if path else ())
                  for path, module in self.by_path.items() if type(module) is graph.frame_type
                  for compiled in [self._compiled_path(tuple(path.split(".")) if path else ())] if compiled is not None]
        if not frames:
            return
        graph_object = graph.compiled() if graph.compiled is not None else None
        found = [(compiled, Seen(graphs=1, backward_graphs=int(graph.backward))) for compiled, _ in frames]
        if graph.backward:
            self._count_when_run(graph_object, found)
            return
        sites: Dict[str, List[_Kernel]] = {}
        for kernel in graph.kernels:
            sites.setdefault(kernel.name, []).append(kernel)
        calls: Optional[_GraphCalls] = None
        for name, kernels in sites.items():
            chains: Dict[Tuple[str, int], Tuple[int, ...]] = {}  # (frame path, place) -> regions
            for compiled, frame in frames:
                for place, kernel in enumerate(kernels):
                    if kernel.owner is not None and name:
                        chain = self._regions_around(frame + kernel.owner)
                    else:
                        unmapped_region = self._compiled[compiled]
                        chain = () if unmapped_region is None else (unmapped_region,)
                    chains[(".".join(frame), place)] = chain
            paths = {path for path, _ in chains}
            places = range(len(kernels))
            by_frame = any(len({chains[(path, place)] for path in paths}) > 1 for place in places)
            by_place = any(len({chains[(path, place)] for place in places}) > 1 for path in paths)
            told_apart = ((not by_frame or paths <= self._framed) and (not by_place or graph_object is not None))
            for _, seen in found:
                for kernel in kernels:
                    if kernel.owner is None or not name or not told_apart:
                        seen.unmapped.append(kernel.key)
                    else:
                        seen.mapped += 1
            if not told_apart or not any(chains.values()) or name not in graph.namespace:
                continue
            original = graph.namespace[name]
            if by_place and calls is None:
                calls = _GraphCalls()
                self._install_attribute(vars(graph_object), "current_callable",
                                        calls.counting(graph_object.current_callable))
            self._install_attribute(graph.namespace, name, _wrapped(
                chains, len(kernels), by_frame, calls if by_place else None, name, original))
        self._count_when_run(graph_object, found)

    def _count_when_run(self, graph_object: Any, found: List[Tuple[str, "Seen"]]) -> None:
        """``found`` (what a graph holds, per compiled module running it) added to ``seen`` when the graph
        first runs in this profile: inductor keeps graphs that no longer run (a model compiled again, a
        dynamo reset), and only what ran belongs in the profile's warnings. Counted at once when the
        graph's call cannot be wrapped."""

        def count() -> None:
            for compiled, seen in found:
                into = self.seen[compiled]
                into.graphs += seen.graphs
                into.backward_graphs += seen.backward_graphs
                into.mapped += seen.mapped
                into.unmapped += seen.unmapped

        graph_call = getattr(graph_object, "current_callable", None)
        if graph_object is None or not callable(graph_call):
            count()
            return
        counted = [False]

        def call_counting_once(*args: Any, **kwargs: Any) -> Any:
            if not counted[0]:
                counted[0] = True
                count()
            return graph_call(*args, **kwargs)

        self._install_attribute(vars(graph_object), "current_callable", call_counting_once)

    def _install_attribute(self, namespace: Dict[str, Any], name: str, value: Any) -> None:
        self._installed.append((namespace, name, namespace[name]))
        namespace[name] = value

    def _regions_around(self, path: Tuple[str, ...]) -> Tuple[int, ...]:
        """The handles to open around a kernel of module ``path``, outermost first: the regions of it and of
        its marked ancestors that lie inside compiled code, up to the first region a call opens (open
        already) or the root; empty when no such region holds it (its time is the enclosing region's or
        the runs' residual). So a kernel of ``a.l`` with every_level is inside ``a`` as in eager mode."""
        chain: List[int] = []
        for length in range(len(path), -1, -1):
            region = self._regions.get(".".join(path[:length]))
            if region is not None:
                handle, opened_by_call = region
                if opened_by_call:
                    break
                chain.append(handle)
        return tuple(reversed(chain))


_frame = threading.local()  # .path: the compiled module (its path) whose call this thread is in


def in_frame(path: str, call: Any) -> Any:
    """``call`` (a compiled module's call) marking this thread as running the module at ``path`` while it
    runs, for the kernels of a graph that several modules run (_dispatching)."""

    def call_in_frame(*args: Any, **kwargs: Any) -> Any:
        outer = getattr(_frame, "path", None)
        _frame.path = path
        try:
            return call(*args, **kwargs)
        finally:
            _frame.path = outer

    return call_in_frame


class _GraphCalls:
    """Per thread, how many times each kernel name was called since the graph's call began."""

    def __init__(self) -> None:
        self._state = threading.local()

    def counting(self, graph_call: Any) -> Any:
        """The graph's call (CompiledFxGraph.current_callable), starting the counts afresh each time."""
        state = self._state

        def call_counting(*args: Any, **kwargs: Any) -> Any:
            outer = getattr(state, "counts", None)
            state.counts = {}
            try:
                return graph_call(*args, **kwargs)
            finally:
                state.counts = outer

        return call_counting

    def place(self, name: str, places: int) -> int:
        """The place of this call of ``name`` among its ``places`` in the generated code."""
        counts = getattr(self._state, "counts", None)
        if counts is None:
            return 0
        done = counts.get(name, 0)
        counts[name] = done + 1
        return done % places


def _in_regions(chain: Tuple[int, ...], function: Any) -> Any:
    """``function`` called inside the regions ``chain`` (outermost first), each a native RegionWrapper."""
    for handle in reversed(chain):
        function = _native.RegionWrapper(handle, function)
    return function


def _dispatching(chains: Mapping[Tuple[str, int], Tuple[int, ...]], places: int, by_frame: bool,
                 calls: Optional[_GraphCalls], name: str, function: Any) -> Any:
    """``function`` inside the regions of (the module whose compiled call runs it, its place among the
    ``places`` calls of ``name``): a native wrapper when every call has the same regions."""
    if len(set(chains.values())) == 1:
        return _in_regions(next(iter(chains.values())), function)
    wrapped = {key: _in_regions(chain, function) for key, chain in chains.items()}
    frame = _frame
    any_frame = next(iter(wrapped))[0]  # without by_frame every frame's regions are the same

    def dispatched(*args: Any, **kwargs: Any) -> Any:
        path = getattr(frame, "path", None) if by_frame else any_frame
        place = calls.place(name, places) if calls is not None else 0
        return wrapped.get((path, place), function)(*args, **kwargs)

    return dispatched


class _TritonKernel:
    """A Triton kernel (inductor calls its ``run``) whose launches open regions."""

    def __init__(self, kernel: Any, run: Any) -> None:
        self._kernel = kernel
        self.run = run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kernel, name)


def _wrapped(chains: Mapping[Tuple[str, int], Tuple[int, ...]], places: int, by_frame: bool,
             calls: Optional[_GraphCalls], name: str, kernel: Any) -> Any:
    """``kernel`` (a generated module's global) opening its regions (_dispatching) around each call; a
    Triton kernel around each launch (its ``run``)."""
    if not inspect.isroutine(kernel) and callable(getattr(kernel, "run", None)):
        return _TritonKernel(kernel, _dispatching(chains, places, by_frame, calls, name, kernel.run))
    return _dispatching(chains, places, by_frame, calls, name, kernel)


def _patch_inductor(ops: bool) -> contextlib.ExitStack:
    """Inductor's provenance on and the two hooks in, until the stack is closed. Under _lock."""
    import torch._inductor.compile_fx as compile_fx_module
    from torch._inductor import config
    from torch._inductor.output_code import CompiledFxGraph

    stack = contextlib.ExitStack()
    patches: Dict[str, Any] = {"trace.provenance_tracking_to_timeline": True}
    if ops:
        patches["cpp.enable_kernel_profile"] = True
    stack.enter_context(config.patch(patches))
    compile_fx = compile_fx_module.compile_fx
    post_compile = CompiledFxGraph.post_compile

    def noting_compile_fx(gm: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            with _lock:
                if _sessions:
                    _note_dynamo_graph(gm, _sessions[-1])
        except Exception:  # noqa: BLE001 - never disturb a compile
            pass
        return compile_fx(gm, example_inputs, *args, **kwargs)

    def noting_post_compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        generated_call = self.current_callable
        result = post_compile(self, *args, **kwargs)
        try:
            _note_compiled_graph(self, generated_call or self.current_callable)
        except Exception as error:  # noqa: BLE001 - never disturb a compile; the warning says so
            with _lock:
                for session in _sessions:
                    session.failures.append(f"{type(error).__name__}: {error}")
        return result

    compile_fx_module.compile_fx = noting_compile_fx
    CompiledFxGraph.post_compile = noting_post_compile

    def restore() -> None:
        compile_fx_module.compile_fx = compile_fx
        CompiledFxGraph.post_compile = post_compile

    stack.callback(restore)
    return stack


def available() -> bool:
    """Whether this torch has what the tracking hooks into."""
    try:
        import torch._inductor.compile_fx as compile_fx_module
        from torch._inductor import config
        from torch._inductor.output_code import CompiledFxGraph
    except ImportError:
        return False
    return (hasattr(compile_fx_module, "compile_fx") and hasattr(CompiledFxGraph, "post_compile")
            and hasattr(config.trace, "provenance_tracking_to_timeline"))



def compiled_earlier(module: nn.Module) -> bool:
    """Whether dynamo holds compiled code for ``module``'s class's forward that no known graph maps: it was
    compiled before any profile tracked compiled modules, so its kernels carry no provenance."""
    code = getattr(getattr(type(module), "forward", None), "__code__", None)
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list

        entries = _debug_get_cache_entry_list(code) if code is not None else []
    except Exception:  # noqa: BLE001 - a torch without it: nothing is known to be compiled
        return False
    with _lock:
        known = any(graph.frame_type is type(module) for graph in _graphs)
    return bool(entries) and not known
