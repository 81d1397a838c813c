"""regionprof.torch.profile: input handling, schedule, discovery, methods, restoration, report."""

from __future__ import annotations

import functools
import gzip
import inspect
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
import torch
from torch import nn

import regionprof
import regionprof.torch as rtorch
from models import Block, Vae


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
    """Every module's __dict__ (keys and the identity of each value) and hook tables."""
    state = []
    for m in module.modules():
        state.append((id(m), sorted((k, id(v)) for k, v in m.__dict__.items()), dict(m._forward_hooks),
                      dict(m._forward_pre_hooks), dict(getattr(m, "_forward_hooks_always_called", {}))))
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
    assert types["untuned_module:blocks.0"] == "models.Block"


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
    assert p.data["target"]["kind"] == "torch_object"
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
    assert p.data["target"]["kind"] == "torch_module"


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
    assert all(len(m._forward_hooks) == 0 and len(m._forward_pre_hooks) == 0
               and "_compiled_call_impl" not in m.__dict__ for m in bad.modules())
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


def test_no_hook_is_registered_while_profiling(net: Net) -> None:
    seen: List[Any] = []

    def look(x: torch.Tensor) -> None:
        for m in (net.stem, net.blocks[0], net.vae):
            seen.append((len(m._forward_hooks) + len(m._forward_pre_hooks),
                         type(m.__dict__.get("_compiled_call_impl")).__name__))
        seen.append(net.vae.decode.__name__)
        seen.append(list(inspect.signature(net.vae.decode).parameters))
        net(x)

    p = rtorch.profile(net, torch.randn(2, 8), inference_function=look, warmup_runs=0, measured_runs=1)
    assert seen[:5] == [(0, "RegionWrapper")] * 3 + ["decode", ["z"]]
    assert "_compiled_call_impl" not in net.stem.__dict__
    assert run_calls(p)["untuned_module:stem"] == 1


def test_region_closes_when_forward_raises() -> None:
    class Bad(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise ValueError("bad forward")

    holder = type("Holder", (), {})()
    holder.bad = Bad()
    holder.good = nn.Linear(2, 2)

    def step(x: torch.Tensor) -> None:
        with pytest.raises(ValueError, match="bad forward"):
            holder.bad(x)
        holder.good(x)

    p = rtorch.profile(holder, torch.randn(1, 2), inference_function=step, measured_runs=2)
    # Had bad's region stayed open, good would be nested in it and own nothing of its own.
    assert run_calls(p) == {"untuned_module:bad": 1, "untuned_module:good": 1}
    assert "UNBALANCED_RANGES" not in {w["code"] for w in p.data["warnings"]}


def test_user_hooks_run_inside_the_region_in_their_order(net: Net) -> None:
    order: List[str] = []
    pre = net.stem.register_forward_pre_hook(lambda m, a: order.append("pre"))
    post = net.stem.register_forward_hook(lambda m, a, o: order.append("post"))
    try:
        before = snapshot(net)
        rtorch.profile(net, torch.randn(2, 8), warmup_runs=0, measured_runs=1)
        assert order == ["pre", "post"] * 2
        assert snapshot(net) == before
    finally:
        pre.remove()
        post.remove()


def test_instance_forward_is_wrapped_and_restored(net: Net) -> None:
    calls: List[int] = []
    original = net.stem.forward

    def accelerate_style(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return original(x)

    net.stem.forward = functools.update_wrapper(functools.partial(accelerate_style), accelerate_style)
    installed = net.stem.__dict__["forward"]
    before = snapshot(net)
    p = rtorch.profile(net, torch.randn(2, 8), warmup_runs=1, measured_runs=2)
    assert len(calls) == 1 + 1 + 2
    assert run_calls(p)["untuned_module:stem"] == 1
    assert net.stem.__dict__["forward"] is installed
    assert snapshot(net) == before


def test_tuned_must_name_the_root_and_be_str_to_str(net: Net) -> None:
    with pytest.raises(ValueError, match="needs a region name"):
        rtorch.profile(net, torch.randn(2, 8), tuned={"": ""})
    with pytest.raises(TypeError, match="tuned must"):
        rtorch.profile(net, torch.randn(2, 8), tuned=["stem"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tuned must map str"):
        rtorch.profile(net, torch.randn(2, 8), tuned={"stem": 3})  # type: ignore[dict-item]


def test_target_type_is_the_class_and_kind_is_regionprofs(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1)
    assert p.data["target"]["type"] == f"{Net.__module__}.Net"
    assert p.data["target"]["kind"] == "torch_module"
    pipeline = type("Pipeline", (), {})()
    pipeline.text = nn.Linear(8, 8)
    q = rtorch.profile(pipeline, torch.randn(2, 8), inference_function=pipeline.text, measured_runs=1)
    assert q.data["target"]["type"].endswith(".Pipeline") and q.data["target"]["kind"] == "torch_object"


def test_harness_options_are_accepted(net: Net) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=1, cross_thread=True, row_limit=3,
                       device_tracing=False)
    assert p.data["config"]["cross_thread"] is True


def test_trace_file_directory_created_and_bad_path_fails_before_the_first_run(net: Net, tmp_path: Path) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=2, trace_file=tmp_path / "new" / "dir" / "t.json")
    assert p.trace_file == (tmp_path / "new" / "dir" / "t.json").resolve() and p.trace_file.exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    calls: List[int] = []
    with pytest.raises(OSError, match="trace_file"):
        rtorch.profile(net, None, inference_function=lambda: calls.append(1), trace_file=blocker / "t.json")
    assert calls == []  # nothing ran


def test_own_trace_reads_back_to_the_same_runs(net: Net, tmp_path: Path) -> None:
    p = rtorch.profile(net, torch.randn(2, 8), measured_runs=3, trace_file=tmp_path / "own.json")
    q = regionprof.analyze(p.trace_file, warmup_runs=1)
    assert len(q.data["runs"]) == 3
    assert "RUN_COUNT_MISMATCH" not in {w["code"] for w in q.data["warnings"]}
    assert [r["id"] for r in q.data["regions"]] == region_ids(p)
    for mine, back in zip(p.data["runs"], q.data["runs"]):
        assert run_calls(p, mine["run_index"]) == run_calls(q, back["run_index"])


def test_torch_profile_stops_on_noise_with_cold_runs() -> None:
    # A huge max_noise is met once min_runs runs give a defined noise (6 or more): exactly min_runs runs.
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
    p = rtorch.profile(model, torch.randn(4, 16), warmup_runs=0, max_noise=1e9, min_runs=6, flush_cache=True)
    assert len(p.data["runs"]) == 6
    assert p.data["stopping"]["reason"] == "noise_reached" and p.data["stopping"]["runs"] == 6
    assert p.data["environment"]["cpu_count"] >= 1
    with pytest.raises(ValueError, match="apply only with max_noise"):
        rtorch.profile(model, torch.randn(4, 16), min_runs=3)
