"""regionprof.profile, regionprof.region, regionprof.analyze (with a real torch.profiler trace), and
NVTX ranges of other libraries (the `nvtx` package) in the capture."""

from __future__ import annotations

import gzip
import os
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


def test_region_declared_work_gives_throughput_over_its_cpu_time() -> None:
    # docs/design.md, rule 18: two entries per run declare 4096 + 1024 bytes and 2 items (flops never);
    # throughput = declared work / the region's CPU time in that run, as the report gives it.
    copy = regionprof.region("copy", bytes=4096, items=2)

    def step() -> None:
        with copy:
            bytearray(1 << 16)
        with regionprof.region("copy", bytes=1024):
            bytearray(1 << 16)
        with regionprof.region("plain"):
            pass

    p = regionprof.profile(step, warmup_runs=0, measured_runs=3)
    cpu_medians = []
    for run in p.data["runs"]:
        entry = {r["region_id"]: r for r in run["regions"]}
        region = entry["region:copy"]
        assert region["calls"] == 2
        assert region["work"] == {"bytes": 5120, "items": 2}
        seconds = region["cpu_time_us"] / 1e6
        assert region["throughput"]["cpu_bytes_per_second"] == pytest.approx(5120 / seconds, rel=1e-12)
        assert region["throughput"]["cpu_items_per_second"] == pytest.approx(2 / seconds, rel=1e-12)
        assert "cpu_flops_per_second" not in region["throughput"]
        assert "work" not in entry["region:plain"] and "throughput" not in entry["region:plain"]
        cpu_medians.append(region["throughput"]["cpu_bytes_per_second"])
    summary = {s["region_id"]: s for s in p.data["region_summary"]}
    assert summary["region:copy"]["throughput"]["cpu_bytes_per_second"] == sorted(cpu_medians)[1]
    assert "throughput" not in summary["region:plain"]
    assert "median CPU bytes/s" in p.markdown()
    assert repr(copy) == "regionprof.region('copy', kind='region', bytes=4096, items=2)"


def test_nvtx_package_marks_declare_work_for_their_domains_range() -> None:
    # Rule 18's work marks are plain NVTX marks: any NVTX emitter declares work with them. The first
    # is in the region's domain (regionprof); the second, in another domain with no range open, is
    # attached to nothing; the third has a negative payload and stays a mark.
    def step() -> None:
        with regionprof.region("copy"):
            nvtx.mark(message="regionprof.work.bytes", payload=1000, domain="regionprof")
            nvtx.mark(message="regionprof.work.items", payload=5, domain="elsewhere")
            nvtx.mark(message="regionprof.work.flops", payload=-3, domain="regionprof")

    p = regionprof.profile(step, warmup_runs=0, measured_runs=2)
    assert [r["work"] for run in p.data["runs"] for r in run["regions"]] == [{"bytes": 1000}] * 2


