"""What observing one torch op costs, per mechanism (docs/benchmarks.md, "The step API"): ``torch.add`` of
two one-element tensors, 2,000 calls a sample, the best of 5 samples, the median over 7 rounds of the
modes in turn, this thread's CPU time per call. Modes: plain; ops=True's RecordFunction callback
registered, nothing recording (torch's own cost of observing an op); the callback recording into a
regionprof.profiler; torch's profiler in its NVTX mode, nothing recording (ops=True without a compiler);
torch.profiler (CPU activity). And what memory=True costs (each call allocates its 4-byte output and
frees it: two memory events): its reporter installed, nothing recording; recording into a
regionprof.profiler; torch.profiler with profile_memory=True.

Usage: build/python-venv/bin/python bench/python/bench_op_cost.py
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Dict, List

import regionprof  # first: names itself as the NVTX tool
import torch
from regionprof import _torch_ops

CALLS = 2000


def main() -> None:
    torch.set_num_threads(1)
    a, b = torch.ones(1), torch.ones(1)

    def per_call_us() -> float:
        samples = []
        for _ in range(5):
            start = time.thread_time()
            for _ in range(CALLS):
                torch.add(a, b)
            samples.append(time.thread_time() - start)
        return min(samples) / CALLS * 1e6

    def callback_idle() -> float:
        with _torch_ops.op_ranges(True):
            return per_call_us()

    def callback_recording() -> float:
        with regionprof.profiler(device_tracing=False) as p:
            with _torch_ops.op_ranges(True):
                seconds = per_call_us()
            p.step()
        return seconds

    def nvtx_mode_idle() -> float:
        with _torch_ops._nvtx_mode():
            return per_call_us()

    def torch_profiler() -> float:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            return per_call_us()

    def memory_idle() -> float:
        with _torch_ops.memory_events(True):
            return per_call_us()

    def memory_recording() -> float:
        with regionprof.profiler(device_tracing=False) as p:
            with _torch_ops.memory_events(True):
                seconds = per_call_us()
            p.step()
        return seconds

    def torch_profiler_memory() -> float:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True):
            return per_call_us()

    modes: Dict[str, Callable[[], float]] = {"plain": per_call_us, "callback_idle": callback_idle,
                                             "callback_recording": callback_recording,
                                             "nvtx_mode_idle": nvtx_mode_idle, "torch_profiler": torch_profiler,
                                             "memory_idle": memory_idle, "memory_recording": memory_recording,
                                             "torch_profiler_memory": torch_profiler_memory}
    samples: Dict[str, List[float]] = {name: [] for name in modes}
    for _ in range(7):
        for name, run in modes.items():
            samples[name].append(run())
    base = statistics.median(samples["plain"])
    print(f"torch.add of one-element tensors, 1 thread; us per call (median of 7 rounds, best of 5 x {CALLS})")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<20}{median:>8.3f}  +{median - base:.3f}")


if __name__ == "__main__":
    main()
