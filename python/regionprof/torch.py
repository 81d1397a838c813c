"""regionprof.torch.profile: a torch model's modules as regions, measured by regionprof's own capture.

A drop-in for AITune's ``aitune.torch.performance.runtime_profile`` profile(): the same discovery and
region ids, the same warm-up/measured-run schedule, the same report shape, but the regions are NVTX
ranges recorded by regionprof's NVTX tool (and CUPTI for device time), never by torch.profiler.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

try:
    import torch
    from torch import nn
except ImportError as _error:  # torch is optional: the rest of regionprof works without it
    raise ImportError(
        "regionprof.torch needs PyTorch, which is not installed: pip install 'regionprof[torch]' (or torch)"
    ) from _error

from regionprof import _keywords, _native, _steps, _torch_compiled, _torch_ops
from regionprof._api import Profile, _check_bool, _run_native
from regionprof._torch_aoti import aoti_compile_and_package

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from regionprof._options import ProfileOptions, StepOptions

__all__ = ["profile", "profiler", "discover", "ModuleRegion", "aoti_compile_and_package"]

_CONTAINERS = (nn.ModuleList, nn.ModuleDict)
_MODULE_ATTRIBUTES = frozenset(dir(nn.Module))


@dataclass(frozen=True)
class ModuleRegion:
    """One marked module: its dotted path, region id, kind and class (``module_type``)."""

    path: str
    region_id: str
    kind: str
    module_type: str
    module: nn.Module = field(repr=False, compare=False)
    methods: Tuple[str, ...] = ()
    #: "torch.compile", "compile()" (in place) or "" (eager): see discover().
    compiled: str = ""
    #: Paths of the modules that run inside this compiled module's code.
    compiled_in: Tuple[str, ...] = ()
    #: What opens the region: "call" (the module's call), "kernels" (a module inside compiled code: the
    #: compiled kernels that came from it, docs/design.md rule 22) or "unmapped_kernels" (a compiled object
    #: itself, whose modules are regions: the kernels of its code not traced to one of them).
    opened_by: str = "call"


@dataclass
class _Node:
    path: str
    module: nn.Module
    children: List["_Node"] = field(default_factory=list)
    #: How the module's call is compiled: "torch.compile" (an OptimizedModule: its original module's
    #: children are its children, without `_orig_mod` in their paths), "compile()" (compiled in place),
    #: or "" (eager). The modules below a compiled one run inside its compiled code.
    compiled: str = ""

    @property
    def callable(self) -> bool:
        return not isinstance(self.module, _CONTAINERS)


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _optimized_module_type() -> Optional[type]:
    """torch.compile's module wrapper class, when dynamo was imported (it is, once anything compiled)."""
    eval_frame = sys.modules.get("torch._dynamo.eval_frame")
    return getattr(eval_frame, "OptimizedModule", None) if eval_frame is not None else None


def _original(module: nn.Module) -> nn.Module:
    """The module a torch.compile wrapper stands for (the module itself otherwise)."""
    optimized = _optimized_module_type()
    while optimized is not None and isinstance(module, optimized):
        module = module._orig_mod
    return module


def _compiled_kind(module: nn.Module) -> str:
    optimized = _optimized_module_type()
    if optimized is not None and isinstance(module, optimized):
        return "torch.compile"
    if _instance_dict(_unwrapped(module)).get("_compiled_call_impl") is not None:
        return "compile()"
    return ""


def _instance_dict(module: Any) -> Dict[str, Any]:
    """The module's own __dict__ (not a proxy's forwarded one)."""
    return object.__getattribute__(module, "__dict__")


def _aitune_wrappers() -> Dict[int, Tuple[str, Any]]:
    """AITune's ``aitune.torch.Module`` wrappers alive in the process: id(wrapper) and id(wrapped module)
    -> (the wrapper's name, the wrapper). Empty when aitune was never imported (no wrapper can exist)."""
    registry_module = sys.modules.get("aitune.torch.module_registry")
    registry = getattr(registry_module, "MODULE_REGISTRY", None)
    found: Dict[int, Tuple[str, Any]] = {}
    for name, wrapper in dict(getattr(registry, "modules", {}) or {}).items():
        found[id(wrapper)] = (str(name), wrapper)
        wrapped = getattr(wrapper, "__wrapped__", None)
        if isinstance(wrapped, nn.Module):
            found[id(wrapped)] = (str(name), wrapper)
    return found


