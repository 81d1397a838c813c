"""regionprof.torch.profile: a torch model's modules as regions, measured by regionprof's own capture.

A drop-in for AITune's ``aitune.torch.performance.runtime_profile`` profile(): the same discovery and
region ids, the same warm-up/measured-run schedule, the same report shape, but the regions are NVTX
ranges recorded by regionprof's NVTX tool (and CUPTI for device time), never by torch.profiler.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

try:
    import torch
    from torch import nn
except ImportError as _error:  # torch is optional: the rest of regionprof works without it
    raise ImportError(
        "regionprof.torch needs PyTorch, which is not installed: pip install 'regionprof[torch]' (or torch)"
    ) from _error

from regionprof import _native
from regionprof._api import Profile, StrPath, _run_native

__all__ = ["profile", "discover", "ModuleRegion"]

_CONTAINERS = (nn.ModuleList, nn.ModuleDict)
_MODULE_ATTRIBUTES = frozenset(dir(nn.Module))
_POP_HOOK = _native.PopHook()


@dataclass(frozen=True)
class ModuleRegion:
    """One marked module: its dotted path, region id, kind and class (``module_type``)."""

    path: str
    region_id: str
    kind: str
    module_type: str
    module: nn.Module = field(repr=False, compare=False)
    methods: Tuple[str, ...] = ()


@dataclass
class _Node:
    path: str
    module: nn.Module
    children: List["_Node"] = field(default_factory=list)

    @property
    def callable(self) -> bool:
        return not isinstance(self.module, _CONTAINERS)


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _tree(obj: Any) -> Tuple[Optional[_Node], List[_Node]]:
    """The root node (None when ``obj`` is not a module) and the top-level nodes below it.

    A module's children are its ``named_children()``; another object's are its attributes that are
    modules (plain lists and dicts are not entered). A module reached twice keeps its first path.
    """
    seen: set = set()

    def build(path: str, module: nn.Module) -> _Node:
        seen.add(id(module))
        node = _Node(path, module)
        for name, child in module.named_children():
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


def discover(obj: Any, tuned: Optional[Mapping[str, str]] = None, every_level: bool = False) -> List[ModuleRegion]:
    """The modules profile() marks, parents first, with their region ids.

    ``tuned`` maps a module path to its region name (``""`` is ``obj`` itself): those are
    ``aot_module:<name>``; the topmost other modules are ``untuned_module:<path>``; a subtree holding
    a tuned module is descended into. ``nn.ModuleList`` / ``nn.ModuleDict`` are looked through
    (``blocks.0``). ``every_level`` marks every module. Raises ValueError for a tuned path that does
    not exist.

    ```
    [r.region_id for r in regionprof.torch.discover(model, {"encoder": "encoder_trt"})]
    # ['aot_module:encoder_trt', 'untuned_module:decoder']
    ```
    """
    tuned = dict(tuned or {})
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
        raise ValueError(f"regionprof.torch.profile: tuned module path(s) {', '.join(map(repr, missing))} "
                         "not found (paths are dotted, e.g. 'blocks.0'; '' is the object itself)")

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

    def mark(node: _Node) -> None:
        if node.path in tuned:
            kind, name = "aot_module", tuned[node.path] or node.path
        else:
            kind, name = "untuned_module", node.path
        marked.append(ModuleRegion(node.path, f"{kind}:{name}", kind, _type_name(type(node.module)),
                                   node.module, _user_methods(node.module)))

    def walk(node: _Node, is_root: bool) -> None:
        descend = True
        if node.callable and (not is_root or node.path in tuned):
            if every_level:
                mark(node)
            elif node.path in tuned or not holds_tuned[id(node)]:
                mark(node)
                descend = False
        if descend:
            for child in node.children:
                walk(child, False)

    if root is not None:
        walk(root, True)
    else:
        for node in top:
            walk(node, False)
    return marked


def _method_wrapper(original: Callable[..., Any], handle: int) -> Callable[..., Any]:
    push, pop = _native.push, _native.pop

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        push(handle)
        try:
            return original(*args, **kwargs)
        finally:
            pop()

    return wrapper


_MISSING = object()


class _Instrumentation:
    """Hooks and method wrappers on the marked modules; ``remove()`` takes every one of them away."""

    def __init__(self, regions: Sequence[ModuleRegion]) -> None:
        self._hooks: List[Any] = []
        self._methods: List[Tuple[nn.Module, str, Any]] = []  # (module, name, previous instance value)
        self.module_types: Dict[str, str] = {}
        try:
            for r in regions:
                kind, name = r.region_id.split(":", 1)
                handle = _native.register_region(kind, name)
                # Pre-hook first among pre-hooks, hook always called (also when forward raises): the
                # region is open exactly around the module's call.
                self._hooks.append(r.module.register_forward_pre_hook(_native.PushHook(handle), prepend=True))
                self._hooks.append(r.module.register_forward_hook(_POP_HOOK, always_call=True))
                self.module_types[r.region_id] = r.module_type
                for method in r.methods:
                    method_id = f"{r.region_id}.{method}"
                    previous = r.module.__dict__.get(method, _MISSING)
                    wrapper = _method_wrapper(getattr(r.module, method), _native.register_region(kind, f"{name}.{method}"))
                    object.__setattr__(r.module, method, wrapper)
                    self._methods.append((r.module, method, previous))
                    self.module_types[method_id] = r.module_type
        except BaseException:
            self.remove()
            raise

    def remove(self) -> None:
        while self._hooks:
            self._hooks.pop().remove()
        while self._methods:
            module, name, previous = self._methods.pop()
            if previous is _MISSING:
                module.__dict__.pop(name, None)
            else:
                module.__dict__[name] = previous


def _split_input(input_data: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    if input_data is None:
        return (), {}
    if isinstance(input_data, Mapping):
        return (), dict(input_data)
    if isinstance(input_data, tuple):
        return input_data, {}
    return (input_data,), {}


def profile(
    obj: Any,
    input_data: Any = None,
    *,
    inference_function: Optional[Callable[..., Any]] = None,
    warmup_runs: int = 3,
    measured_runs: int = 10,
    trace_file: Optional[StrPath] = None,
    tuned: Optional[Mapping[str, str]] = None,
    every_level: bool = False,
    device_tracing: bool = True,
) -> Profile:
    """Profiles a torch model (or an object holding modules), every discovered module a region.

    ``input_data``: a mapping is passed as keyword arguments, a tuple as positional arguments, None as
    no arguments, anything else as one positional argument. The call is
    ``inference_function(*args, **kwargs)`` when given (``obj`` is then only where modules are found),
    else ``obj(*args, **kwargs)``; every call runs under ``torch.no_grad()``. ``warmup_runs`` unrecorded
    calls, one recorded warm-up that is discarded, then ``measured_runs`` measured calls, each inside
    the run marker ``regionprof.profiled_run``.

    Regions (see :func:`discover`): ``aot_module:<name>`` for ``tuned`` paths, ``untuned_module:<path>``
    for the topmost other modules, ``<region>.<method>`` for the user-defined methods of their classes
    (``untuned_module:vae.decode``). Other NVTX ranges of the process are recorded too. Hooks and
    wrappers are removed afterwards, also when the workload raises (the exception propagates).
    ``trace_file``: also write the Chrome trace there (nothing is written by default).

    ```
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    p = regionprof.torch.profile(model, torch.randn(8, 64))
    print(p.markdown())
    ```
    """
    args, kwargs = _split_input(input_data)
    target = inference_function if inference_function is not None else obj
    if not callable(target):
        raise TypeError(f"regionprof.torch.profile: {type(target).__name__} object is not callable "
                        "(pass inference_function)")
    regions = discover(obj, tuned, every_level)

    def workload() -> None:
        with torch.no_grad():
            target(*args, **kwargs)

    instrumentation = _Instrumentation(regions)
    try:
        return _run_native(
            workload,
            warmup_runs=warmup_runs,
            measured_runs=measured_runs,
            trace_file=trace_file,
            regions=None,
            cross_thread=False,
            row_limit=20,
            device_tracing=device_tracing,
            target_type="torch_module" if isinstance(obj, nn.Module) else "torch_object",
            module_types=instrumentation.module_types,
            input_shape=(len(args), tuple(kwargs)),
            uses_inference_function=inference_function is not None,
        )
    finally:
        instrumentation.remove()
