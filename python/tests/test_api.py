"""regionprof.profile, regionprof.region, regionprof.analyze (with a real torch.profiler trace), and
NVTX ranges of other libraries (the `nvtx` package) in the capture."""

from __future__ import annotations

import gzip
import shutil
import threading
from pathlib import Path
from typing import List

import nvtx
import pytest
import torch
from torch import nn

import regionprof


def ids(p: regionprof.Profile) -> List[str]:
    return [r["id"] for r in p.data["regions"]]


def calls(p: regionprof.Profile, run: int = 0) -> dict:
    return {r["region_id"]: r["calls"] for r in p.data["runs"][run]["regions"]}


def test_profile_any_callable_with_regions() -> None:
    counter: List[int] = []

    def step() -> None:
        counter.append(1)
        with regionprof.region("parse"):
            sum(range(2000))
        decode()

    @regionprof.region("decode")
    def decode() -> None:
        sum(range(1000))

    p = regionprof.profile(step, warmup_runs=1, measured_runs=3)
    assert len(counter) == 1 + 1 + 3
    assert len(p.data["runs"]) == 3
    assert calls(p) == {"region:parse": 1, "region:decode": 1}
    assert p.data["target"]["type"] == "callable"
    assert p.trace_file is None


def test_region_custom_kind_and_nesting() -> None:
    def step() -> None:
        with regionprof.region("outer", kind="phase"):
            with regionprof.region("inner"):
                pass

    p = regionprof.profile(step, measured_runs=1, regions=["phase:(.*)=phase", "region:(.*)=region"])
    assert calls(p) == {"phase:outer": 1}  # inner is nested: outer owns its time
    assert "region:inner" not in ids(p)


def test_workload_exception_propagates_and_next_profile_works() -> None:
    def boom() -> None:
        raise KeyError("from the workload")

    with pytest.raises(KeyError, match="from the workload"):
        regionprof.profile(boom)
    assert len(regionprof.profile(lambda: None, measured_runs=2).data["runs"]) == 2


def test_bad_rule_raises_value_error_with_cpp_message() -> None:
    with pytest.raises(ValueError, match=r"region rule 'layer_\(': invalid regex"):
        regionprof.profile(lambda: None, regions=["layer_(=layer"])
    with pytest.raises(ValueError, match="invalid regex"):
        regionprof.analyze("missing.json", regions=["(("])
    with pytest.raises(ValueError, match="measured_runs must be at least 1"):
        regionprof.profile(lambda: None, measured_runs=0)


def test_nvtx_package_ranges_are_recorded() -> None:
    def step() -> None:
        with nvtx.annotate("nvtx_pkg_range"):
            sum(range(1000))
        with nvtx.annotate("in_domain", domain="mylib"):
            pass
        nvtx.push_range("pushed")
        nvtx.pop_range()

    p = regionprof.profile(step, measured_runs=2, regions=["nvtx_pkg_(.*)=nvtx", "in_(domain)=lib", "pushed=p"])
    assert calls(p) == {"nvtx:range": 1, "lib:domain": 1, "p:pushed": 1}


def test_torch_emit_nvtx_ranges_need_no_torch_profiler() -> None:
    model = nn.Linear(4, 4)
    x = torch.randn(2, 4)

    def step() -> None:
        with torch.autograd.profiler.emit_nvtx(record_shapes=False):
            model(x)

    try:
        p = regionprof.profile(step, measured_runs=1, regions=[r"aten::(\w+).*=op"])
    except RuntimeError as e:  # CPU-only torch builds cannot emit NVTX
        pytest.skip(f"emit_nvtx unavailable: {e}")
    assert any(i.startswith("op:") for i in ids(p))


def test_off_thread_work_with_cross_thread() -> None:
    def step() -> None:
        def work() -> None:
            with regionprof.region("worker"):
                sum(range(20000))
        with regionprof.region("main"):
            t = threading.Thread(target=work)
            t.start()
            t.join()

    p = regionprof.profile(step, measured_runs=1, cross_thread=True)
    assert "region:main" in calls(p)


def _torch_profiler_trace(path: Path) -> None:
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU())
    x = torch.randn(4, 16)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            with torch.profiler.record_function("regionprof.profiled_run"):
                with torch.profiler.record_function("untuned_module:body"):
                    model(x)
                with torch.profiler.record_function("## tail ##"):
                    x.sum()
    prof.export_chrome_trace(str(path))


def test_analyze_real_torch_profiler_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    _torch_profiler_trace(trace)
    p = regionprof.analyze(trace)
    assert len(p.data["runs"]) == 3
    assert calls(p) == {"untuned_module:body": 1}
    assert p.data["target"]["type"] == "kineto_trace"
    ops = {row["name"] for row in p.data["profiler"]["key_averages"]["by_cpu_time_total"]} \
        if "by_cpu_time_total" in p.data["profiler"].get("key_averages", {}) else set()
    assert ops == set() or any(name.startswith("aten::") for name in ops)

    gz = tmp_path / "trace.json.gz"
    with open(trace, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    q = regionprof.analyze(gz, regions=["## (.*) ##=phase", "untuned_module:(.*)=untuned_module"],
                           row_limit=3)
    assert calls(q) == {"phase:tail": 1, "untuned_module:body": 1}
    assert "## Attribution per run" in q.markdown()


def test_analyze_run_marker_and_profiler_steps(tmp_path: Path) -> None:
    model = nn.Linear(8, 8)
    path = tmp_path / "steps.json"
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=torch.profiler.schedule(wait=0, warmup=1, active=2, repeat=1),
                                on_trace_ready=lambda prof: prof.export_chrome_trace(str(path))) as prof:
        for _ in range(3):
            model(torch.randn(2, 8))
            prof.step()
    p = regionprof.analyze(path, run_marker=r"ProfilerStep#\d+", regions=[r"aten::(linear)=op"], cross_thread=True)
    assert len(p.data["runs"]) == 2
    assert p.data["config"]["cross_thread"] is True
    assert "op:linear" in calls(p)


def test_analyze_bad_files_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    with pytest.raises(regionprof.TraceError, match="absent.json"):
        regionprof.analyze(missing)
    broken = tmp_path / "broken.json"
    broken.write_text('{"traceEvents": [ {"ph": "X", ')
    with pytest.raises(ValueError, match="broken.json"):
        regionprof.analyze(broken)


def test_profile_round_trip_through_its_own_trace(tmp_path: Path) -> None:
    def step() -> None:
        with regionprof.region("x"):
            pass

    p = regionprof.profile(step, measured_runs=2, trace_file=tmp_path / "own.json")
    assert p.trace_file is not None and p.trace_file.exists()
    q = regionprof.analyze(p.trace_file, regions=["region:(.*)=region"])
    # The trace keeps the internal warm-up run: 1 + 2 markers.
    assert len(q.data["runs"]) == 3 and calls(q) == {"region:x": 1}


def test_native_read_profile_gives_the_same_reports(tmp_path: Path) -> None:
    from regionprof import _native

    def step() -> None:
        with regionprof.region("x"):
            pass

    p = regionprof.profile(step, measured_runs=3)
    text = p.json()  # created_at is the time it was written: compare with the text read
    saved = _native.read_profile_text(text, "p.json")
    assert saved.json() == text
    assert "region:x" in saved.markdown() and saved.html().startswith("<!DOCTYPE html>")
    path = tmp_path / "p.json"
    p.write_json(path)
    assert _native.read_profile(str(path)).json() == path.read_text()
    with pytest.raises(ValueError, match="p.json: not a regionprof profile"):
        _native.read_profile_text("{}", "p.json")
