"""regionprof.torch.profile with models compiled before the profile began (CPU inductor): torch.compile(model),
model.compile() in place, regional compilation; no graph break and no recompilation from profiling. Their
kernels carry no provenance, so each compiled module is one region (test_torch_compiled_modules.py has the
models compiled inside a profile, whose modules are regions).

Compiling costs 20-25 s per model here, so the compiled models are built once per module and shared."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import pytest
import torch
import torch._dynamo
import torch._inductor.config
from torch import nn
from torch._dynamo.utils import counters

import regionprof
import regionprof.torch as rtorch
from models import Block


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = Block()
        self.b = Block()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


X = torch.randn(2, 8)
torch._inductor.config.compile_threads = 1  # no compile worker pool: on 2 cores it only costs start-up


def counted() -> Dict[str, Dict[str, Any]]:
    """Dynamo's counters (frames, graph breaks, unique graphs, recompiles) as plain dicts."""
    return {name: dict(values) for name, values in counters.items()}


def warm(model: Any) -> Any:
    with torch.no_grad():
        model(X)
    return model


def region_ids(p: regionprof.Profile) -> List[str]:
    return [r["id"] for r in p.data["regions"]]


def run_calls(p: regionprof.Profile) -> Dict[str, int]:
    return {r["region_id"]: r["calls"] for r in p.data["runs"][0]["regions"]}


def compiled_warnings(p: regionprof.Profile) -> List[str]:
    return [w["message"] for w in p.data["warnings"] if w["code"] == "COMPILED_MODULES"]


def state(model: nn.Module) -> List[Tuple[int, List[Tuple[str, int]], int]]:
    return [(id(m), sorted((k, id(v)) for k, v in m.__dict__.items()), len(m._forward_hooks) + len(m._forward_pre_hooks))
            for m in model.modules()]


@pytest.fixture(scope="module")
def whole() -> Iterator[Tuple[Net, nn.Module]]:
    """torch.compile(model), compiled by one call."""
    torch.manual_seed(0)
    net = Net().eval()
    yield net, warm(torch.compile(net))


@pytest.fixture(scope="module")
def in_place() -> Iterator[Net]:
    """model.compile(), compiled by one call."""
    torch.manual_seed(0)
    net = Net().eval()
    net.compile()
    yield warm(net)


@pytest.fixture(scope="module")
def regional() -> Iterator[Net]:
    """Each block compiled in place, the model around them eager."""
    torch.manual_seed(0)
    net = Net().eval()
    net.a.compile()
    net.b.compile()
    yield warm(net)


def test_torch_compile_is_one_region_named_after_the_original(whole: Tuple[Net, nn.Module]) -> None:
    net, compiled = whole
    before = state(compiled)
    p = rtorch.profile(compiled, X, warmup_runs=1, measured_runs=2)
    assert region_ids(p) == ["untuned_module:Net"]
    assert not any("_orig_mod" in i for i in region_ids(p))
    assert p.data["regions"][0]["module_type"] == f"{Net.__module__}.Net"
    assert run_calls(p) == {"untuned_module:Net": 1}
    (message,) = compiled_warnings(p)
    assert message.startswith("6 module(s) run inside the compiled code of untuned_module:Net (torch.compile(module))")
    assert "a, a.fc, a.act, b, b.fc, b.act" in message
    assert message.endswith("It was compiled before the profile began, so its kernels carry no provenance: let its "
                            "first call (the compile) run inside the profile to have them counted for the modules "
                            "they came from.")
    assert state(compiled) == before
    assert [r.region_id for r in rtorch.discover(compiled, every_level=True, compiled_modules=False)] == [
        "untuned_module:Net"]
    assert [(r.region_id, r.opened_by) for r in rtorch.discover(compiled)] == [
        ("untuned_module:Net", "unmapped_kernels"), ("untuned_module:a", "kernels"), ("untuned_module:b", "kernels")]


def test_profiling_adds_no_graph_break_and_no_recompilation(whole: Tuple[Net, nn.Module], in_place: Net,
                                                            regional: Net) -> None:
    _, compiled = whole
    for model in (compiled, in_place, regional):
        without = counted()
        with torch.no_grad():
            for _ in range(1 + 1 + 2):  # as many calls as the profile makes
                model(X)
        assert counted() == without
        rtorch.profile(model, X, warmup_runs=1, measured_runs=2, every_level=True)
        assert counted() == without  # frames, graph breaks, unique graphs, recompiles: all equal
    assert counters["graph_break"] == {}


