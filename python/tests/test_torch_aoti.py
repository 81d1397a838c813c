"""AOTInductor packages profiled module by module from LibTorch (docs/torch.md, "AOTInductor"): the package is
made here by regionprof.torch.aoti_compile_and_package with the real inductor, then run by the C++ example
``torch_aoti`` (torch::inductor::AOTIModelPackageLoader and regionprof::torch::instrument_package), as a
LibTorch deployment runs it.

The model is the compiled tests' two-block ``Net`` (``b(a(x)) * 2``, a block ``relu(n(l(x)))``). Its package's
``kernel_information.json`` (read by hand) lists four kernels in call order: ``aoti_torch_cpu_addmm_out:1``
(``linear``, module ``a.l``), ``cpp_fused_native_layer_norm_relu_0:2`` (``layer_norm`` and ``relu``: ``a``),
``aoti_torch_cpu_addmm_out:3`` (``linear_1``: ``b.l``) and ``cpp_fused_mul_native_layer_norm_relu_1:4``
(``layer_norm_1``, ``relu_1`` and the root's ``mul``: the root, so the residual). The package is built once
for the file (20-60 s); the LibTorch here has no CUDA libraries, so it is built without linking libtorch
(``aot_inductor.link_libtorch=False``: the model library takes torch's symbols from the program)."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Set

import pytest
import torch
import torch._inductor.config
from torch import nn

import regionprof
import regionprof.torch as rtorch
from models import LinearNormBlock, Net
from regionprof._command import _environment
from regionprof._torch_aoti import KERNEL_MODULES_RECORD, kernel_modules

torch._inductor.config.compile_threads = 1  # no compile worker pool: on 2 cores it only costs start-up

EXAMPLE = Path(os.environ.get("REGIONPROF_BUILD_DIR", "build")) / "bin" / "torch_aoti"
pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason=f"{EXAMPLE} not built (the LibTorch adapter is off)")

X = torch.randn(8, 32)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    model = Net().eval()
    exported = torch.export.export(model, (X,))
    path = tmp_path_factory.mktemp("aoti") / "net.pt2"
    result = rtorch.aoti_compile_and_package(exported, package_path=str(path),
                                             inductor_configs={"aot_inductor.link_libtorch": False})
    assert result == str(path)
    return path


def record_of(path: Path) -> Dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read(f"{path.stem}/{KERNEL_MODULES_RECORD}"))


def with_record(package: Path, target: Path, record: Optional[str]) -> Path:
    """A copy of ``package`` whose record is ``record`` (None: no record), renamed to ``target``."""
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as copy:
        for info in source.infolist():
            name = info.filename.split("/", 1)[1]
            if name != KERNEL_MODULES_RECORD:
                copy.writestr(f"{target.stem}/{name}", source.read(info))
        if record is not None:
            copy.writestr(f"{target.stem}/{KERNEL_MODULES_RECORD}", record)
    return target


def example(*arguments: str) -> subprocess.CompletedProcess:
    """The example run as a program of its own: without the NVTX tool variable ``import regionprof`` set
    here, which would make this test's extension the NVTX tool of the example too."""
    return subprocess.run([str(EXAMPLE), *arguments], capture_output=True, text=True, timeout=120,
                          env=_environment())


def run_example(package: Path, tmp_path: Path, *flags: str) -> regionprof.Profile:
    out = tmp_path / "profile.json"
    done = example(str(package), "--input-shape", "8,32", "--runs", "3", "-o", str(out), *flags)
    assert done.returncode == 0, done.stderr
    return regionprof.load(out)


def region_ops(p: regionprof.Profile) -> Dict[str, Set[str]]:
    found: Dict[str, Set[str]] = {}
    for row in p.to_pandas("region_ops").itertuples():
        found.setdefault(str(row.region_id), set()).add(str(row.key))
    return found


def kernels_of(ops: Set[str]) -> Set[str]:
    """The package's kernels among a region's ops, inductor's graph prefix (``graph_<n>_``) cut."""
    return {key.split("_", 2)[2] if key.startswith("graph_") else key
            for key in ops if key.startswith(("graph_", "aoti_torch_"))}


def tree(p: regionprof.Profile) -> Dict[str, float]:
    return {" > ".join(n["path"]): n["calls"] for n in p.data["tree_summary"]}


