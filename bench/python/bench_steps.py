"""The step API's cost on a training step: a small transformers BERT (2 layers, hidden 64) built from a
config (random weights, no download), one step = forward with labels, loss.backward(), optimizer.step(), zero_grad(). Modes, in one
process and interleaved per repetition (random order): plain; regionprof.torch.profiler with module
regions only (backward=False); with backward regions (the default); with backward regions and torch's
op ranges (ops=True); ops=True's RecordFunction callback registered while nothing records; an empty
RecordFunction callback with ops=True's scopes, compiled here against this torch (torch's own cost of
observing every op: the floor under any RecordFunction observer, ops=True's included); with backward regions and
torch's allocations and frees as memory events (memory=True, docs/design.md rule 21);
torch.profiler.profile (CPU activity, prof.step() per step) on the same loop, and with profile_memory=True.
Each mode's figure is the median over repetitions of the CPU time of this thread per step
(time.thread_time: the scheduler's time for other processes is not counted; one intra-op thread).

Budgets (docs/benchmarks.md): module regions <= 1.05 x plain; with backward regions <= 1.10 x plain;
ops=True adds at most a third of what torch.profiler adds.

Usage: bench/python/run-steps [--reps R] [--steps N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Callable, Dict, List

import ctypes
import tempfile
from pathlib import Path

import regionprof  # first: names itself as the NVTX tool
import regionprof.torch as rtorch
import torch

#: An empty global RecordFunction callback with ops=True's scopes (torch/op_ranges.hpp): what observing
#: every op costs in torch before an observer records anything.
_EMPTY_CALLBACK = r"""
#include <ATen/record_function.h>
#include <cstdint>
extern "C" __attribute__((visibility("default"))) std::uint64_t add_empty_callback() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> { return nullptr; },
          [](const at::RecordFunction&, at::ObserverContext*) {})
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
}
extern "C" __attribute__((visibility("default"))) void remove_empty_callback(std::uint64_t handle) {
  at::removeCallback(handle);
}
"""


def empty_callback_library(directory: Path) -> ctypes.CDLL:
    """_EMPTY_CALLBACK compiled as ops=True's callback is (regionprof._torch_ops), into `directory`."""
    from regionprof import _torch_ops

    compiler = _torch_ops._compiler()
    if compiler is None:
        raise SystemExit("bench_steps: the empty-callback mode needs a C++ compiler (set CXX)")
    source = directory / "empty_callback.cpp"
    source.write_text(_EMPTY_CALLBACK)
    target = directory / "empty_callback.so"
    _torch_ops._build(target, compiler, Path(torch.__file__).resolve().parent, source)
    library = ctypes.CDLL(str(target))
    library.add_empty_callback.restype = ctypes.c_uint64
    library.remove_empty_callback.argtypes = [ctypes.c_uint64]
    return library


def make_model() -> torch.nn.Module:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64, num_labels=2)
    torch.manual_seed(0)
    return BertForSequenceClassification(config).train()


def seconds_per_step(train_step: Callable[[], None], steps: int, after_each: Callable[[], None]) -> float:
    """This thread's CPU time per step over ``steps`` steps, ``after_each`` (a profiler's step()) after each."""
    start = time.thread_time()
    for _ in range(steps):
        train_step()
        after_each()
    return (time.thread_time() - start) / steps


def interleaved_medians(modes: Dict[str, Callable[[], float]], reps: int) -> Dict[str, float]:
    """Each mode's median seconds per step over ``reps`` repetitions, the modes run in a random order in
    each repetition, after one warm-up run of each (allocator, lazy init, first touch)."""
    for run in modes.values():
        run()
    samples: Dict[str, List[float]] = {name: [] for name in modes}
    rng = random.Random(0)
    for _ in range(reps):
        order = list(modes)
        rng.shuffle(order)
        for name in order:
            samples[name].append(modes[name]())
    return {name: statistics.median(values) for name, values in samples.items()}


