"""regionprof.load (saved JSON and job reports), the HTML and notebook views, Profile.to_pandas."""

from __future__ import annotations

import builtins
import json
import re
from pathlib import Path
from typing import Any

import pytest

import regionprof


def step() -> None:
    with regionprof.region("parse"):
        sum(range(3000))
    with regionprof.region("decode"):
        with regionprof.region("inner"):
            sum(range(1000))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    p = regionprof.profile(step, warmup_runs=0, measured_runs=3)
    path = p.write_json(tmp_path_factory.mktemp("load") / "p.json")
    return p, path


def test_load_gives_the_same_data_and_renders_again(saved: tuple) -> None:
    p, path = saved
    q = regionprof.load(path)
    assert q.data == json.loads(path.read_text())
    assert q.data["runs"] == p.data["runs"]
    md = q.markdown()
    assert "region:parse" in md and "## Attribution per run" in md
    assert q.markdown(runs_detail=0).count("### Run") == 0
    assert q.markdown(runs_detail=2).count("### Run") == 2
    page = q.html()
    assert page.startswith("<!DOCTYPE html>") and "region:parse" in page
    assert q._repr_html_().startswith('<div class="regionprof" id="regionprof-') and "region:parse" in q._repr_html_()
    assert p._repr_html_().startswith('<div class="regionprof" id="regionprof-')
    assert q.trace_file is None


def test_markdown_names_python_parameters_not_cli_flags(saved: tuple) -> None:
    p, _ = saved
    many = regionprof.profile(step, warmup_runs=0, measured_runs=6)
    md = many.markdown()
    assert "--runs-detail" not in md and "markdown(runs_detail=N)" in md


def test_file_errors_are_oserrors_naming_the_path(saved: tuple, tmp_path: Path) -> None:
    p, _ = saved
    job = regionprof.distributed.merge_texts([p.json()], ["r0.json"])
    missing = tmp_path / "no_such_dir" / "out.json"
    for write in (p.write_json, p.write_trace, job.write_json, job.write_trace):
        with pytest.raises(FileNotFoundError,
                           match=re.escape(f"'{missing}': directory '{missing.parent}' does not exist")):
            write(missing)
        with pytest.raises(IsADirectoryError, match=re.escape(f"'{tmp_path}': it is a directory")):
            write(tmp_path)
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        regionprof.analyze(missing)
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        regionprof.analyze(tmp_path)
    not_a_trace = tmp_path / "not_a_trace.json"
    not_a_trace.write_text("not json")
    with pytest.raises(regionprof.TraceError, match="not_a_trace.json"):  # opened, but not a trace: ValueError
        regionprof.analyze(not_a_trace)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        regionprof.load(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "runs": 3}')
    with pytest.raises(ValueError, match="bad.json"):
        regionprof.load(bad)
    with pytest.raises(TypeError, match="path must be"):
        regionprof.load(3)  # type: ignore[arg-type]