def warning_codes(p: regionprof.Profile) -> List[str]:
    """The warnings about the ranges and the mapping (not the machine's: MACHINE_LOADED under a busy suite)."""
    return [w["code"] for w in p.data["warnings"]
            if w["code"] in ("COMPILED_MODULES", "OVERLAPPING_RANGES", "UNBALANCED_RANGES", "NVTX_TOOL_CONFLICT")]


def test_the_record_names_each_kernels_module(package: Path) -> None:
    model = record_of(package)["models"]["model"]
    assert [(k["name"].split("_", 2)[2] if k["name"].startswith("graph_") else k["name"], k["module"])
            for k in model["kernels"]] == [
        ("aoti_torch_cpu_addmm_out", "a.l"),
        ("cpp_fused_native_layer_norm_relu_0", "a"),
        ("aoti_torch_cpu_addmm_out", "b.l"),
        ("cpp_fused_mul_native_layer_norm_relu_1", ""),
    ]
    assert [k["nodes"] for k in model["kernels"]] == [
        ["linear"], ["layer_norm", "relu"], ["linear_1"], ["layer_norm_1", "mul", "relu_1"]]
    assert [(m["path"], m["type"].rsplit(".", 1)[-1]) for m in model["modules"]] == [
        ("", "Net"), ("a", "LinearNormBlock"), ("a.l", "Linear"), ("a.n", "LayerNorm"),
        ("b", "LinearNormBlock"), ("b.l", "Linear"), ("b.n", "LayerNorm")]
    assert model["unrecorded"] == []


def test_libtorch_runs_have_the_modules_as_regions_of_their_kernels(package: Path, tmp_path: Path) -> None:
    p = run_example(package, tmp_path, "--ops")
    assert [r["id"] for r in p.data["regions"]] == ["untuned_module:a", "untuned_module:b"]
    assert [r["module_type"] for r in p.data["regions"]] == ["LinearNormBlock", "LinearNormBlock"]
    assert tree(p) == {"untuned_module:a": 2, "untuned_module:b": 1}  # a kernel call an instance
    ops = region_ops(p)
    assert kernels_of(ops["untuned_module:a"]) == {"aoti_torch_cpu_addmm_out", "cpp_fused_native_layer_norm_relu_0"}
    assert kernels_of(ops["untuned_module:b"]) == {"aoti_torch_cpu_addmm_out"}
    assert kernels_of(ops["(residual)"]) == {"cpp_fused_mul_native_layer_norm_relu_1"}
    assert "aten::copy_" in ops["untuned_module:b"]  # what addmm's extern kernel runs is in its region too
    assert warning_codes(p) == []  # no OVERLAPPING_RANGES: each kernel's op range is inside its regions


def test_every_level_nests_the_linear_inside_its_block(package: Path, tmp_path: Path) -> None:
    p = run_example(package, tmp_path, "--ops", "--every-level")
    assert tree(p) == {"untuned_module:a": 2, "untuned_module:a > untuned_module:a.l": 1,
                       "untuned_module:b": 1, "untuned_module:b > untuned_module:b.l": 1}
    ops = region_ops(p)  # a nested region's ops count for the topmost one (rule 20)
    assert sorted(ops) == ["(residual)", "untuned_module:a", "untuned_module:b"]
    assert kernels_of(ops["untuned_module:a"]) == {"aoti_torch_cpu_addmm_out", "cpp_fused_native_layer_norm_relu_0"}


def test_without_ops_the_regions_are_the_same(package: Path, tmp_path: Path) -> None:
    p = run_example(package, tmp_path)
    assert tree(p) == {"untuned_module:a": 2, "untuned_module:b": 1}
    assert [entry["rows"] for entry in p.data["region_ops"]] == [[], [], []]
    assert warning_codes(p) == []


def test_a_kernel_traced_to_no_module_is_a_warning(package: Path, tmp_path: Path) -> None:
    record = record_of(package)
    record["models"]["model"]["kernels"][1]["module"] = None  # a's fused kernel: untraced
    p = run_example(with_record(package, tmp_path / "untraced.pt2", json.dumps(record)), tmp_path)
    assert tree(p) == {"untuned_module:a": 1, "untuned_module:b": 1}
    [message] = [w["message"] for w in p.data["warnings"] if w["code"] == "COMPILED_MODULES"]
    assert message.startswith("1 kernel call(s) of the package '") and "cpp_fused_native_layer_norm_relu_0" in message


