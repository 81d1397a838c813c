"""AOTInductor packages whose kernels the LibTorch adapter attributes to modules (docs/torch.md, "AOTInductor").

:func:`aoti_compile_and_package` is torch's ``torch._inductor.aoti_compile_and_package`` with two inductor
settings turned on and one file added to the package:

- ``cpp.enable_kernel_profile``: each generated CPU kernel runs under a RecordFunction of its own
  (``graph_0_cpp_fused_native_layer_norm_relu_0``), as each extern kernel (``aoti_torch_cpu_addmm_out``)
  already does;
- ``trace.provenance_tracking_level = 1``: the package's ``kernel_information.json`` gives, per kernel in
  call order (``aoti_torch_cpu_addmm_out:1``), the exported program's nodes it computes;
- ``extra/regionprof_kernel_modules.json`` (:data:`KERNEL_MODULES_RECORD`): per model of the package, its
  modules (path and type, from the exported program's ``nn_module_stack``), its kernels in call order, each
  with the name its RecordFunction has at run time and the module it belongs to (the deepest module
  containing every node it computes, docs/design.md, rule 22; null when no node has a module), and the
  kernels that run without a RecordFunction (``unrecorded``). The exported program is not in the package,
  so this is the only time the modules are known.

``regionprof::torch::instrument_package`` reads that file and opens each kernel's module region around the
kernel's RecordFunction.
"""

from __future__ import annotations

import io
import json
import os
import re
import warnings
import zipfile
from typing import IO, Any, Dict, List, Mapping, Optional, Set, Tuple, Union

import torch

from regionprof._torch_compiled import common_owner, is_view

#: The record the package gains, relative to the archive's folder (torch's PT2 archives keep extra files
#: under ``extra/``).
KERNEL_MODULES_RECORD = "extra/regionprof_kernel_modules.json"
#: What the record's ``format`` key says, and its version; the C++ reader checks both.
KERNEL_MODULES_FORMAT = "regionprof kernel modules"
KERNEL_MODULES_VERSION = 1

#: The inductor settings a package needs for its kernels to be seen at run time and traced to nodes.
INDUCTOR_CONFIGS: Mapping[str, Any] = {"cpp.enable_kernel_profile": True, "trace.provenance_tracking_level": 1}

_KERNEL_INFORMATION = re.compile(r"data/aotinductor/([^/]+)/kernel_information\.json$")
_RECORDED_NAME = re.compile(r'RAIIAtenRecordFunctionHandle\s+\w+\("([^"]+)"')
# What precedes a kernel's name in the name of the RecordFunction it runs under: `graph_<id>_` for a C++
# kernel (inductor's codegen/cpp.py), `kernels_.` for a Triton kernel's launch in a GPU package
# (codegen/cpp_wrapper_gpu.py), nothing for an extern kernel.
_RECORDED_PREFIX = re.compile(r"graph_\d+_|kernels_\.")


def aoti_compile_and_package(exported_program: "torch.export.ExportedProgram", *,
                             package_path: Union[str, "os.PathLike[str]", IO[bytes], None] = None,
                             inductor_configs: Optional[Mapping[str, Any]] = None) -> str:
    """``torch._inductor.aoti_compile_and_package`` whose package the LibTorch adapter profiles module by
    module (``regionprof::torch::instrument_package``): the same arguments and result.

    >>> ep = torch.export.export(model.eval(), (x,))
    >>> path = regionprof.torch.aoti_compile_and_package(ep, package_path="model.pt2")

    Raises ValueError when ``inductor_configs`` turns off a setting the mapping needs (:data:`INDUCTOR_CONFIGS`).
    Kernels that run without a RecordFunction (a kernel whose launch inductor does not wrap) cannot be
    attributed; a ``UserWarning`` says how many, and their time stays in the region around them.
    """
    configs = dict(inductor_configs or {})
    for key, value in INDUCTOR_CONFIGS.items():
        if key in configs and configs[key] != value:
            raise ValueError(f"aoti_compile_and_package: inductor_configs[{key!r}] must be {value!r} for "
                             f"the kernels to be attributed to modules (got {configs[key]!r}); leave it out")
        configs[key] = value
    result = torch._inductor.aoti_compile_and_package(exported_program, package_path=package_path,
                                                      inductor_configs=configs)
    target = package_path if package_path is not None and not isinstance(package_path, (str, os.PathLike)) \
        else result
    _add_kernel_modules(target, exported_program)
    return result


