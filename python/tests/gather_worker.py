"""A torchrun worker (test_gather.py, and the 8-rank measurement in docs/python.md): every rank profiles
a small step whose region `slow` sleeps longer on higher ranks, writes its own profile to
OUT/prof-<rank>.json, then joins the job with regionprof.gather (rank 0 writes OUT/job.json, .md,
.html) and records what gather returned, how long it took and the payload's size (OUT/gather-<rank>.json).

Usage: torchrun --standalone --nproc-per-node N gather_worker.py OUT [MEASURED_RUNS]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import regionprof  # first: it names itself as the NVTX tool before torch loads
import torch.distributed as dist
from regionprof.distributed import compact_payload


def main() -> None:
    out = Path(sys.argv[1])
    measured_runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    dist.init_process_group("gloo")
    rank = dist.get_rank()

    def step() -> None:
        with regionprof.region("compute"):
            sum(range(20000))
        with regionprof.region("slow"):
            time.sleep(0.001 + 0.05 * rank)

    profile = regionprof.profile(step, warmup_runs=1, measured_runs=measured_runs)
    profile.write_json(out / f"prof-{rank}.json")
    dist.barrier()
    start = time.perf_counter()
    job = regionprof.gather(profile)
    gather_s = time.perf_counter() - start
    if job is not None:
        job.write_json(out / "job.json")
        (out / "job.md").write_text(job.markdown())
        (out / "job.html").write_text(job.html())
    record = {
        "rank": rank,
        "returned": None if job is None else type(job).__name__,
        "gather_s": gather_s,
        "payload_bytes": len(compact_payload(profile, rank=rank, world_size=dist.get_world_size()).encode()),
        "profile_json_bytes": len(profile.json().encode()),
    }
    (out / f"gather-{rank}.json").write_text(json.dumps(record))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
