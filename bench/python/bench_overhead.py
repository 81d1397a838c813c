"""Per-module-call overhead of regionprof.torch.profile's region wrappers against plain torch, against
torch's own hook dispatch (two no-op Python hooks per module: the floor of any hook-based
instrumentation) and against the reference module's way (torch.profiler with a record_function per
module), in one process with the four modes interleaved per repetition.

Budget (docs/benchmarks.md): regionprof's cost per module call <= 0.15 x the no-op hooks' cost per call.

Model: 12 blocks of 4 Linear(256, 256) (+ ReLU inside each block's forward), every module a region
(every_level: 12 blocks + 48 Linear = 60 module calls per forward), input 1 x 256, torch.no_grad().

A second model (--model relu: 100 ReLU modules on a 1 x 8 tensor) makes the module calls themselves
nearly free, so the per-call costs stand out against the work.

Usage: bench/python/run [--model linear|relu] [--reps R] [--forwards N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Callable, Dict, List

import regionprof  # first: names itself as the NVTX tool
import regionprof.torch as rtorch
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(4)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class Model(nn.Module):
    def __init__(self, blocks: int = 12, width: int = 256) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block(width) for _ in range(blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


class Relus(nn.Module):
    def __init__(self, count: int = 100) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.ReLU() for _ in range(count)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def timed(model: nn.Module, x: torch.Tensor, forwards: int) -> float:
    """CPU seconds of this thread per forward over `forwards` calls (time.thread_time: time the shared
    machine's scheduler gives other processes is not counted; one intra-op thread does all the work)."""
    start = time.thread_time()
    for _ in range(forwards):
        model(x)
    return (time.thread_time() - start) / forwards


def plain(model: nn.Module, x: torch.Tensor, forwards: int) -> float:
    return timed(model, x, forwards)


def with_noop_hooks(model: nn.Module, x: torch.Tensor, forwards: int) -> float:
    """Torch's hook dispatch alone: a forward pre-hook and a forward hook that do nothing, per module."""
    handles = []
    for name, module in model.named_modules():
        if not name or isinstance(module, nn.ModuleList):
            continue
        handles.append(module.register_forward_pre_hook(lambda m, args: None))
        handles.append(module.register_forward_hook(lambda m, args, out: None, always_call=True))
    try:
        return timed(model, x, forwards)
    finally:
        for handle in handles:
            handle.remove()


def with_regionprof(model: nn.Module, x: torch.Tensor, forwards: int) -> float:
    """The region wrappers regionprof.torch.profile installs, with the capture recording (inside a
    profile)."""
    result: List[float] = []
    instrumentation = rtorch._Instrumentation(rtorch.discover(model, every_level=True))
    try:
        regionprof.profile(lambda: result.append(timed(model, x, forwards)), warmup_runs=0, measured_runs=1,
                           device_tracing=False)
    finally:
        instrumentation.remove()
    return result[-1]  # the measured run (the first call is the harness's internal warm-up)


def with_torch_profiler(model: nn.Module, x: torch.Tensor, forwards: int) -> float:
    """The reference module's way: torch.profiler on, a record_function opened and closed per module by
    forward hooks."""
    handles = []
    for name, module in model.named_modules():
        if not name or isinstance(module, nn.ModuleList):
            continue
        label = f"untuned_module:{name}"

        def pre(m: nn.Module, args: object, label: str = label) -> None:
            m._bench_rf = torch.autograd.profiler.record_function(label)  # type: ignore[attr-defined]
            m._bench_rf.__enter__()  # type: ignore[attr-defined]

        def post(m: nn.Module, args: object, out: object) -> None:
            m._bench_rf.__exit__(None, None, None)  # type: ignore[attr-defined]

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post, always_call=True))
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            return timed(model, x, forwards)
    finally:
        for handle in handles:
            handle.remove()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=("linear", "relu"), default="linear")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--forwards", type=int, default=200)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    if options.model == "linear":
        model: nn.Module = Model().eval()
        x = torch.randn(1, 256)
        module_calls = 12 + 12 * 4
        description = "12 blocks x 4 Linear(256,256), input 1x256"
    else:
        model = Relus().eval()
        x = torch.randn(1, 8)
        module_calls = 100
        description = "100 ReLU, input 1x8"
    modes: Dict[str, Callable[[nn.Module, torch.Tensor, int], float]] = {
        "plain": plain, "regionprof": with_regionprof, "no-op hooks": with_noop_hooks,
        "torch.profiler": with_torch_profiler}
    samples: Dict[str, List[float]] = {name: [] for name in modes}
    rng = random.Random(1)
    with torch.no_grad():
        for fn in modes.values():
            fn(model, x, 20)  # warm-up of each mode
        for _ in range(options.reps):
            order = list(modes)
            rng.shuffle(order)
            for name in order:
                samples[name].append(modes[name](model, x, options.forwards))

    base = statistics.median(samples["plain"])
    rows = {}
    print(f"model: {description}, {module_calls} module calls per forward, "
          f"1 intra-op thread, thread CPU time; {options.reps} interleaved reps of {options.forwards} forwards; medians")
    print(f"{'mode':<16}{'us/forward':>12}{'x plain':>9}{'overhead %':>12}{'us/module call':>16}")
    for name, values in samples.items():
        t = statistics.median(values)
        per_call = (t - base) / module_calls * 1e6
        rows[name] = {"us_per_forward": t * 1e6, "ratio": t / base, "overhead_percent": (t / base - 1) * 100,
                      "us_per_module_call": per_call, "min_us_per_forward": min(values) * 1e6}
        print(f"{name:<16}{t * 1e6:>12.1f}{t / base:>9.3f}{(t / base - 1) * 100:>11.1f}%{per_call:>16.3f}")
    share = rows["regionprof"]["us_per_module_call"] / rows["torch.profiler"]["us_per_module_call"]
    hooks_share = rows["regionprof"]["us_per_module_call"] / rows["no-op hooks"]["us_per_module_call"]
    print(f"regionprof overhead / torch.profiler overhead: {share:.3f}")
    print(f"regionprof cost per module call / no-op hooks' cost per call: {hooks_share:.3f} (budget 0.15)")
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"model": options.model, "rows": rows, "share_of_torch_profiler": share,
                       "share_of_noop_hooks": hooks_share, "reps": options.reps,
                       "forwards": options.forwards, "torch": torch.__version__}, f, indent=2)


if __name__ == "__main__":
    main()