def test_load_a_job_report(saved: tuple, tmp_path: Path) -> None:
    p, _ = saved
    job = {"kind": "regionprof_job", "schema_version": 1, "rank_count": 2,
           "ranks": [{"rank": r, "host": "", "file": f"p{r}.json", "profile": p.data} for r in (0, 1)]}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    q = regionprof.load(path)
    assert q.data["kind"] == "regionprof_job"
    assert "## Stragglers" in q.markdown()
    assert "Stragglers" in q.html()
    assert q._repr_html_().startswith('<div class="regionprof"><pre># regionprof job report')
    assert isinstance(q, regionprof.JobProfile) and isinstance(q, regionprof.Profile)
    # The job's trace is drawn from the rank profiles (one process per rank), so a loaded job has one.
    trace = json.loads(q.write_trace(tmp_path / "job.trace.json").read_text())
    assert {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"} == {0, 1}
    pandas = pytest.importorskip("pandas")
    df = q.to_pandas("regions")
    assert list(df.columns[:3]) == ["rank", "run_index", "region_id"]
    assert len(df) == 2 * len(p.to_pandas("regions"))
    assert isinstance(df, pandas.DataFrame)


def test_a_merged_job_reads_back_byte_for_byte(saved: tuple, tmp_path: Path) -> None:
    """What regionprof.gather and `regionprof merge` write, loaded: the same job, written the same."""
    p, _ = saved
    job = regionprof.distributed.merge_texts([p.json(), p.json()], ["r0.json", "r1.json"])
    path = job.write_json(tmp_path / "job.json")
    q = regionprof.load(path)
    assert type(q) is regionprof.JobProfile
    assert q.json() == path.read_text()
    assert q.markdown() == job.markdown()
    # Neither profile names its rank: each is its place, with no warning, read back the same.
    assert [(r["rank"], r["file"]) for r in q.data["ranks"]] == [(0, "r0.json"), (1, "r1.json")]
    assert q.data["warnings"] == []


def test_a_job_with_a_bad_rank_names_the_key(saved: tuple, tmp_path: Path) -> None:
    p, _ = saved
    job = json.loads(regionprof.distributed.merge_texts([p.json()], ["r0.json"]).json())
    del job["ranks"][0]["profile"]["runs"]
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    with pytest.raises(ValueError, match=r"job\.json: ranks\[0\]\.profile\.runs: required key missing"):
        regionprof.load(path)


def test_to_pandas_tables(saved: tuple) -> None:
    pytest.importorskip("pandas")
    p, path = saved
    q = regionprof.load(path)
    regions = q.to_pandas()
    assert len(regions) == 3 * 2  # 3 runs x (parse, decode); inner is nested
    assert {"run_index", "region_id", "calls", "cpu_time_us", "cpu_time_fraction"} <= set(regions.columns)
    assert sorted(set(regions["region_id"])) == ["region:decode", "region:parse"]
    assert list(regions["run_index"]) == [0, 0, 1, 1, 2, 2]
    first = p.data["runs"][0]["regions"][0]
    assert regions.iloc[0]["cpu_time_us"] == first["cpu_time_us"]
    summary = q.to_pandas("summary")
    assert len(summary) == 4 and "cpu_time_us_median" in summary.columns
    runs = q.to_pandas("runs")
    assert list(runs["run_index"]) == [0, 1, 2] and "cpu_time_us" in runs.columns
    assert "residual_cpu_time_us" in runs.columns
    tree = q.to_pandas("tree")
    assert "region:decode > region:inner" in set(tree["path"])
    keys = q.to_pandas("key_averages")
    assert "regionprof.profiled_run" in set(keys["key"])
    assert q.to_pandas("region_ops").empty  # no op inside the regions (test_api.py has some)
    assert [e["region_id"] for e in q.data["region_ops"]] == ["region:parse", "region:decode", "(residual)"]
    with pytest.raises(ValueError, match="table must be one of"):
        q.to_pandas("nope")


def test_to_pandas_summary_ends_with_the_residual_and_run_total_rows_of_the_markdown(saved: tuple) -> None:
    pytest.importorskip("pandas")
    p, _ = saved
    summary = p.to_pandas("summary").set_index("region_id")
    assert list(summary.index) == ["region:parse", "region:decode", "(residual)", "(run total)"]
    assert list(summary.loc[["(residual)", "(run total)"], "runs_present"]) == [3, 3]
    # By hand from the runs: the median, min, max and mean of three values, and the MAD about the median.
    for row, values in (("(residual)", [r["residual"]["cpu_time_us"] for r in p.data["runs"]]),
                        ("(run total)", [r["timing"]["cpu_time_us"] for r in p.data["runs"]])):
        low, middle, high = sorted(values)
        assert summary.loc[row, "cpu_time_us_median"] == pytest.approx(middle, abs=1e-9)
        assert summary.loc[row, "cpu_time_us_min"] == pytest.approx(low, abs=1e-9)
        assert summary.loc[row, "cpu_time_us_max"] == pytest.approx(high, abs=1e-9)
        assert summary.loc[row, "cpu_time_us_mean"] == pytest.approx((low + middle + high) / 3, abs=1e-9)
        assert summary.loc[row, "cpu_time_us_mad"] == pytest.approx(min(middle - low, high - middle), abs=1e-9)
        markdown_row = next(line for line in p.markdown().splitlines() if line.startswith(f"| {row} "))
        assert f" {middle:.3f} |" in markdown_row
    assert "device_time_us_median" not in summary.columns  # CPU only: no device column


# docs/design.md, rule 21: a saved profile with memory figures (as tests/support/report_fixtures.hpp's
# memory_result, bytes and counts by hand), read back: regions + residual = run for each sum.
_MEMORY_PROFILE = {
    "schema_version": 1,
    "runs": [
        {"run_index": 0, "timing": {"wall_time_us": 1500.0, "cpu_time_us": 1234.567},
         "regions": [
             {"region_id": "aot_module:encoder", "calls": 2, "cpu_time_us": 600.0,
              "memory": {"cpu": {"allocated_bytes": 4096, "freed_bytes": 1024, "allocations": 2, "frees": 1,
                                 "peak_allocated_bytes": 8192},
                         "cuda:0": {"allocated_bytes": 1048576, "freed_bytes": 0, "allocations": 1, "frees": 0,
                                    "peak_allocated_bytes": 3145728}}},
             {"region_id": "untuned_module:head", "calls": 1, "cpu_time_us": 34.567,
              "memory": {"cuda:0": {"allocated_bytes": 512, "freed_bytes": 512, "allocations": 1, "frees": 1}}}],
         "residual": {"cpu_time_us": 600.0,
                      "memory": {"cpu": {"allocated_bytes": 100, "freed_bytes": 0, "allocations": 1, "frees": 0}}},
         "memory": {"cpu": {"allocated_bytes": 4196, "freed_bytes": 1024, "allocations": 3, "frees": 1,
                            "peak_allocated_bytes": 9000},
                    "cuda:0": {"allocated_bytes": 1049088, "freed_bytes": 512, "allocations": 2, "frees": 1,
                               "peak_allocated_bytes": 3145728}}},
        {"run_index": 1, "timing": {"wall_time_us": 1.0, "cpu_time_us": 0.0},
         "regions": [
             {"region_id": "aot_module:encoder", "calls": 1, "cpu_time_us": 0.0,
              "memory": {"cpu": {"allocated_bytes": 2048, "freed_bytes": 2048, "allocations": 1, "frees": 1,
                                 "peak_allocated_bytes": 6144}}}],
         "residual": {"cpu_time_us": 0.0},
         "memory": {"cpu": {"allocated_bytes": 2048, "freed_bytes": 2048, "allocations": 1, "frees": 1,
                            "peak_allocated_bytes": 6144}}}]}

_MEMORY_ROWS = [  # run, region, device, allocated, freed, allocations, frees, peak
    (0, "aot_module:encoder", "cpu", 4096, 1024, 2, 1, 8192),
    (0, "aot_module:encoder", "cuda:0", 1048576, 0, 1, 0, 3145728),
    (0, "untuned_module:head", "cuda:0", 512, 512, 1, 1, None),
    (0, "(residual)", "cpu", 100, 0, 1, 0, None),
    (0, "(run total)", "cpu", 4196, 1024, 3, 1, 9000),
    (0, "(run total)", "cuda:0", 1049088, 512, 2, 1, 3145728),
    (1, "aot_module:encoder", "cpu", 2048, 2048, 1, 1, 6144),
    (1, "(run total)", "cpu", 2048, 2048, 1, 1, 6144)]


def _rows(frame: Any) -> list:
    """The frame's rows as tuples, pandas' missing value as None."""
    import pandas
    return [tuple(None if value is pandas.NA else value for value in row) for row in frame.itertuples(index=False)]


def test_to_pandas_memory_one_row_per_run_owner_and_device(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(_MEMORY_PROFILE))
    q = regionprof.load(path)
    # The figures read back and written again as the file had them.
    assert [run["memory"] for run in q.data["runs"]] == [run["memory"] for run in _MEMORY_PROFILE["runs"]]
    assert q.data["runs"][0]["regions"][1]["memory"] == _MEMORY_PROFILE["runs"][0]["regions"][1]["memory"]
    assert "## Memory" in q.markdown()
    memory = q.to_pandas("memory")
    assert list(memory.columns) == ["run_index", "region_id", "device", "allocated_bytes", "freed_bytes",
                                    "allocations", "frees", "peak_allocated_bytes"]
    assert _rows(memory) == _MEMORY_ROWS
    assert str(memory["allocated_bytes"].dtype) == "int64" and str(memory["peak_allocated_bytes"].dtype) == "Int64"
    # Regions + residual = run, per run, device and sum.
    for sum_column in ("allocated_bytes", "freed_bytes", "allocations", "frees"):
        owners = memory[memory["region_id"] != "(run total)"].groupby(["run_index", "device"])[sum_column].sum()
        totals = memory[memory["region_id"] == "(run total)"].set_index(["run_index", "device"])[sum_column]
        assert owners.sort_index().tolist() == totals.sort_index().tolist()
    # A job of two ranks: the same rows per rank, "rank" first.
    job = regionprof.distributed.merge_texts([q.json(), q.json()], ["r0.json", "r1.json"])
    rows = job.to_pandas("memory")
    assert list(rows.columns[:2]) == ["rank", "run_index"]
    assert _rows(rows) == [(rank, *row) for rank in (0, 1) for row in _MEMORY_ROWS]
    assert isinstance(rows, pandas.DataFrame)


def test_to_pandas_memory_timeline_one_row_per_sample(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    profile = dict(_MEMORY_PROFILE, memory_timelines=[
        {"run_index": 0, "devices": {"cpu": [[0.0, 4500], [1234.567, 9000]], "cuda:0": [[0.0, 3145728]]},
         "spans": [{"region_id": "aot_module:encoder", "start_us": 0.0, "end_us": 617.283}], "spans_left_out": 0}])
    path = tmp_path / "timeline.json"
    path.write_text(json.dumps(profile))
    q = regionprof.load(path)
    assert q.data["memory_timelines"] == profile["memory_timelines"]  # read back and written again
    assert "Memory over time" in q.html()
    # The cpu peak (1234.567 us) falls after the encoder's span (to 617.283 us); cuda:0's at its start.
    assert "- run 0, cpu: peak 8.79 KiB at 1234.567 us, in no region\n" in q.markdown()
    assert "- run 0, cuda:0: peak 3.00 MiB at 0.000 us, in `aot_module:encoder`\n" in q.markdown()
    timeline = q.to_pandas("memory_timeline")
    assert list(timeline.columns) == ["run_index", "device", "offset_us", "total_bytes"]
    assert _rows(timeline) == [(0, "cpu", 0.0, 4500), (0, "cpu", 1234.567, 9000), (0, "cuda:0", 0.0, 3145728)]
    job = regionprof.distributed.merge_texts([q.json(), q.json()], ["r0.json", "r1.json"])
    assert list(job.to_pandas("memory_timeline").columns[:2]) == ["rank", "run_index"]
    assert len(job.to_pandas("memory_timeline")) == 6
    (tmp_path / "plain.json").write_text(json.dumps(_MEMORY_PROFILE))
    none = regionprof.load(tmp_path / "plain.json").to_pandas("memory_timeline")
    assert none.empty and list(none.columns) == ["run_index", "device", "offset_us", "total_bytes"]
    assert isinstance(none, pandas.DataFrame)


def test_to_pandas_memory_is_empty_without_memory_events(saved: tuple) -> None:
    pytest.importorskip("pandas")
    p, path = saved
    for profile in (p, regionprof.load(path)):
        memory = profile.to_pandas("memory")
        assert memory.empty
        assert list(memory.columns) == ["run_index", "region_id", "device", "allocated_bytes", "freed_bytes",
                                        "allocations", "frees", "peak_allocated_bytes"]
    assert '"memory":' not in path.read_text()


def test_to_pandas_without_pandas_says_what_to_install(saved: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    p, _ = saved
    real_import = builtins.__import__

    def no_pandas(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas"):
        p.to_pandas()
