"""Windows (`window_runs=`, `window_output=`) of regionprof.profile and regionprof.torch.profile: a
profile written every N runs, run indices numbered on, the last window returned; and regionprof.run, the
package's `regionprof run` with its profiles read back (`processes=`, `window_runs=`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
import torch

import regionprof


def run_indices(report: dict) -> List[int]:
    return [run["run_index"] for run in report["runs"]]


def test_profile_writes_a_window_every_n_runs_and_returns_the_last(tmp_path: Path) -> None:
    calls: List[int] = []

    def step() -> None:
        calls.append(1)
        with regionprof.region(f"call_{len(calls)}"):
            pass

    last = regionprof.profile(step, warmup_runs=1, measured_runs=25, window_runs=10,
                              window_output=tmp_path / "w" / "prof-%w.json")
    assert len(calls) == 1 + 1 + 25  # a warm-up, the internal one, 25 measured
    reports = [json.loads((tmp_path / "w" / f"prof-{w}.json").read_text()) for w in range(3)]
    assert not (tmp_path / "w" / "prof-3.json").exists()
    assert [run_indices(r) for r in reports] == [list(range(0, 10)), list(range(10, 20)), list(range(20, 25))]
    assert [r["target"]["window"] for r in reports] == [0, 1, 2]
    assert {r["target"]["window_runs"] for r in reports} == {10}
    assert [r["config"]["warmup_runs"] for r in reports] == [1, 0, 0]
    # Run r is call r + 3 (call 1 the warm-up, 2 the internal one), in whichever window it lands.
    for report in reports:
        for run in report["runs"]:
            assert [g["region_id"] for g in run["regions"]] == [f"region:call_{run['run_index'] + 3}"]
    assert last.data == reports[2]
    assert last.json() == (tmp_path / "w" / "prof-2.json").read_text()


def test_windows_write_one_trace_file_each(tmp_path: Path) -> None:
    last = regionprof.profile(lambda: None, warmup_runs=0, measured_runs=3, window_runs=2,
                              window_output=tmp_path / "p-%w.json", trace_file=tmp_path / "t-%w.json")
    assert (tmp_path / "t-0.json").is_file() and (tmp_path / "t-1.json").is_file()
    assert last.trace_file == (tmp_path / "t-1.json").resolve()


def test_windows_refuse_what_cannot_be_before_any_run(tmp_path: Path) -> None:
    calls: List[int] = []

    def step() -> None:
        calls.append(1)

    out = str(tmp_path / "w-%w.json")
    with pytest.raises(ValueError, match=r"^window_runs must be at least 1, not 0$"):
        regionprof.profile(step, window_runs=0, window_output=out)
    with pytest.raises(ValueError, match=r"window_runs cannot be combined with stopping on noise \(max_noise\)"):
        regionprof.profile(step, window_runs=5, window_output=out, max_noise=0.05)
    with pytest.raises(ValueError, match=r"window_output: .*add %w \(the window index\) to the path"):
        regionprof.profile(step, window_runs=5, window_output=tmp_path / "w.json")
    with pytest.raises(ValueError, match=r"window_runs needs window_output"):
        regionprof.profile(step, window_runs=5)
    with pytest.raises(ValueError, match=r"window_output is only used with window_runs"):
        regionprof.profile(step, window_output=out)
    with pytest.raises(TypeError, match=r"window_runs must be an int"):
        regionprof.profile(step, window_runs=2.5, window_output=out)
    assert calls == []
    assert list(tmp_path.iterdir()) == []


def test_torch_profile_windows_carry_the_target_kind(tmp_path: Path) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    last = regionprof.torch.profile(model, torch.randn(2, 8), warmup_runs=0, measured_runs=5, window_runs=2,
                                    window_output=tmp_path / "m-%w.json")
    reports = [json.loads((tmp_path / f"m-{w}.json").read_text()) for w in range(3)]
    assert [run_indices(r) for r in reports] == [[0, 1], [2, 3], [4]]
    for report in reports:
        assert report["target"]["kind"] == "torch_module"
        assert report["target"]["type"] == "torch.nn.modules.container.Sequential"
        assert [g["region_id"] for g in report["runs"][0]["regions"]] == ["untuned_module:0", "untuned_module:1"]
    assert last.data == reports[2]


APP = """
import sys
import nvtx

for step in range(int(sys.argv[1])):
    with nvtx.annotate("regionprof.profiled_run", domain="regionprof"):
        with nvtx.annotate("untuned_module:encoder"):
            sum(range(2000))
print("app done")
sys.exit(int(sys.argv[2]))
"""


def test_run_profiles_a_program_and_reads_its_profile_back(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    profile = regionprof.run([sys.executable, app, "4", "0"], warmup_runs=1)
    assert isinstance(profile, regionprof.Profile)
    assert run_indices(profile.data) == [0, 1, 2]
    assert profile.data["target"]["type"] == "process"
    assert {g["region_id"] for g in profile.data["runs"][0]["regions"]} == {"untuned_module:encoder"}
    assert "app done" in capfd.readouterr().out  # the program's output is passed on
    # The program's exit status: CalledProcessError.
    with pytest.raises(subprocess.CalledProcessError) as failed:
        regionprof.run([sys.executable, app, "2", "3"])
    assert failed.value.returncode == 3


def test_run_processes_and_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    monkeypatch.chdir(tmp_path)
    side = regionprof.run([sys.executable, app, "3", "0"], processes=3, output="a/prof-%n.json")
    assert isinstance(side, list) and len(side) == 3
    assert len({p.data["target"]["pid"] for p in side}) == 3  # each a process of its own
    assert all(run_indices(p.data) == [0, 1, 2] for p in side)
    assert all((tmp_path / "a" / f"prof-{i}.json").is_file() for i in range(3))
    # 7 runs in windows of 3: windows 0, 1, 2 written; the last (run 6) returned.
    last = regionprof.run([sys.executable, app, "7", "0"], window_runs=3, output="w/prof-%w.json")
    assert last.data["target"]["window"] == 2
    assert run_indices(last.data) == [6]
    assert run_indices(json.loads((tmp_path / "w" / "prof-1.json").read_text())) == [3, 4, 5]
    with pytest.raises(ValueError, match=r"^windows need output"):
        regionprof.run([sys.executable, app, "1", "0"], window_runs=3)
    with pytest.raises(ValueError, match=r"cannot know the program's pid \(%p\)"):
        regionprof.run([sys.executable, app, "1", "0"], output="p-%p.json")
    with pytest.raises(TypeError, match=r"argv must be a non-empty list"):
        regionprof.run("python app.py")  # type: ignore[arg-type]
    # A path the processes would share: the placeholders' own message, before anything runs.
    with pytest.raises(ValueError, match=r"2 processes would all write this one file; add %n"):
        regionprof.run([sys.executable, app, "1", "0"], processes=2, output="one.json")
    assert not (tmp_path / "one.json").exists()
    # A usage error of the command itself is its exit status 2, its message in stderr.
    with pytest.raises(subprocess.CalledProcessError) as usage:
        regionprof.run([sys.executable, app, "1", "0"], extra_args=["--frobnicate"])
    assert usage.value.returncode == 2
    assert "--frobnicate" in usage.value.stderr