def _unwrapped(module: Any) -> nn.Module:
    """The nn.Module an AITune wrapper (a wrapt proxy: nn.Module is not in its type's MRO, isinstance()
    passes through ``__class__``) stands for; the module itself otherwise."""
    wrapped = getattr(module, "__wrapped__", None)
    if nn.Module not in type(module).__mro__ and isinstance(wrapped, nn.Module):
        return wrapped
    return module


def _tree(obj: Any) -> Tuple[Optional[_Node], List[_Node]]:
    """The root node (None when ``obj`` is not a module) and the top-level nodes below it.

    A module's children are its ``named_children()``; another object's are its attributes that are
    modules (plain lists and dicts are not entered). A module reached twice keeps its first path. A
    torch.compile wrapper's children are its original module's, at paths without ``_orig_mod``.
    """
    seen: set = set()

    def build(path: str, module: nn.Module) -> _Node:
        seen.add(id(module))
        node = _Node(path, module, compiled=_compiled_kind(module))
        source = module
        if node.compiled == "torch.compile":
            source = _original(module)
            seen.add(id(source))
        for name, child in source.named_children():
            if child is None or id(child) in seen:
                continue
            node.children.append(build(_join(path, name), child))
        return node

    if isinstance(obj, nn.Module):
        root = build("", obj)
        return root, root.children
    top: List[_Node] = []
    attributes = vars(obj) if hasattr(obj, "__dict__") else {}
    for name, value in attributes.items():
        if isinstance(value, nn.Module) and id(value) not in seen:
            top.append(build(name, value))
    return None, top


def _user_methods(module: nn.Module) -> Tuple[str, ...]:
    """Methods the module's own classes define beyond nn.Module: plain functions of classes outside
    torch, not dunders, not ``forward``, not a name nn.Module defines."""
    names: List[str] = []
    for cls in type(module).__mro__:
        if cls is nn.Module or not issubclass(cls, nn.Module):
            break
        if cls.__module__.split(".")[0] == "torch":
            continue
        for name, value in vars(cls).items():
            if (inspect.isfunction(value) and name != "forward" and name not in _MODULE_ATTRIBUTES
                    and not (name.startswith("__") and name.endswith("__")) and name not in names):
                names.append(name)
    return tuple(names)


