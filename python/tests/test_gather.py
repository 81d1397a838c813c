"""regionprof.gather over torch.distributed (gloo, CPU) under `torchrun --nproc-per-node 2`: the job
report on rank 0 only, its cross_rank equal to `regionprof merge` of the ranks' saved profiles, and the
ranks' identities from torch.distributed and torchrun's variables."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

import regionprof
from command_support import CONSOLE_SCRIPT, run
from regionprof.distributed import compact_payload

WORKER = Path(__file__).resolve().parent / "gather_worker.py"
TORCHRUN = Path(sys.executable).parent / "torchrun"


@pytest.fixture(scope="module")
def job_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gather")
    result = run([TORCHRUN, "--standalone", "--nproc-per-node", "2", WORKER, out, "3"], cwd=out, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_job_on_rank_zero_only(job_dir: Path) -> None:
    returned = [json.loads((job_dir / f"gather-{r}.json").read_text())["returned"] for r in (0, 1)]
    assert returned == ["JobProfile", None]
    job = json.loads((job_dir / "job.json").read_text())
    assert job["kind"] == "regionprof_job"
    assert job["rank_count"] == 2
    assert [r["rank"] for r in job["ranks"]] == [0, 1]
    assert [r["file"] for r in job["ranks"]] == ["rank 0", "rank 1"]
    for i, r in enumerate(job["ranks"]):
        target = r["profile"]["target"]
        assert (target["rank"], target["local_rank"], target["world_size"]) == (i, i, 2)
        assert r["host"] == target["host"] == socket.gethostname()
        assert r["pid"] == target["pid"]
    # Rank 1 sleeps 50 ms longer in `slow` in each of the 3 runs: the straggler (a loaded machine may
    # stretch either sleep by some ms, never by 25).
    assert len(job["cross_rank"]["runs"]) == 3
    for cross_run in job["cross_rank"]["runs"]:
        slow = {g["region_id"]: g for g in cross_run["regions"]}["region:slow"]
        assert slow["cpu_time_us"]["slowest_rank"] == 1
        assert slow["cpu_time_us"]["max"] - slow["cpu_time_us"]["min"] >= 25000
    assert "region:slow" in (job_dir / "job.md").read_text()
    assert (job_dir / "job.html").read_text().startswith("<!DOCTYPE html>")


def test_cross_rank_equals_merge_of_saved_profiles(job_dir: Path) -> None:
    merged = run([CONSOLE_SCRIPT, "merge", "prof-0.json", "prof-1.json", "-o", "merged.json"], cwd=job_dir)
    assert merged.returncode == 0, merged.stderr
    gathered = json.loads((job_dir / "job.json").read_text())
    saved = json.loads((job_dir / "merged.json").read_text())
    assert gathered["cross_rank"] == saved["cross_rank"]
    assert gathered["warnings"] == saved["warnings"] == []
    assert [r["profile"]["runs"] for r in gathered["ranks"]] == [r["profile"]["runs"] for r in saved["ranks"]]


def test_payload_is_the_compact_profile(job_dir: Path) -> None:
    for r in (0, 1):
        record = json.loads((job_dir / f"gather-{r}.json").read_text())
        assert 0 < record["payload_bytes"] < record["profile_json_bytes"]
    profile = regionprof.profile(lambda: None, warmup_runs=0, measured_runs=1)
    payload = compact_payload(profile, rank=3, world_size=4)
    assert "\n" not in payload and ", " not in payload
    report = json.loads(payload)
    assert report["runs"] == profile.data["runs"]
    assert (report["target"]["rank"], report["target"]["world_size"]) == (3, 4)
    # The identity last, in docs/report-schema.md's order (no LOCAL_RANK here: no local_rank).
    assert list(report["target"])[-4:] == ["rank", "world_size", "host", "pid"]


def test_gather_without_a_process_group() -> None:
    profile = regionprof.profile(lambda: None, warmup_runs=0, measured_runs=1)
    with pytest.raises(RuntimeError, match="init_process_group"):
        regionprof.gather(profile)