def print_modes(median: Dict[str, float]) -> None:
    """The table of modes: us per step, x plain, us added to plain."""
    base = median["plain"]
    print(f"{'mode':<22}{'us/step':>12}{'x plain':>10}{'added us':>12}")
    for name, seconds in median.items():
        print(f"{name:<22}{seconds * 1e6:>12.1f}{seconds / base:>10.3f}{(seconds - base) * 1e6:>12.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()

    torch.set_num_threads(1)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch = {"input_ids": torch.randint(0, 1000, (4, 32)), "labels": torch.randint(0, 2, (4,))}

    def train_step() -> None:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    def loop(step: Callable[[], None]) -> float:
        return seconds_per_step(train_step, options.steps, step)

    def plain() -> float:
        return loop(lambda: None)

    memory_events_per_step: List[float] = []

    def regionprof_mode(backward: bool, ops: bool = False, memory: bool = False) -> Callable[[], float]:
        def run() -> float:
            with rtorch.profiler(model, backward=backward, ops=ops, memory=memory, device_tracing=False) as p:
                seconds = loop(p.step)
            assert len(p.profile.data["runs"]) == options.steps
            if memory:
                memory_events_per_step.append(len(p.profile._native.memory_events()) / options.steps)
            return seconds
        return run

    def op_callback_only() -> float:
        from regionprof import _torch_ops

        with _torch_ops.op_ranges(True):
            return loop(lambda: None)

    empty = empty_callback_library(Path(tempfile.mkdtemp(prefix="regionprof-bench-")))

    def empty_callback() -> float:
        handle = empty.add_empty_callback()
        try:
            return loop(lambda: None)
        finally:
            empty.remove_empty_callback(handle)

    def torch_profiler(profile_memory: bool = False) -> float:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    profile_memory=profile_memory) as prof:
            seconds = loop(prof.step)
        return seconds

    modes: Dict[str, Callable[[], float]] = {
        "plain": plain,
        "regionprof_modules": regionprof_mode(False),
        "regionprof_backward": regionprof_mode(True),
        "regionprof_ops": regionprof_mode(True, ops=True),
        "op_callback_only": op_callback_only,
        "empty_callback": empty_callback,
        "regionprof_memory": regionprof_mode(True, memory=True),
        "torch_profiler": torch_profiler,
        "torch_profiler_memory": lambda: torch_profiler(profile_memory=True),
    }
    median = interleaved_medians(modes, options.reps)
    base = median["plain"]
    print(f"BERT (2 layers, hidden 64, batch 4 x 32) training step, CPU, 1 thread; median of {options.reps} "
          f"reps x {options.steps} steps, interleaved")
    print_modes(median)
    events = statistics.median(memory_events_per_step)
    added_memory = median["regionprof_memory"] - median["regionprof_backward"]
    added_torch_memory = median["torch_profiler_memory"] - base
    print(f"memory=True: {events:.0f} memory events per step, {added_memory * 1e6:.0f} us a step over backward "
          f"regions alone; with them {(median['regionprof_memory'] - base) / added_torch_memory:.2f} of "
          f"torch.profiler(profile_memory=True)'s addition (whose memory adds "
          f"{(median['torch_profiler_memory'] - median['torch_profiler']) * 1e6:.0f} us to torch.profiler)")
    result = {"model": "bert-2x64", "reps": options.reps, "steps": options.steps,
              "us_per_step": {name: median[name] * 1e6 for name in modes},
              "x_plain": {name: median[name] / base for name in modes},
              "memory_events_per_step": events}
    if options.json:
        with open(options.json, "w") as out:
            json.dump(result, out, indent=2)
    budgets = {"regionprof_modules": 1.05, "regionprof_backward": 1.10}
    failed = [f"{name} {median[name] / base:.3f} x > {limit}" for name, limit in budgets.items()
              if median[name] / base > limit]
    added_ops, added_torch = median["regionprof_ops"] - base, median["torch_profiler"] - base
    added_floor = median["empty_callback"] - base
    share = {name: (median[name] - base) / added_torch for name in modes}
    print(f"of torch.profiler's addition: ops=True {share['regionprof_ops']:.2f}, its callback idle "
          f"{share['op_callback_only']:.2f}, an empty RecordFunction callback (torch's floor) "
          f"{share['empty_callback']:.2f}, backward regions alone {share['regionprof_backward']:.2f}")
    if added_ops > added_torch / 3:
        failed.append(f"ops=True adds {added_ops * 1e6:.0f} us, more than a third of torch.profiler's "
                      f"{added_torch * 1e6:.0f} us (torch's own floor, an empty RecordFunction callback: "
                      f"{added_floor * 1e6:.0f} us)")
    if failed:
        raise SystemExit("over budget: " + "; ".join(failed))


if __name__ == "__main__":
    main()