@pytest.mark.parametrize("kwargs, error, message", [
    ({"bytes": 1.5}, TypeError, r"^bytes must be an int, not float"),
    ({"flops": -1}, ValueError, r"^flops must be at least 0, not -1"),
    ({"items": True}, TypeError, r"^items must be an int, not bool"),
    ({"bytes": 1 << 64}, ValueError, r"^bytes must be below 2\*\*64"),
])
def test_region_work_must_be_a_non_negative_int(kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        regionprof.region("x", **kwargs)


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


def test_graph_attribution_takes_capture_or_launch() -> None:
    for mode in ("capture", "launch"):
        assert len(regionprof.profile(lambda: None, measured_runs=1, graph_attribution=mode).data["runs"]) == 1
    with pytest.raises(ValueError, match="graph_attribution must be 'capture' or 'launch', not 'replay'"):
        regionprof.profile(lambda: None, graph_attribution="replay")
    with pytest.raises(ValueError, match="graph_attribution must be 'capture' or 'launch', not ''"):
        regionprof.analyze("missing.json", graph_attribution="")


def test_stop_on_noise_and_cold_runs() -> None:
    # A huge max_noise is met as soon as min_runs runs give a defined noise (6 or more).
    p = regionprof.profile(lambda: sum(range(100)), warmup_runs=0, max_noise=1e9, min_runs=7, flush_cache=True)
    assert len(p.data["runs"]) == 7
    assert p.data["config"]["measured_runs"] == 7
    stopping = p.data["stopping"]
    assert (stopping["criterion"], stopping["runs"], stopping["target"], stopping["reason"]) == \
        ("median_ci95", 7, 1e9, "noise_reached")
    # 3 runs give no defined noise: stopped at max_runs, NOISE_TARGET_NOT_MET, no noise key.
    q = regionprof.profile(lambda: None, warmup_runs=0, max_noise=0.0, min_runs=1, max_runs=3)
    assert q.data["stopping"]["reason"] == "max_runs" and "noise" not in q.data["stopping"]
    assert "NOISE_TARGET_NOT_MET" in [w["code"] for w in q.data["warnings"]]
    assert "stopping" not in regionprof.profile(lambda: None, measured_runs=2).data
    with pytest.raises(ValueError, match="min_runs, max_runs, min_time_s and max_time_s apply only with max_noise"):
        regionprof.profile(lambda: None, max_runs=5)
    with pytest.raises(ValueError, match="max_noise must be a finite number >= 0"):
        regionprof.profile(lambda: None, max_noise=-1.0)


def test_every_profile_records_the_machine() -> None:
    env = regionprof.profile(lambda: None, measured_runs=1).data["environment"]
    assert env["cpu_count"] >= 1
    assert len(env["load_average"]) == 3
    assert env["memory_total_bytes"] > 0


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


def test_nvtx_ranges_inside_a_region_are_its_ops() -> None:
    """docs/design.md, rule 20: ranges no rule matches are ops of the topmost region around them, keyed as
    the key averages key them (a torch op range by its op, the per-call ', seq = N, op_id = M' cut); a
    nested region is no op; a range between regions is the residual's."""
    def step() -> None:
        with regionprof.region("body"):
            with nvtx.annotate("aten::linear, seq = 3, op_id = 9"):
                with nvtx.annotate("aten::addmm"):
                    sum(range(2000))
            with regionprof.region("inner"):
                with nvtx.annotate("aten::relu"):
                    pass
        with nvtx.annotate("between"):
            pass

    p = regionprof.profile(step, warmup_runs=0, measured_runs=3)
    ops = {e["region_id"]: {r["key"]: r for r in e["rows"]} for e in p.data["region_ops"]}
    assert list(ops) == ["region:body", "(residual)"]
    body = ops["region:body"]
    assert set(body) == {"aten::linear", "aten::addmm", "aten::relu"}
    assert all(r["count"] == 3 and r["device_type"] == "CPU" for r in body.values())
    linear, addmm = body["aten::linear"], body["aten::addmm"]
    assert linear["self_cpu_time_total_us"] == pytest.approx(
        linear["cpu_time_total_us"] - addmm["cpu_time_total_us"], abs=1e-3)
    assert set(ops["(residual)"]) == {"between"}

    pandas = pytest.importorskip("pandas")
    df = p.to_pandas("region_ops")
    assert isinstance(df, pandas.DataFrame)
    assert list(df.columns[:3]) == ["region_id", "key", "device_type"]
    assert len(df) == 4
    assert list(df["region_id"]) == ["region:body"] * 3 + ["(residual)"]
    assert df[df["key"] == "aten::addmm"]["count"].item() == 3


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


def test_analyze_real_torch_profiler_trace_ops_per_region(tmp_path: Path) -> None:
    """docs/design.md, rule 20, on a trace torch.profiler wrote: the aten operators inside the
    record_function region are its ops, read back from the saved profile the same."""
    trace = tmp_path / "trace.json"
    _torch_profiler_trace(trace)
    p = regionprof.analyze(trace, regions=["## (.*) ##=phase", "untuned_module:(.*)=untuned_module"])
    ops = {e["region_id"]: {r["key"]: r for r in e["rows"]} for e in p.data["region_ops"]}
    assert list(ops) == ["untuned_module:body", "phase:tail", "(residual)"]
    assert ops["untuned_module:body"]["aten::linear"]["count"] == 3
    assert ops["untuned_module:body"]["aten::linear"]["device_type"] == "CPU"
    assert "aten::sum" in ops["phase:tail"]
    assert not any(key.startswith("untuned_module:") for key in ops["untuned_module:body"])
    saved = regionprof.load(p.write_json(tmp_path / "p.json"))
    assert saved.json() == p.json()
    assert saved.data["region_ops"] == p.data["region_ops"]


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
    with pytest.raises(FileNotFoundError, match="absent.json"):  # cannot be opened: an OSError
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


@pytest.mark.parametrize("call, error, message", [
    (lambda: regionprof.profile(lambda: None, warmup_runs=1.5), TypeError, r"^warmup_runs must be an int, not float"),
    (lambda: regionprof.profile(lambda: None, measured_runs=-1), ValueError, r"^measured_runs must be at least 1"),
    (lambda: regionprof.profile(lambda: None, row_limit="3"), TypeError, r"^row_limit must be an int"),
    (lambda: regionprof.profile(lambda: None, cross_thread=1), TypeError, r"^cross_thread must be a bool"),
    (lambda: regionprof.profile(lambda: None, regions="a=b"), TypeError, r"^regions must be a list"),
    (lambda: regionprof.profile(lambda: None, trace_file=3), TypeError, r"^trace_file must be a str"),
    (lambda: regionprof.profile(3), TypeError, r"^fn must be callable"),
    (lambda: regionprof.analyze("t.json", warmup_runs=-2), ValueError, r"^warmup_runs must be at least 0"),
    (lambda: regionprof.analyze(None), TypeError, r"^trace must be a str"),
    (lambda: regionprof.profile(lambda: None).markdown(runs_detail=1.0), TypeError, r"^runs_detail must be an int"),
    (lambda: regionprof.region(3), TypeError, r"^name must be a str, not int"),
    (lambda: regionprof.profile(lambda: None, max_noise="1%"), TypeError, r"^max_noise must be a number or None"),
    (lambda: regionprof.profile(lambda: None, max_noise=0.1, max_runs=2.5), TypeError, r"^max_runs must be an int"),
    (lambda: regionprof.profile(lambda: None, flush_cache=1), TypeError, r"^flush_cache must be a bool"),
])
def test_wrong_types_and_values_name_the_parameter(call, error, message) -> None:
    with pytest.raises(error, match=message) as caught:
        call()
    assert "incompatible function arguments" not in str(caught.value)  # never a binding's signature dump
    assert "\n" not in str(caught.value)


def test_no_leak_messages_at_exit(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = ("import regionprof, regionprof.torch, torch\n"
              "p = regionprof.torch.profile(torch.nn.Linear(2, 2), torch.ones(1, 2), measured_runs=1)\n"
              "q = regionprof.profile(lambda: None, measured_runs=1)\n"
              "print(len(p.data['runs']) + len(q.data['runs']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"
    assert "leak" not in done.stderr


def test_trace_file_placeholders_expand(tmp_path: Path) -> None:
    import os

    p = regionprof.profile(lambda: None, measured_runs=1, trace_file=tmp_path / "t-%p.json")
    assert p.trace_file == (tmp_path / f"t-{os.getpid()}.json").resolve() and p.trace_file.exists()
    with pytest.raises(ValueError, match="^trace_file: "):
        regionprof.profile(lambda: None, measured_runs=1, trace_file=tmp_path / "t-%q.json")


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
    # Placeholders: the path returned is the file written.
    written = p.write_json(tmp_path / "p-%p.json")
    assert written == (tmp_path / f"p-{os.getpid()}.json").resolve() and written.is_file()
    assert p.write_trace(tmp_path / "t-%p.json") == (tmp_path / f"t-{os.getpid()}.json").resolve()
    with pytest.raises(ValueError, match="p.json: not a regionprof profile"):
        _native.read_profile_text("{}", "p.json")
