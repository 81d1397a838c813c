"""regionprof.gather: every rank's profile joined into one job report over torch.distributed.

The join is the core's ``merge_ranks``, the one ``regionprof merge`` runs on saved profiles, so a
gathered job's ``cross_rank`` is what ``regionprof merge prof-0.json prof-1.json ...`` makes of the same
ranks' profiles; no shared filesystem is needed. Each rank sends its compact profile (the JSON report
without whitespace: runs, regions, key averages, warnings; never the trace) as UTF-8 bytes in a tensor:
one ``all_gather`` of the sizes, then one ``gather`` of the payloads padded to the largest.

```
import regionprof, torch.distributed as dist
dist.init_process_group("gloo")                     # torchrun --nproc-per-node 2 train.py
job = regionprof.gather(regionprof.profile(step))   # a JobProfile on rank 0, None on the others
if job is not None:
    print(job.markdown())                           # stragglers first
    job.write_json("job.json")
```
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any, Dict, List, Optional

from regionprof import _native
from regionprof._api import JobProfile

#: The launchers' variables for the local rank (torchrun's first), as the core reads them.
_LOCAL_RANK_VARIABLES = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")


def _profile_text(profile: Any) -> str:
    """The profile's JSON report as text: ``profile.json()`` (regionprof.Profile), else ``profile.data``."""
    text = getattr(profile, "json", None)
    if callable(text):
        return text()
    data = getattr(profile, "data", None)
    if isinstance(data, dict):
        return json.dumps(data)
    raise TypeError(f"regionprof.gather: expected a regionprof profile, got {type(profile).__name__}")


def compact_payload(profile: Any, *, rank: int, world_size: int) -> str:
    """What one rank sends: its JSON report without whitespace, ``target`` naming the rank (from
    torch.distributed), its world size, local rank (the launcher's variable) and host."""
    report = json.loads(_profile_text(profile))
    target = report.setdefault("target", {})
    identity: Dict[str, Any] = {"rank": rank}
    local_rank = next((os.environ[v] for v in _LOCAL_RANK_VARIABLES if os.environ.get(v, "").isdigit()), None)
    if local_rank is not None:
        identity["local_rank"] = int(local_rank)
    elif "local_rank" in target:
        identity["local_rank"] = target["local_rank"]
    identity["world_size"] = world_size
    identity["host"] = target.get("host", socket.gethostname())
    identity["pid"] = target.get("pid", os.getpid())
    for key in identity:  # the process identity last, in docs/report-schema.md's order
        target.pop(key, None)
    target.update(identity)
    return json.dumps(report, separators=(",", ":"))


def merge_texts(texts: List[str], names: List[str]) -> JobProfile:
    """Joins rank profiles given as JSON texts (``names[i]`` stands for ``texts[i]``'s file)."""
    return JobProfile(_native.merge_profiles(texts, names))


def _text_of(buffer: Any, length: int) -> str:
    """The first ``length`` bytes of a uint8 tensor as UTF-8 text (one copy, no numpy)."""
    import ctypes

    host = buffer.cpu().contiguous()
    return ctypes.string_at(host.data_ptr(), length).decode("utf-8")


def gather(profile: Any, *, group: Any = None, dst: int = 0) -> Optional[JobProfile]:
    """Collective over ``torch.distributed``: joins every rank's profile into the job report on rank
    ``dst`` (a global rank, as in ``torch.distributed.gather``) and returns it there; returns
    ``None`` on the other ranks. Every rank of ``group`` (default: the world) must call it.

    Needs an initialised process group (any backend; gloo on CPU). Raises RuntimeError without one,
    ImportError without torch.
    """
    try:
        import torch.distributed as dist
    except ImportError as error:
        raise ImportError(
            "regionprof.gather needs PyTorch (torch.distributed): pip install 'regionprof[torch]'"
        ) from error
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(
            "regionprof.gather needs an initialised torch.distributed process group "
            "(torch.distributed.init_process_group)"
        )
    import torch

    rank = dist.get_rank()
    world_size = dist.get_world_size(group)
    payload = compact_payload(profile, rank=rank, world_size=world_size).encode("utf-8")
    # Tensors, not gather_object: no pickle, no numpy. NCCL moves only CUDA tensors.
    device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend(group) == "nccl" else torch.device("cpu")
    sizes = [torch.zeros(1, dtype=torch.int64, device=device) for _ in range(world_size)]
    dist.all_gather(sizes, torch.tensor([len(payload)], dtype=torch.int64, device=device), group=group)
    lengths = [int(size.item()) for size in sizes]
    padded = torch.zeros(max(lengths), dtype=torch.uint8, device=device)
    if payload:
        padded[: len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
    received = [torch.empty_like(padded) for _ in range(world_size)] if rank == dst else None
    dist.gather(padded, received, dst=dst, group=group)
    if received is None:
        return None
    texts = [_text_of(buffer, length) for buffer, length in zip(received, lengths)]
    # received[i] is the group's rank i; messages name its global rank.
    names = [f"rank {i if group is None else dist.get_global_rank(group, i)}" for i in range(world_size)]
    return merge_texts(texts, names)
