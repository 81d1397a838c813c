"""regionprof.torch.profile: input handling, schedule, discovery, methods, restoration, report."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
import torch
from torch import nn

import regionprof
import regionprof.torch as rtorch


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


class Vae(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode(self.enc(x))

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.dec(z)

    def _private_helper(self) -> int:
        return 1


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Linear(8, 8)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.heads = nn.ModuleDict({"a": nn.Linear(8, 8), "b": nn.Linear(8, 8)})
        self.plain_list = [nn.Linear(8, 8)]  # not entered
        self.vae = Vae()

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = self.heads["a"](x) + self.heads["b"](x)
        return self.vae(x) * scale


def region_ids(p: regionprof.Profile) -> List[str]:
    return [r["id"] for r in p.data["regions"]]


def run_calls(p: regionprof.Profile, run: int = 0) -> Dict[str, int]:
    return {r["region_id"]: r["calls"] for r in p.data["runs"][run]["regions"]}


def snapshot(module: nn.Module) -> List[Any]:
    state = []
    for m in module.modules():
        state.append((id(m), sorted(m.__dict__.keys()), len(m._forward_hooks), len(m._forward_pre_hooks),
                      len(getattr(m, "_forward_hooks_always_called", {}))))
    return state


@pytest.fixture
def net() -> Net:
    torch.manual_seed(0)
    return Net()


def test_topmost_modules_are_untuned_regions(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=2)
    ids = region_ids(p)
    assert "untuned_module:stem" in ids
    assert "untuned_module:blocks.0" in ids and "untuned_module:blocks.1" in ids  # ModuleList looked through
    assert "untuned_module:heads.a" in ids and "untuned_module:heads.b" in ids  # ModuleDict looked through
    assert "untuned_module:vae" in ids
    assert not any("plain_list" in i for i in ids)
    assert not any(i.startswith("untuned_module:blocks.0.") for i in ids)  # topmost only
    assert run_calls(p)["untuned_module:blocks.0"] == 1
    assert len(p.data["runs"]) == 2


def test_module_type_is_qualified_class_name(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1)
    types = {r["id"]: r["module_type"] for r in p.data["regions"]}
    assert types["untuned_module:stem"] == "torch.nn.modules.linear.Linear"
    assert types["untuned_module:blocks.0"].endswith("test_torch_profile.Block")


def test_tuned_modules_are_aot_and_holders_are_descended(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1, tuned={"vae.enc": "enc_trt", "stem": ""})
    ids = region_ids(p)
    assert "aot_module:enc_trt" in ids
    assert "aot_module:stem" in ids  # empty name: the path
    assert "untuned_module:vae" not in ids  # holds a tuned module: descended into
    assert "untuned_module:vae.dec" in ids


def test_tuned_root_is_the_object_itself(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1, tuned={"": "whole"})
    assert region_ids(p) == ["aot_module:whole"]


def test_unknown_tuned_path_raises(net: Net) -> None:
    with pytest.raises(ValueError, match="'nope'"):
        rtorch.profile(net, torch.randn(2, 8), tuned={"nope": "x"})


def test_every_level_marks_every_module(net: Net) -> None:
    found = [r.region_id for r in rtorch.discover(net, every_level=True)]
    assert "untuned_module:blocks.0.fc" in found and "untuned_module:blocks.0" in found
    assert "untuned_module:blocks" not in found  # containers are looked through
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1, every_level=True)
    calls = run_calls(p)
    assert "untuned_module:blocks.0" in calls
    assert "untuned_module:blocks.0.fc" not in calls  # nested: the topmost region owns its time


def test_user_methods_are_regions(net: Net) -> None:
    regions = {r.path: r for r in rtorch.discover(net)}
    assert regions["vae"].methods == ("decode", "_private_helper")  # not forward, nn.Module's or dunders
    assert regions["stem"].methods == ()  # torch's own classes: none
    holder = type("Holder", (), {})()
    holder.vae = net.vae
    p = rtorch.profile(holder, torch.randn(2, 4), inference_function=lambda z: holder.vae.decode(z), measured_runs=2)
    assert "untuned_module:vae.decode" in region_ids(p)
    assert run_calls(p)["untuned_module:vae.decode"] == 1


def test_non_module_object_attributes_are_discovered() -> None:
    pipeline = type("Pipeline", (), {})()
    pipeline.text = nn.Linear(8, 8)
    pipeline.layers = nn.ModuleList([nn.Linear(8, 8)])
    pipeline.plain = {"x": nn.Linear(8, 8)}  # not entered
    pipeline.scale = 3
    found = [r.region_id for r in rtorch.discover(pipeline)]
    assert found == ["untuned_module:text", "untuned_module:layers.0"]
    p = rtorch.profile(pipeline, torch.randn(2, 8),
                       inference_function=lambda x: pipeline.layers[0](pipeline.text(x)), measured_runs=1)
    assert region_ids(p) == found
    assert p.data["target"]["type"] == "torch_object"
    assert p.data["config"]["uses_inference_function"] is True


@pytest.mark.parametrize(
    "input_data, args_count, kwargs",
    [(None, 0, []), ((1, 2), 2, []), ({"x": 1, "y": 2}, 0, ["x", "y"]), ([1, 2], 1, [])],
)
def test_input_data_forms(input_data: Any, args_count: int, kwargs: List[str]) -> None:
    seen: List[Any] = []
    model = nn.Linear(2, 2)

    def fn(*args: Any, **kw: Any) -> None:
        seen.append((args, kw, torch.is_grad_enabled()))
        model(torch.ones(1, 2))

    p = rtorch.profile(model, input_data, inference_function=fn, warmup_runs=0, measured_runs=1)
    args, kw, grad = seen[0]
    if isinstance(input_data, dict):
        assert args == () and kw == input_data
    elif isinstance(input_data, tuple):
        assert args == input_data and kw == {}
    elif input_data is None:
        assert args == () and kw == {}
    else:
        assert args == (input_data,) and kw == {}
    assert grad is False  # every call under torch.no_grad()
    assert p.data["input"] == {"args_count": args_count, "kwargs": kwargs}


def test_obj_is_called_without_inference_function(net: Net) -> None:
    p = rtorch.profile(net, {"x": torch.randn(2, 8), "scale": 2.0}, measured_runs=1)
    assert p.data["input"] == {"args_count": 0, "kwargs": ["x", "scale"]}
    assert p.data["config"]["uses_inference_function"] is False
    assert p.data["target"]["type"] == "torch_module"


def test_schedule_warmup_internal_and_measured_runs() -> None:
    calls: List[int] = []
    model = nn.Linear(2, 2)
    p = rtorch.profile(model, None, inference_function=lambda: calls.append(1), warmup_runs=2, measured_runs=4)
    assert len(calls) == 2 + 1 + 4  # warm-up, internal recorded warm-up (discarded), measured
    assert len(p.data["runs"]) == 4
    assert p.data["config"]["warmup_runs"] == 2 and p.data["config"]["measured_runs"] == 4
    assert p.data["config"]["run_marker"] == "regionprof.profiled_run"


def test_everything_restored_after_success_and_after_exception(net: Net) -> None:
    before = snapshot(net)
    rtorch.profile(net, torch.randn(2, 8), measured_runs=1, every_level=True)
    assert snapshot(net) == before
    assert "decode" not in net.vae.__dict__

    class Boom(RuntimeError):
        pass

    def failing(x: torch.Tensor) -> None:
        net(x)
        raise Boom("workload failed")

    with pytest.raises(Boom, match="workload failed"):
        rtorch.profile(net, torch.randn(2, 8), inference_function=failing, measured_runs=1)
    assert snapshot(net) == before

    class Raises(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = nn.Linear(2, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise ValueError("inside forward")

    bad = nn.Sequential(Raises())
    with pytest.raises(ValueError, match="inside forward"):
        rtorch.profile(bad, torch.randn(1, 2), measured_runs=1)
    assert all(len(m._forward_hooks) == 0 and len(m._forward_pre_hooks) == 0 for m in bad.modules())
    # A second profile works and is complete.
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=2)
    assert len(p.data["runs"]) == 2 and "untuned_module:stem" in region_ids(p)


def test_user_hooks_are_kept(net: Net) -> None:
    seen: List[str] = []
    handle = net.stem.register_forward_hook(lambda m, a, o: seen.append("hook"))
    try:
        rtorch.profile(net, torch.randn(2, 8), warmup_runs=0, measured_runs=1)
        assert seen == ["hook", "hook"]  # internal warm-up + measured run
        assert len(net.stem._forward_hooks) == 1
    finally:
        handle.remove()


def test_trace_file_none_by_default_and_written_when_asked(net: Net, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1)
    assert p.trace_file is None
    assert list(tmp_path.iterdir()) == []  # nothing written by default
    q = rtorch.profile(net, torch.randn(2, 8), measured_runs=1, trace_file="t.json")
    assert q.trace_file == (tmp_path / "t.json").resolve() and q.trace_file.is_absolute()
    trace = json.loads(q.trace_file.read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert "untuned_module:stem" in names and "regionprof.profiled_run" in names
    out = q.write_json(tmp_path / "p.json")
    assert json.loads(out.read_text())["schema_version"] == 1
    assert "## Attribution per run" in q.markdown()


def test_residual_and_fractions_sum_to_one(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=2)
    for run in p.data["runs"]:
        total = sum(r["cpu_time_fraction"] for r in run["regions"]) + run["residual"]["cpu_time_fraction"]
        assert total == pytest.approx(1.0, abs=1e-6)


def test_not_callable_raises() -> None:
    with pytest.raises(TypeError):
        rtorch.profile(object())


def test_regions_are_recorded_by_regionprof_not_torch_profiler(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1)
    assert not torch.autograd.profiler._is_profiler_enabled
    assert p.data["tool"]["name"] == "regionprof"
    assert p.data["config"]["region_rules"][0]["pattern"] == "aot_module:"