def test_compiled_child_is_its_path_and_its_modules_are_not_regions() -> None:
    torch.manual_seed(0)
    net = Net().eval()
    net.a = torch.compile(net.a)  # an OptimizedModule inside an eager model
    warm(net)
    marked = [r.region_id for r in rtorch.discover(net, every_level=True, compiled_modules=False)]
    assert marked == ["untuned_module:a", "untuned_module:b", "untuned_module:b.fc", "untuned_module:b.act"]
    assert [(r.region_id, r.opened_by) for r in rtorch.discover(net, every_level=True)] == [
        ("untuned_module:a", "call"), ("untuned_module:a.fc", "kernels"), ("untuned_module:a.act", "kernels"),
        ("untuned_module:b", "call"), ("untuned_module:b.fc", "call"), ("untuned_module:b.act", "call")]
    p = rtorch.profile(net, X, measured_runs=1, every_level=True)
    assert region_ids(p) == ["untuned_module:a", "untuned_module:b"]  # b.fc, b.act: nested in b
    assert run_calls(p) == {"untuned_module:a": 1, "untuned_module:b": 1}
    (message,) = compiled_warnings(p)
    assert message.startswith("2 module(s) run inside the compiled code of untuned_module:a") and "(a.fc, a.act)" in message
    with pytest.raises(ValueError, match=r"'a.fc' run inside the compiled module 'a'"):
        rtorch.discover(net, tuned={"a.fc": "fc_trt"})


class Outer(nn.Module):
    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def test_compiled_blocks_below_a_top_level_child_are_regions_with_every_level(regional: Net) -> None:
    outer = Outer(regional)
    p = rtorch.profile(outer, X, measured_runs=2)
    assert region_ids(p) == ["untuned_module:body"]
    assert compiled_warnings(p) == []
    nested = rtorch.profile(outer, X, measured_runs=2, every_level=True)
    assert region_ids(nested) == ["untuned_module:body"]
    assert [n["path"] for n in nested.data["tree_summary"]] == [
        ["untuned_module:body"], ["untuned_module:body", "untuned_module:body.a"],
        ["untuned_module:body", "untuned_module:body.b"]]
    assert [m.split(" (")[0] for m in compiled_warnings(nested)] == [
        "2 module(s) run inside the compiled code of untuned_module:body.a",
        "2 module(s) run inside the compiled code of untuned_module:body.b"]


def test_regional_compilation_gives_a_region_per_block(regional: Net) -> None:
    before = state(regional)
    impls = [m.__dict__["_compiled_call_impl"] for m in (regional.a, regional.b)]
    p = rtorch.profile(regional, X, measured_runs=2)
    assert region_ids(p) == ["untuned_module:a", "untuned_module:b"]
    assert run_calls(p) == {"untuned_module:a": 1, "untuned_module:b": 1}
    earlier = ("It was compiled before the profile began, so its kernels carry no provenance: let its first call "
               "(the compile) run inside the profile to have them counted for the modules they came from.")
    assert compiled_warnings(p) == [
        "2 module(s) run inside the compiled code of untuned_module:a (module.compile()) and are not regions of "
        f"their own: untuned_module:a owns their time (a.fc, a.act). {earlier}",
        "2 module(s) run inside the compiled code of untuned_module:b (module.compile()) and are not regions of "
        f"their own: untuned_module:b owns their time (b.fc, b.act). {earlier}",
    ]
    assert state(regional) == before
    assert [m.__dict__["_compiled_call_impl"] for m in (regional.a, regional.b)] == impls


def test_model_compile_in_place_is_never_an_empty_profile(in_place: Net) -> None:
    before = state(in_place)
    p = rtorch.profile(in_place, X, measured_runs=2)
    assert region_ids(p) == ["untuned_module:Net"]
    assert run_calls(p) == {"untuned_module:Net": 1}
    assert compiled_warnings(p) and "untuned_module:Net owns their time" in compiled_warnings(p)[0]
    assert state(in_place) == before


def test_compiled_inference_function_touches_no_module() -> None:
    torch.manual_seed(0)
    net = Net().eval()
    step = torch.compile(lambda x: net(x), backend="eager")
    warm(step)
    before = counted()
    p = rtorch.profile(net, X, inference_function=step, measured_runs=2)
    assert counted() == before
    assert p.data["regions"] == []
    (message,) = compiled_warnings(p)
    assert message.startswith("inference_function is compiled (torch.compile): the 2 module(s) found in obj (a, b)")