def _module_tree(exported_program: Any) -> Tuple[List[Dict[str, str]], Dict[str, Tuple[str, ...]], Set[str]]:
    """The modules seen in the program's ``nn_module_stack`` (parents first), each node's module path, and
    the nodes that only view their input (rule 22 leaves them aside when a kernel computes more)."""
    modules: Dict[str, str] = {"": "Module"}
    owner_of: Dict[str, Tuple[str, ...]] = {}
    views: Set[str] = set()
    for node in exported_program.graph.nodes:
        if is_view(node):
            views.add(node.name)
        stack = node.meta.get("nn_module_stack") or {}
        for path, type_name in stack.values():
            name = type_name if isinstance(type_name, str) else getattr(type_name, "__qualname__", "Module")
            if path not in modules or path == "":
                modules[path] = name
        if stack:
            innermost = list(stack.values())[-1][0]
            owner_of[node.name] = tuple(innermost.split(".")) if innermost else ()
    return [{"path": path, "type": type_name} for path, type_name in modules.items()], owner_of, views


def _handle_order(key: str) -> int:
    _, _, number = key.rpartition(":")
    return int(number) if number.isdigit() else 0


def kernel_modules(exported_program: Any, kernel_information: Mapping[str, Any],
                   recorded_names: List[str]) -> Tuple[Dict[str, Any], List[str]]:
    """One model's entry of the record, and the kernels that run without a RecordFunction.

    ``kernel_information``: the package's ``kernel_information.json`` (``"<kernel>:<handle>"`` -> facts, with
    ``pre_grad_nodes``); ``recorded_names``: the RecordFunction names the generated kernels have.
    """
    modules, owner_of, views = _module_tree(exported_program)
    recorded_for: Dict[str, str] = {}  # kernel -> its RecordFunction's name
    for recorded in recorded_names:
        prefix = _RECORDED_PREFIX.match(recorded)
        recorded_for.setdefault(recorded[prefix.end():] if prefix else recorded, recorded)
    kernels: List[Dict[str, Any]] = []
    unrecorded: List[str] = []
    for key in sorted(kernel_information, key=_handle_order):
        kernel = key.rpartition(":")[0] or key
        name = recorded_for.get(kernel)
        if name is None and kernel.startswith("aoti_torch_"):
            name = kernel  # extern kernels run under a RecordFunction of their own name (the wrapper's)
        if name is None:
            unrecorded.append(key)
            continue
        nodes = list(kernel_information[key].get("pre_grad_nodes") or [])
        working = [node for node in nodes if node not in views] or nodes
        paths = [owner_of.get(node) for node in working]
        known = [path for path in paths if path is not None]
        module = ".".join(common_owner(known)) if paths and len(known) == len(paths) else None
        kernels.append({"name": name, "handle": key, "nodes": nodes, "module": module})
    return {"modules": modules, "kernels": kernels, "unrecorded": unrecorded}, unrecorded


def _add_kernel_modules(package: Union[str, "os.PathLike[str]", IO[bytes]], exported_program: Any) -> None:
    with zipfile.ZipFile(package, "r") as archive:
        names = archive.namelist()
        folder = names[0].split("/", 1)[0] if names else "archive"
        recorded: List[str] = []
        for name in names:
            if name.endswith(".cpp"):
                recorded.extend(_RECORDED_NAME.findall(archive.read(name).decode("utf-8", "replace")))
        models: Dict[str, Any] = {}
        unrecorded: List[str] = []
        for name in names:
            found = _KERNEL_INFORMATION.search(name)
            if found is None:
                continue
            entry, missing = kernel_modules(exported_program, json.loads(archive.read(name)), recorded)
            models[found.group(1)] = entry
            unrecorded.extend(missing)
    if not models:
        raise RuntimeError("aoti_compile_and_package: the package has no kernel_information.json; this torch "
                           f"({torch.__version__}) does not keep AOTInductor's provenance")
    record = {"format": KERNEL_MODULES_FORMAT, "version": KERNEL_MODULES_VERSION, "models": models}
    if isinstance(package, io.IOBase):
        package.seek(0)
    with zipfile.ZipFile(package, "a", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{folder}/{KERNEL_MODULES_RECORD}", json.dumps(record, indent=1))
    if isinstance(package, io.IOBase):
        package.seek(0)
    if unrecorded:
        warnings.warn(f"aoti_compile_and_package: {len(unrecorded)} kernel(s) run without a RecordFunction "
                      f"({', '.join(unrecorded[:5])}{', ...' if len(unrecorded) > 5 else ''}): their time "
                      "stays in the region around them, or the residual",
                      stacklevel=3)
