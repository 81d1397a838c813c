"""Modules inside compiled code (docs/design.md, rule 22): what they cost on a torch.compile'd training step.
The model is bench_steps.py's BERT (2 layers, hidden 64, batch 4 x 32, one intra-op thread), compiled
whole (torch.compile(model)), one step = forward with labels, loss.backward(), optimizer.step(), zero_grad().

- Compile: the first step (dynamo, AOTAutograd, inductor for the forward and the backward graph), with
  inductor's caches off, plainly and as the first step of a regionprof.torch.profiler block (which turns
  inductor's provenance on and maps the kernels); alternated, torch._dynamo.reset() before each.
- Steps: once compiled, the step's CPU time (time.thread_time) plainly, in regionprof.torch.profiler with
  the modules inside the compiled code as regions (compiled_modules=True, the default) and with the
  compiled model as one region (compiled_modules=False); backward regions on in both; interleaved per
  repetition in random order, medians.

Budgets (docs/benchmarks.md): as the step API's: with backward regions <= 1.10 x plain.

Usage: bench/python/run-compiled [--reps R] [--steps N] [--compiles C]   (C = 0: the steps only)
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, Dict, List

import regionprof  # first: names itself as the NVTX tool
import regionprof.torch as rtorch
import torch
import torch._dynamo
import torch._inductor.config

from bench_steps import interleaved_medians, make_model, print_modes, seconds_per_step


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--compiles", type=int, default=3)
    options = parser.parse_args()

    torch.set_num_threads(1)
    torch._inductor.config.compile_threads = 1
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch = {"input_ids": torch.randint(0, 1000, (4, 32)), "labels": torch.randint(0, 2, (4,))}
    compiled = torch.compile(model)

    def train_step() -> None:
        loss = compiled(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    def first_step(profiled: bool) -> float:
        torch._dynamo.reset()
        start = time.perf_counter()
        if profiled:
            with rtorch.profiler(compiled, device_tracing=False) as p:
                train_step()
                p.step()
        else:
            train_step()
        return time.perf_counter() - start

    compiles: Dict[bool, List[float]] = {False: [], True: []}
    with torch._inductor.config.patch(force_disable_caches=True):
        for _ in range(options.compiles):  # 0: the steps only
            for profiled in (False, True):
                compiles[profiled].append(first_step(profiled))

    # Compiled once more inside a profile, so its graphs carry provenance for the profiled modes.
    torch._dynamo.reset()
    with rtorch.profiler(compiled, device_tracing=False) as p:
        for _ in range(3):
            train_step()
            p.step()
    assert "untuned_module:bert" in {r["id"] for r in p.profile.data["regions"]}

    def loop(step: Callable[[], None]) -> float:
        return seconds_per_step(train_step, options.steps, step)

    def regionprof_mode(compiled_modules: bool) -> Callable[[], float]:
        def run() -> float:
            with rtorch.profiler(compiled, compiled_modules=compiled_modules, device_tracing=False) as p:
                seconds = loop(p.step)
            regions = {r["id"] for r in p.profile.data["regions"]}
            assert ("untuned_module:bert" in regions) == compiled_modules, regions
            return seconds
        return run

    modes: Dict[str, Callable[[], float]] = {
        "plain": lambda: loop(lambda: None),
        "compiled_modules": regionprof_mode(True),
        "one_region": regionprof_mode(False),
    }
    median = interleaved_medians(modes, options.reps)
    base = median["plain"]
    print("BERT (2 layers, hidden 64, batch 4 x 32) training step, torch.compile(model), CPU, 1 thread")
    if options.compiles:
        compile_plain, compile_profiled = (statistics.median(compiles[k]) for k in (False, True))
        print(f"first step (compile, inductor caches off), median of {options.compiles}: plain "
              f"{compile_plain:.2f} s, in regionprof.torch.profiler {compile_profiled:.2f} s "
              f"({compile_profiled / compile_plain:.3f} x)")
    print(f"steps: median of {options.reps} reps x {options.steps} steps, interleaved")
    print_modes(median)
    if median["compiled_modules"] / base > 1.10:
        raise SystemExit(f"over budget: compiled_modules {median['compiled_modules'] / base:.3f} x > 1.10")


if __name__ == "__main__":
    main()