def _tuned_names(tuned: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """``tuned`` checked: a mapping of str paths to str names, and a name for the object itself."""
    if tuned is None:
        return {}
    if not isinstance(tuned, Mapping):
        raise TypeError(f"tuned must be a mapping of module paths to region names, not {type(tuned).__name__}")
    for path, name in tuned.items():
        if not isinstance(path, str) or not isinstance(name, str):
            raise TypeError(f"tuned must map str module paths to str region names, not {path!r}: {name!r}")
    if tuned.get("", None) == "":
        raise ValueError("tuned: the object itself ('') needs a region name, e.g. tuned={'': 'model_trt'} "
                         "(an empty name means the module's path, and the object's path is empty)")
    return dict(tuned)


def discover(obj: Any, tuned: Optional[Mapping[str, str]] = None, every_level: bool = False,
             compiled_modules: bool = True) -> List[ModuleRegion]:
    """The modules profile() marks, parents first, with their region ids.

    ``tuned`` maps a module path to its region name (``""`` is ``obj`` itself): those are
    ``aot_module:<name>``; modules wrapped by AITune's ``aitune.torch.Module`` are tuned too, named as
    AITune names them; the topmost other modules are ``untuned_module:<path>``; a subtree holding
    a tuned module is descended into. ``nn.ModuleList`` / ``nn.ModuleDict`` are looked through
    (``blocks.0``). ``every_level`` marks every module. The modules inside a compiled module
    (``torch.compile(m)`` or ``m.compile()``) run in its compiled code and are listed in
    ``ModuleRegion.compiled_in``. With ``compiled_modules`` (default) they are marked as eager modules
    are, their regions made of the compiled kernels that came from them (``opened_by="kernels"``,
    docs/design.md rule 22), and a compiled root is ``untuned_module:<class name>`` holding only the kernels
    not traced to one of them (``opened_by="unmapped_kernels"``); without, a compiled module is one region
    and a compiled root is that region. Raises ValueError for a tuned path that does not exist or lies
    inside a compiled module, TypeError for a ``tuned`` that is not a mapping of str to str.

    ```
    [r.region_id for r in regionprof.torch.discover(model, {"encoder": "encoder_trt"})]
    # ['aot_module:encoder_trt', 'untuned_module:decoder']
    ```
    """
    tuned = _tuned_names(tuned)
    root, top = _tree(obj)
    nodes: List[_Node] = []

    def flatten(node: _Node) -> None:
        nodes.append(node)
        for child in node.children:
            flatten(child)

    for node in ([root] if root is not None else top):
        flatten(node)
    paths = {node.path for node in nodes}
    missing = sorted(set(tuned) - paths)
    if missing:
        raise ValueError(f"tuned: module path(s) {', '.join(map(repr, missing))} not found "
                         "(paths are dotted, e.g. 'blocks.0'; '' is the object itself)")

    compiled_in: Dict[int, List[str]] = {}
    inside_compiled: set = set()  # ids of the nodes that run inside compiled code

    def inside(node: _Node) -> List[str]:
        found: List[str] = []
        for child in node.children:
            inside_compiled.add(id(child))
            if child.callable:
                found.append(child.path)
            found.extend(inside(child))
        return found

    for node in nodes:
        if node.compiled and id(node) not in inside_compiled:
            compiled_in[id(node)] = inside(node)
            hidden = sorted(set(tuned) & set(compiled_in[id(node)]))
            if hidden:
                raise ValueError(f"tuned: module path(s) {', '.join(map(repr, hidden))} run inside the compiled "
                                 f"module {node.path or type(_original(node.module)).__name__!r} "
                                 f"({node.compiled}): mark the compiled module itself as tuned")

    aitune = _aitune_wrappers()
    for node in nodes:  # AITune's wrappers are tuned modules named as AITune names them
        if node.path not in tuned and id(node.module) in aitune and id(node) not in inside_compiled:
            tuned[node.path] = aitune[id(node.module)][0]

    holds_tuned: Dict[int, bool] = {}

    def mark_holders(node: _Node) -> bool:
        held = node.path in tuned
        for child in node.children:
            held = mark_holders(child) or held
        holds_tuned[id(node)] = held
        return held

    for node in ([root] if root is not None else top):
        mark_holders(node)

    marked: List[ModuleRegion] = []

    def mark(node: _Node, opened_by: str = "call") -> None:
        original = _unwrapped(_original(node.module))
        if node.path in tuned:
            kind, name = "aot_module", tuned[node.path] or node.path
        else:
            kind, name = "untuned_module", node.path or type(original).__name__
        methods = () if node.compiled or opened_by != "call" else _user_methods(original)
        marked.append(ModuleRegion(node.path, f"{kind}:{name}", kind, _type_name(type(original)), node.module,
                                   methods, node.compiled, tuple(compiled_in.get(id(node), ())), opened_by))

    def walk(node: _Node, is_root: bool, inside: bool) -> None:
        if node.compiled and not inside and not compiled_modules:
            mark(node)  # the compiled call is the region; what runs inside it is not instrumented
            return
        if node.compiled and not inside and is_root:
            mark(node, "unmapped_kernels")
            for child in node.children:
                walk(child, False, True)
            return
        opened_by = "kernels" if inside else "call"
        inside = inside or bool(node.compiled)
        descend = True
        if node.callable and (not is_root or node.path in tuned):
            if every_level:
                mark(node, opened_by)
            elif node.path in tuned or not holds_tuned[id(node)]:
                mark(node, opened_by)
                descend = False
        if descend:
            for child in node.children:
                walk(child, False, inside)

    if root is not None:
        walk(root, True, False)
    else:
        for node in top:
            walk(node, False, False)
    marked_ids = {id(_unwrapped(r.module)) for r in marked}
    marked_ids |= {id(_unwrapped(node.module)) for node in nodes if id(node) in inside_compiled}
    for name, wrapper in {w[0]: w[1] for w in aitune.values()}.items():  # AITune's: also outside obj's tree
        module = _unwrapped(wrapper)
        if id(module) not in marked_ids and isinstance(module, nn.Module):
            marked_ids.add(id(module))
            marked.append(ModuleRegion(name, f"aot_module:{name}", "aot_module", _type_name(type(module)), wrapper,
                                       _user_methods(module)))
    return marked


_MISSING = object()

#: The instance attribute nn.Module.__call__ (``_wrapped_call_impl``) calls instead of ``_call_impl``
#: when set: ``module.compile()`` puts its compiled call there, regionprof its region wrapper.
_CALL_SLOT = "_compiled_call_impl"


class _BackwardRange:
    """The backward region of one module call (docs/design.md, rule 19): started when the first gradient
    of the call's outputs reaches autograd (a pre-hook on the outputs' autograd nodes), ended when the
    gradients of the call's inputs are computed (the backward of _InputsDone, an identity on the inputs
    that require grad). A call none of whose inputs requires grad (an embedding of token ids) has no such
    end: its range ends when the next backward region starts on that thread, or when the backward pass
    ends. A start/end range (not push/pop): autograd may interleave two modules' nodes."""

    __slots__ = ("handle", "bounded", "range_id", "state")

    _open_unbounded = threading.local()  # per thread: the _BackwardRange without an end of its own

    def __init__(self, handle: int, bounded: bool) -> None:
        self.handle = handle
        self.bounded = bounded
        self.range_id = 0
        self.state = 0  # 0 waiting, 1 open, 2 ended

    def start(self, _grads: Any = None) -> None:
        if self.state != 0:
            return
        self.state = 1
        slot = _BackwardRange._open_unbounded
        previous = getattr(slot, "range", None)
        if previous is not None:
            previous.end()
        if not self.bounded:
            slot.range = self
            torch.autograd.Variable._execution_engine.queue_callback(self.end)
        self.range_id = _native.start(self.handle)

    def end(self) -> None:
        if self.state != 1:
            return
        self.state = 2
        _native.end(self.range_id)
        slot = _BackwardRange._open_unbounded
        if getattr(slot, "range", None) is self:
            slot.range = None


class _InputsDone(torch.autograd.Function):
    """Identity on a module call's inputs that require grad; its backward runs once their gradients are
    computed: the end of the call's backward region."""

    @staticmethod
    def forward(ctx: Any, backward_range: _BackwardRange, *tensors: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        ctx.backward_range = backward_range
        ctx.set_materialize_grads(False)
        return tensors

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Tuple[Any, ...]:
        ctx.backward_range.end()
        return (None,) + grads


def _output_nodes(output: Any, depth: int = 0) -> List[Any]:
    """The autograd nodes of the tensors a module returned: a tensor, or tensors in a tuple, list or
    mapping (transformers' ModelOutput), two levels deep."""
    if isinstance(output, torch.Tensor):
        return [output.grad_fn] if output.grad_fn is not None else []
    nodes: List[Any] = []
    if depth < 2:
        values = output.values() if isinstance(output, Mapping) else output if isinstance(output, (tuple, list)) else ()
        for value in values:
            nodes.extend(_output_nodes(value, depth + 1))
    return nodes


def _tracking_backward(call: Callable[..., Any], handle: int) -> Callable[..., Any]:
    """``call`` (a module's call) with its backward region (handle: ``<kind>_backward:<name>``) found
    when grad mode is on; as ``call`` otherwise."""
    is_grad_enabled = torch.is_grad_enabled

    def call_tracking_backward(*args: Any, **kwargs: Any) -> Any:
        if not is_grad_enabled():
            return call(*args, **kwargs)
        positions = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
        keys = [k for k, v in kwargs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
        backward_range = _BackwardRange(handle, bool(positions or keys))
        if positions or keys:
            done = _InputsDone.apply(backward_range, *[args[i] for i in positions], *[kwargs[k] for k in keys])
            if positions:
                replaced = list(args)
                for i, tensor in zip(positions, done):
                    replaced[i] = tensor
                args = tuple(replaced)
            if keys:
                kwargs = dict(kwargs)
                for k, tensor in zip(keys, done[len(positions):]):
                    kwargs[k] = tensor
        output = call(*args, **kwargs)
        for node in _output_nodes(output):
            node.register_prehook(backward_range.start)
        return output

    return call_tracking_backward


class _Instrumentation:
    """Region wrappers on the marked modules; ``remove()`` takes every one of them away.

    Each marked module's call goes through a native ``RegionWrapper`` installed as the instance
    attribute ``_compiled_call_impl``: nn.Module.__call__ calls it instead of ``_call_impl``, and it
    pushes the region, calls ``_call_impl`` (hooks and ``forward``, whatever ``forward`` is on the
    instance) and pops the region, also when the call raised. No hook is registered, so torch keeps its
    fast path (no hook dispatch). A module compiled in place keeps its compiled call inside the wrapper.
    Methods are wrapped the same way as instance attributes. ``remove()`` restores every attribute as
    it was (deleted when it was not on the instance), so ``__dict__`` and the hook tables are as before.
    """

    def __init__(self, regions: Sequence[ModuleRegion], backward: bool = False) -> None:
        self._installed: List[Tuple[Dict[str, Any], str, Any]] = []  # (instance __dict__, key, previous)
        self.module_types: Dict[str, str] = {}
        #: Module path -> its region's handle, for the regions not opened by a call (ModuleRegion.opened_by).
        self.kernel_regions: Dict[str, int] = {}
        #: The compiled modules whose calls mark the thread as running them (_torch_compiled.in_frame).
        self.framed: List[str] = []
        try:
            for r in regions:
                kind, name = r.region_id.split(":", 1)
                handle = _native.register_region(kind, name)
                self.module_types[r.region_id] = r.module_type
                if r.opened_by == "kernels":
                    self.kernel_regions[r.path] = handle  # compiled code: no call of its own, no backward
                    continue
                module = _unwrapped(r.module)
                attributes = _instance_dict(module)
                previous = attributes.get(_CALL_SLOT, _MISSING)
                call = previous if previous is not _MISSING and previous is not None else module._call_impl
                if backward:
                    call = _tracking_backward(call, _native.register_region(f"{kind}_backward", name))
                    self.module_types[f"{kind}_backward:{name}"] = r.module_type
                if r.opened_by == "unmapped_kernels":
                    self.kernel_regions[r.path] = handle
                    if backward:
                        self._install(attributes, _CALL_SLOT, call)  # its compiled backward: not mapped
                    continue
                if r.compiled and any(k.opened_by == "kernels" and k.path.startswith(r.path + ".") for k in regions):
                    call = _torch_compiled.in_frame(r.path, call)  # its graph may be its class's (regional)
                    self.framed.append(r.path)
                self._install(attributes, _CALL_SLOT, _native.RegionWrapper(handle, call))
                for method in r.methods:
                    handle = _native.register_region(kind, f"{name}.{method}")
                    self._install(attributes, method, _native.RegionWrapper(handle, getattr(module, method)))
                    self.module_types[f"{r.region_id}.{method}"] = r.module_type
        except BaseException:
            self.remove()
            raise

    def _install(self, attributes: Dict[str, Any], key: str, wrapper: Any) -> None:
        self._installed.append((attributes, key, attributes.get(key, _MISSING)))
        attributes[key] = wrapper

    def remove(self) -> None:
        while self._installed:
            attributes, key, previous = self._installed.pop()
            if previous is _MISSING:
                attributes.pop(key, None)
            else:
                attributes[key] = previous


def _split_input(input_data: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    if input_data is None:
        return (), {}
    if isinstance(input_data, Mapping):
        return (), dict(input_data)
    if isinstance(input_data, tuple):
        return input_data, {}
    return (input_data,), {}


def _compiled_how(r: ModuleRegion) -> str:
    return "torch.compile(module)" if r.compiled == "torch.compile" else "module.compile()"


def _outermost_compiled(regions: Sequence[ModuleRegion]) -> List[ModuleRegion]:
    return [r for r in regions if r.compiled and r.opened_by != "kernels"]


def _compiled_warnings(regions: Sequence[ModuleRegion], earlier: bool = False) -> List[Tuple[str, str]]:
    """Without compiled_modules: one COMPILED_MODULES warning per compiled region with modules inside it
    (``earlier``: it was compiled before the profile began, which is why)."""
    found: List[Tuple[str, str]] = []
    for r in _outermost_compiled(regions):
        if not r.compiled_in:
            continue
        shown = ", ".join(r.compiled_in[:8]) + (", ..." if len(r.compiled_in) > 8 else "")
        if earlier:
            fix = ("It was compiled before the profile began, so its kernels carry no provenance: let its first call "
                   "(the compile) run inside the profile to have them counted for the modules they came from.")
        else:
            fix = ("Compile blocks separately (regional compilation) for a region per top-level block (deeper: "
                   "every_level=True), or leave compiled_modules on.")
        found.append(("COMPILED_MODULES",
                      f"{len(r.compiled_in)} module(s) run inside the compiled code of {r.region_id} "
                      f"({_compiled_how(r)}) and are not regions of their own: {r.region_id} owns their time "
                      f"({shown}). {fix}"))
    return found


def _compiled_findings(regions: Sequence[ModuleRegion], tracked: _torch_compiled.tracking,
                       backward: bool) -> List[Tuple[str, str]]:
    """With compiled_modules: one COMPILED_MODULES warning per compiled module whose code held what could
    not be counted for a module inside it (docs/design.md, rule 22), saying where that time is."""
    found: List[Tuple[str, str]] = []
    for r in _outermost_compiled(regions):
        seen = tracked.seen.get(r.path)
        if seen is None or not r.compiled_in:
            continue
        kind, name = r.region_id.split(":", 1)
        holder = f"in {r.region_id}" if r.opened_by == "call" else "in the runs' residual"  # no wrapper: no region
        parts: List[str] = []
        if seen.graphs == seen.backward_graphs:
            parts.append(f"no forward graph of its compiled code was traced, so its time is {holder}: let its "
                         "first call (the compile) run inside the profile")
        elif seen.unmapped:
            shown = ", ".join(seen.unmapped[:6]) + (", ..." if len(seen.unmapped) > 6 else "")
            parts.append(f"{len(seen.unmapped)} of its {len(seen.unmapped) + seen.mapped} forward kernels could not "
                         f"be traced to one module inside it ({shown}); their time is in {r.region_id}")
        if seen.backward_graphs:
            where = f"{kind}_backward:{name}" if backward else "the runs' residual"
            parts.append(f"its compiled backward ({seen.backward_graphs} graph(s)) is not traced to modules, torch's "
                         f"inductor keeping no provenance for backward graphs: its time is in {where}")
        if parts:
            found.append(("COMPILED_MODULES",
                          f"{len(r.compiled_in)} module(s) run inside the compiled code of {r.region_id} "
                          f"({_compiled_how(r)}) and are regions made of the kernels traced to them; "
                          + "; ".join(parts) + "."))
    if tracked.failures:
        found.append(("COMPILED_MODULES",
                      f"{len(tracked.failures)} compiled graph(s) could not be mapped to modules "
                      f"({tracked.failures[0]}): their kernels' time is in the regions around their calls."))
    return found


def _modules_by_path(obj: Any) -> Dict[str, nn.Module]:
    """Every module of ``obj`` by path, compiled modules' insides included (each as the module itself,
    not a torch.compile or AITune wrapper)."""
    root, top = _tree(obj)
    found: Dict[str, nn.Module] = {}

    def walk(node: _Node) -> None:
        found.setdefault(node.path, _unwrapped(_original(node.module)))
        for child in node.children:
            walk(child)

    for node in ([root] if root is not None else top):
        walk(node)
    return found


def _discover_compiled(obj: Any, tuned: Optional[Mapping[str, str]], every_level: bool,
                       compiled_modules: bool) -> Tuple[List[ModuleRegion], List[Tuple[str, str]]]:
    """discover() for a profile: with ``compiled_modules``, the modules inside compiled code are regions
    unless this torch lacks what that needs, or a compiled module was compiled before the profile began
    (no provenance: one region each then, and a warning says why). Also the warnings known before the run."""
    regions = discover(obj, tuned, every_level, compiled_modules)
    compiled = _outermost_compiled(regions)
    if not compiled_modules or not compiled:
        return regions, _compiled_warnings(regions)
    if _torch_compiled.available():
        earlier = [r for r in compiled if _torch_compiled.compiled_earlier(_unwrapped(_original(r.module)))]
        if not earlier:
            return regions, []
    else:
        earlier = []
    regions = discover(obj, tuned, every_level, False)
    return regions, _compiled_warnings(regions, earlier=bool(earlier))


def _compiled_tracking(obj: Any, regions: Sequence[ModuleRegion], instrumentation: "_Instrumentation",
                       ops: bool) -> Optional[_torch_compiled.tracking]:
    """The tracking of compiled kernels for a profile's block, when its regions hold modules inside
    compiled code; None otherwise."""
    if not any(r.opened_by != "call" for r in regions):
        return None
    compiled = {r.path: instrumentation.kernel_regions.get(r.path) if r.opened_by == "unmapped_kernels" else None
                for r in _outermost_compiled(regions)}
    opened = {r.path: (instrumentation.kernel_regions[r.path], False) if r.opened_by == "kernels" else (0, True)
              for r in regions if r.opened_by != "unmapped_kernels"}
    return _torch_compiled.tracking(_modules_by_path(obj), opened, compiled, instrumentation.framed, ops)


@_keywords.takes("profile", exclude=("regions",))
def profile(
    obj: Any,
    input_data: Any = None,
    *,
    inference_function: Optional[Callable[..., Any]] = None,
    tuned: Optional[Mapping[str, str]] = None,
    every_level: bool = False,
    ops: bool = False,
    memory: bool = False,
    compiled_modules: bool = True,
    **options: "Unpack[ProfileOptions]",
) -> Profile:
    """Profiles a torch model (or an object holding modules), every discovered module a region.

    ``input_data``: a mapping is passed as keyword arguments, a tuple as positional arguments, None as
    no arguments, anything else as one positional argument. The call is
    ``inference_function(*args, **kwargs)`` when given (``obj`` is then only where modules are found),
    else ``obj(*args, **kwargs)``; every call runs under ``torch.no_grad()``. ``warmup_runs`` unrecorded
    calls, one recorded warm-up that is discarded, then ``measured_runs`` measured calls, each inside
    the run marker ``regionprof.profiled_run``.

    Regions (see :func:`discover`): ``aot_module:<name>`` for ``tuned`` paths and AITune's wrapped
    modules, ``untuned_module:<path>`` for the topmost other modules, ``<region>.<method>`` for the
    user-defined methods of their classes (``untuned_module:vae.decode``). A compiled module is one
    region, and a ``COMPILED_MODULES`` warning says which modules run inside it. Other NVTX ranges of
    the process are recorded too. The region wrappers are removed afterwards, also when the workload
    raises (the exception propagates). The options below (all but ``regions``, which discovery
    sets) are :func:`regionprof.profile`'s.
    ``ops``: torch's ops (aten operators, autograd nodes, ``record_function`` blocks) recorded too, so key
    averages and ``region_ops`` name the ops each region ran (docs/python.md, "Ops per region"); off by
    default. Its RecordFunction callback is compiled against this torch at first use (seconds, then
    cached); without a C++ compiler torch's NVTX mode stands in, dearer, and ``OPS_VIA_NVTX`` says so.
    ``memory``: what torch's allocators allocate and free (CPU, CUDA) recorded too, as memory events of the
    region around each (docs/python.md, "Memory per region"); off by default. Its reporter is compiled with
    the op callback; torch.profiler cannot start inside the call, and RuntimeError when it cannot be built.
    ``graph_attribution``: ``"capture"`` (default) gives the kernels of a CUDA graph replay
    (``torch.compile(mode="reduce-overhead")``, ``torch.cuda.graph``) to the module that captured them,
    ``"launch"`` to the module around the replay (docs/design.md, rule 15). Graphs captured before the
    call (e.g. in ``warmup_runs``) go by launch and are counted in ``GRAPH_CAPTURED_BEFORE_PROFILING``.

    ```
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    p = regionprof.torch.profile(model, torch.randn(8, 64))
    print(p.markdown())
    ```
    """
    _check_bool("every_level", every_level)
    _check_bool("ops", ops)
    _check_bool("memory", memory)
    _check_bool("compiled_modules", compiled_modules)
    _keywords.check("regionprof.torch.profile", "profile", options, exclude=("regions",))
    if inference_function is not None and not callable(inference_function):
        raise TypeError(f"inference_function must be callable, not {type(inference_function).__name__}")
    args, kwargs = _split_input(input_data)
    target = inference_function if inference_function is not None else obj
    if not callable(target):
        raise TypeError(f"regionprof.torch.profile: {type(target).__name__} object is not callable "
                        "(pass inference_function)")
    regions, warnings = _discover_compiled(obj, tuned, every_level, compiled_modules)
    if getattr(inference_function, "_torchdynamo_orig_callable", None) is not None:
        # A compiled inference_function runs every module inside its compiled code: none is touched.
        if regions:
            warnings = [("COMPILED_MODULES",
                         f"inference_function is compiled (torch.compile): the {len(regions)} module(s) found in obj "
                         f"({', '.join(r.path or r.region_id for r in regions[:8])}{', ...' if len(regions) > 8 else ''}) "
                         "run inside its compiled code and are not regions; the runs' time is in their residual. "
                         "Compile the model or its blocks instead, and pass an eager inference_function.")]
        regions = []
    def workload() -> None:
        with torch.no_grad():
            target(*args, **kwargs)

    instrumentation = _Instrumentation(regions)
    try:
        tracked = _compiled_tracking(obj, regions, instrumentation, ops)
        with _torch_ops.op_ranges(ops) as op_warnings, _torch_ops.memory_events(memory), \
                tracked or contextlib.nullcontext():
            return _run_native(workload, dict(options), {
                "target_type": _type_name(type(obj)),
                "target_kind": "torch_module" if isinstance(obj, nn.Module) else "torch_object",
                "warnings": warnings + op_warnings,
                "warnings_at_finish": lambda: _compiled_findings(regions, tracked, False) if tracked else [],
                "module_types": instrumentation.module_types,
                "args_count": len(args),
                "kwargs": list(kwargs),
                "uses_inference_function": inference_function is not None,
            })
    finally:
        instrumentation.remove()


class profiler(_steps.profiler):
    """The user's own loop (training steps: forward, ``loss.backward()``, ``optimizer.step()``,
    ``zero_grad()``) profiled step by step, every discovered module a region, as
    :class:`regionprof.profiler` with :func:`profile`'s module regions: ``p.step()`` ends a step, each
    recorded step is a run, each cycle of ``schedule`` one Profile (``p.profiles``; ``p.profile`` the
    last; ``on_cycle`` gets each as it completes). Module regions as :func:`profile` makes them
    (``tuned``, ``every_level``, :func:`discover`); with ``backward`` (default on) each module region
    ``KIND:NAME`` has its backward as the region ``KIND_backward:NAME``: the autograd work computing that
    module's gradients, on whichever thread autograd runs it (docs/design.md, rule 19; on a CUDA
    device autograd's thread is another thread: ``cross_thread=True`` gives its CPU time to the
    region as off-thread time, its kernels count either way). ``ops``: torch's op ranges recorded too,
    ``memory``: torch's allocations and frees too, as for :func:`profile`. Grad mode is left as the caller
    set it;
    the module wrappers are removed when the block ends, also on an exception (which propagates, the
    cycle in progress discarded).

    ```
    with regionprof.torch.profiler(model, schedule=regionprof.schedule(wait=1, warmup=1, active=3, repeat=2)) as p:
        for batch in loader:
            loss = model(batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            p.step()
    print(p.profile.markdown())    # two profiles of 3 runs each: p.profiles
    ```
    """

    _who = "regionprof.torch.profiler"

    @_keywords.takes("steps", exclude=("regions",))
    def __init__(self, obj: Any, *, schedule: Optional[_steps.schedule] = None,
                 on_cycle: Optional[Callable[[Profile], Any]] = None, tuned: Optional[Mapping[str, str]] = None,
                 every_level: bool = False, backward: bool = True, ops: bool = False, memory: bool = False,
                 compiled_modules: bool = True, **options: "Unpack[StepOptions]") -> None:
        _check_bool("every_level", every_level)
        _check_bool("backward", backward)
        _check_bool("ops", ops)
        _check_bool("memory", memory)
        _check_bool("compiled_modules", compiled_modules)
        _keywords.check(self._who, "steps", options, exclude=("regions",))
        super().__init__(schedule=schedule, on_cycle=on_cycle, **options)
        self._obj = obj
        self._tuned = _tuned_names(tuned)
        self._every_level = every_level
        self._backward = backward
        self._ops = ops
        self._memory = memory
        self._compiled_modules = compiled_modules
        self._regions: List[ModuleRegion] = []
        self._tracked: Optional[_torch_compiled.tracking] = None
        self._ops_and_memory: Optional[contextlib.ExitStack] = None
        self._instrumentation: Optional[_Instrumentation] = None
        self._warnings: List[Tuple[str, str]] = []

    def _caller(self) -> Dict[str, Any]:
        assert self._instrumentation is not None
        return {"target_type": _type_name(type(self._obj)),
                "target_kind": "torch_module" if isinstance(self._obj, nn.Module) else "torch_object",
                "warnings": self._warnings, "warnings_at_finish": self._findings,
                "module_types": self._instrumentation.module_types}

    def _findings(self) -> List[Tuple[str, str]]:
        return _compiled_findings(self._regions, self._tracked, self._backward) if self._tracked else []

    def __enter__(self) -> "profiler":
        self._regions, self._warnings = _discover_compiled(self._obj, self._tuned, self._every_level,
                                                           self._compiled_modules)
        self._instrumentation = _Instrumentation(self._regions, self._backward)
        self._ops_and_memory = contextlib.ExitStack()
        try:
            self._warnings += self._ops_and_memory.enter_context(_torch_ops.op_ranges(self._ops))
            self._ops_and_memory.enter_context(_torch_ops.memory_events(self._memory))
            self._tracked = _compiled_tracking(self._obj, self._regions, self._instrumentation, self._ops)
            if self._tracked is not None:
                self._ops_and_memory.enter_context(self._tracked)
            super().__enter__()
        except BaseException:
            self._ops_and_memory.close()
            self._instrumentation.remove()
            raise
        return self

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        try:
            super().__exit__(exc_type, exc, traceback)
        finally:
            if self._ops_and_memory is not None:
                self._ops_and_memory.close()
            if self._instrumentation is not None:
                self._instrumentation.remove()