def test_a_package_torch_made_has_its_kernels_as_ops_and_a_warning(package: Path, tmp_path: Path) -> None:
    p = run_example(with_record(package, tmp_path / "plain.pt2", None), tmp_path, "--ops")
    assert p.data["regions"] == []
    assert kernels_of(region_ops(p)["(residual)"]) == {
        "aoti_torch_cpu_addmm_out", "cpp_fused_native_layer_norm_relu_0", "cpp_fused_mul_native_layer_norm_relu_1"}
    [message] = [w["message"] for w in p.data["warnings"] if w["code"] == "COMPILED_MODULES"]
    assert "plain.pt2' has no extra/regionprof_kernel_modules.json" in message
    assert "package the model with regionprof.torch.aoti_compile_and_package" in message


RECORD_HEAD = '"format": "regionprof kernel modules", "version"'


@pytest.mark.parametrize("record, problem", [
    ("{not json", "(extra/regionprof_kernel_modules.json): not JSON"),
    ("{" + RECORD_HEAD + ': 7, "models": {}}', "version 7, this regionprof reads version 1"),
    ("{" + RECORD_HEAD + ': 1, "models": {"other": {}}}', "no model 'model' (models: other)"),
    ("{" + RECORD_HEAD + ': 1, "models": {"model": {"modules": [], "kernels": [{"name": "k", "module": "x"}]}}}',
     "kernel 'k' belongs to module 'x', which \"modules\" does not list"),
])
def test_a_package_with_a_broken_record_is_refused_naming_the_file(package: Path, tmp_path: Path,
                                                                      record: Optional[str], problem: str) -> None:
    broken = with_record(package, tmp_path / "broken.pt2", record)
    done = example(str(broken), "--input-shape", "8,32")
    assert done.returncode == 1
    assert f"'{broken}'" in done.stderr and problem in done.stderr, done.stderr


class Flattening(nn.Module):
    """A caller's view folded into the block's kernel must not move the kernel to the caller (rule 22)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = LinearNormBlock(32, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x.view(8, 32))


def test_record_names_of_gpu_and_cpu_kernels_and_views_left_aside() -> None:
    """kernel_modules on the exported program with a GPU package's forms of kernel information (no compile):
    a Triton kernel's launch runs under ``kernels_.<kernel>``, a C++ kernel under ``graph_<n>_<kernel>``."""
    exported = torch.export.export(Flattening().eval(), (X.reshape(4, 64),))
    names = {n.name for n in exported.graph.nodes}
    assert {"view", "linear", "layer_norm", "relu"} <= names
    information = {
        "triton_poi_fused_relu_1:2": {"pre_grad_nodes": ["layer_norm", "relu"]},
        "aoti_torch_cuda_mm_out:1": {"pre_grad_nodes": ["view", "linear"]},  # the caller's view aside: a.l's
        "cpp_fused_view_0:3": {"pre_grad_nodes": ["view"]},  # only a view: the caller's (the root)
        "triton_per_fused_unknown_4:4": {"pre_grad_nodes": ["no_such_node"]},
        "triton_poi_fused_5:5": {"pre_grad_nodes": ["relu"]},
    }
    recorded = ["kernels_.triton_poi_fused_relu_1", "graph_1_cpp_fused_view_0", "kernels_.triton_per_fused_unknown_4"]
    entry, unrecorded = kernel_modules(exported, information, recorded)
    assert [(k["handle"], k["name"], k["module"]) for k in entry["kernels"]] == [
        ("aoti_torch_cuda_mm_out:1", "aoti_torch_cuda_mm_out", "a.l"),  # an extern kernel: its own name
        ("triton_poi_fused_relu_1:2", "kernels_.triton_poi_fused_relu_1", "a"),
        ("cpp_fused_view_0:3", "graph_1_cpp_fused_view_0", ""),
        ("triton_per_fused_unknown_4:4", "kernels_.triton_per_fused_unknown_4", None),
    ]
    assert unrecorded == ["triton_poi_fused_5:5"] == entry["unrecorded"]  # no RecordFunction of that name
    assert [m["path"] for m in entry["modules"]] == ["", "a", "a.l", "a.n"]
    assert entry["modules"][0]["type"].endswith("Flattening")


def test_settings_the_mapping_needs_cannot_be_turned_off() -> None:
    exported = torch.export.export(Net().eval(), (X,))
    with pytest.raises(ValueError, match=r"inductor_configs\['cpp.enable_kernel_profile'\] must be True"):
        rtorch.aoti_compile_and_package(exported, inductor_configs={"cpp.enable_kernel_profile": False})
