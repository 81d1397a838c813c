#!/usr/bin/env python3
"""Workloads and checks of scripts/gpu-check (run there; each subcommand prints what it measures).

Workloads (need PyTorch with CUDA; `--device cpu` runs them without a GPU, for a dry run):
  model   a small MLP whose layers are NVTX ranges `layer_<i>` inside `step` ranges (torch.cuda.nvtx),
          each also a torch.profiler record_function of the same name, so regionprof (NVTX) and
          torch.profiler (Kineto) see the same regions. --torch-profiler TRACE profiles the measured
          steps with torch.profiler and writes its Chrome trace.
  launch  a tight loop of tiny kernel launches (x.add_(1)); prints `RESULT {"ns_per_launch": ...}`.
          --torch-profiler cuda|cpu,cuda runs the timed loop under torch.profiler.
  compiled  an MLP under torch.compile(mode="reduce-overhead") (CUDA graphs) profiled with
          regionprof.torch.profile, every block a region; writes the JSON report to --output.
          --coexist: then regionprof inside a torch.profiler session and torch.profiler inside
          regionprof's; prints `COEXIST {...}` with what each one saw (one compilation for all).

Checks (standard library only; exit 1 on a failed assertion):
  check-pipeline PROFILE.json   regionprof's profile of examples/cuda_pipeline
  check-nvtx-app PROFILE.json   regionprof's profile of examples/nvtx_app
  check-graphs PROFILE.json --mode capture|launch   regionprof's profile of examples/cuda_graphs
  check-compiled PROFILE.json   the compiled model: per-module device time sums to the run's within 2 %
  check-coexist LINE...         the COEXIST lines of `compiled --coexist`
  compare A.json B.json         per-region device time of two profiles agree within --tolerance
  overhead BARE REGIONPROF KINETO  launch-overhead ratio (docs/design.md, Budgets: regionprof <= Kineto)
"""
import argparse
import json
import sys
import time


def fail(message):
    print(f"gpu_check: FAIL: {message}")
    return 1


# ---------------------------------------------------------------- workloads (torch)

def model_main(args):
    import torch  # only the workloads need torch

    device = torch.device(args.device)
    torch.manual_seed(0)
    # layer_i holds i + 1 blocks: the regions own visibly different shares of the device time.
    layers = torch.nn.ModuleList(
        torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(args.width, args.width), torch.nn.ReLU())
                              for _ in range(i + 1)])
        for i in range(args.layers)).to(device)
    x = torch.randn(args.batch, args.width, device=device)
    use_nvtx = device.type == "cuda"

    def push(name):
        if use_nvtx:
            torch.cuda.nvtx.range_push(name)

    def pop():
        if use_nvtx:
            torch.cuda.nvtx.range_pop()

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    def step():
        push("step")
        with torch.profiler.record_function("step"):
            y = x
            for i, layer in enumerate(layers):
                push(f"layer_{i}")
                with torch.profiler.record_function(f"layer_{i}"):
                    y = layer(y)
                pop()
            synchronize()
        pop()
        return y

    with torch.no_grad():
        if args.torch_profiler:
            for _ in range(args.warmup):  # outside the profiler: `regionprof analyze` has no --warmup-runs
                step()
            activities = [torch.profiler.ProfilerActivity.CPU]
            if device.type == "cuda":
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            with torch.profiler.profile(activities=activities) as profiler:
                for _ in range(args.steps):
                    step()
            profiler.export_chrome_trace(args.torch_profiler)
            print(f"model: {args.steps} steps profiled by torch.profiler -> {args.torch_profiler}")
        else:
            for _ in range(args.warmup + args.steps):  # regionprof run --warmup-runs drops the warm-up
                step()
            print(f"model: {args.warmup} + {args.steps} steps")
    return 0


def launch_main(args):
    import torch

    device = torch.device(args.device)
    x = torch.zeros(1, device=device)

    def synchronize():
        if device.type == "cuda":
            torch.cuda.synchronize()

    for _ in range(2000):  # warm-up: kernel load, allocator, queues
        x.add_(1.0)
    synchronize()

    def timed_loop():
        start = time.perf_counter_ns()
        for _ in range(args.launches):
            x.add_(1.0)
        synchronize()
        return time.perf_counter_ns() - start

    if args.torch_profiler:
        activities = [torch.profiler.ProfilerActivity.CUDA] if device.type == "cuda" else []
        if "cpu" in args.torch_profiler.split(",") or not activities:
            activities.append(torch.profiler.ProfilerActivity.CPU)
        with torch.profiler.profile(activities=activities):
            elapsed = timed_loop()
    else:
        elapsed = timed_loop()
    result = {"launches": args.launches, "ns_per_launch": elapsed / args.launches,
              "profiler": args.torch_profiler or "none"}
    print("RESULT " + json.dumps(result))
    return 0


def compiled_main(args):
    import torch
    import regionprof
    import regionprof.torch as regionprof_torch

    torch.manual_seed(0)
    blocks = [torch.nn.Sequential(torch.nn.Linear(args.width, args.width), torch.nn.ReLU()) for _ in range(4)]
    model = torch.nn.Sequential(*blocks).to("cuda").eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.randn(args.batch, args.width, device="cuda")
    # warmup_runs=0: the graphs are captured while regionprof records (the compiled model's first calls
    # warm up, then record its CUDA graphs), so every replay has a capture-time region.
    def run_profile(call=compiled, runs=args.runs):
        return regionprof_torch.profile(model, x, inference_function=call, warmup_runs=0,
                                        measured_runs=runs, graph_attribution=args.graph_attribution)

    run_profile().write_json(args.output)
    print(f"compiled: {args.runs} runs profiled -> {args.output}")
    if not args.coexist:
        return 0

    def coexist(order):
        """regionprof and torch.profiler (CUDA activity) at once; prints what each one saw."""
        kineto = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        runs = 4
        if order == "regionprof inside torch.profiler":  # torch.profiler subscribes first
            with kineto:
                result = run_profile(runs=runs)
        else:  # regionprof subscribes first; torch.profiler starts in its first call, stops after its last
            calls = [0]

            def call(*a, **k):
                calls[0] += 1
                if calls[0] == 1:
                    kineto.__enter__()
                y = compiled(*a, **k)
                if calls[0] == runs + 1:  # the internal warm-up run, then the measured ones
                    torch.cuda.synchronize()
                    kineto.__exit__(None, None, None)
                return y

            result = run_profile(call, runs)
        data = result.data
        seen = {
            "order": order,
            "torch_profiler_kernels": int(sum(e.count for e in kineto.key_averages()
                                              if str(getattr(e, "device_type", "")).endswith("CUDA"))),
            "regionprof_device_us": sum(run["timing"].get("device_time_us", 0.0) for run in data["runs"]),
            "regionprof_warnings": sorted({w["code"] for w in data.get("warnings", [])}),
        }
        print("COEXIST " + json.dumps(seen))

    coexist("regionprof inside torch.profiler")
    coexist("torch.profiler inside regionprof")
    return 0


# ---------------------------------------------------------------- checks (standard library)

def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def region_totals(profile, key):
    """region_id -> sum over runs of `key` (0 when absent)."""
    totals = {}
    for run in profile["runs"]:
        for region in run["regions"]:
            totals[region["region_id"]] = totals.get(region["region_id"], 0.0) + region.get(key, 0.0)
    return totals


def print_runs(profile):
    for run in profile["runs"]:
        timing = run["timing"]
        print(f"  run {run['run_index']}: cpu {timing['cpu_time_us']:.1f} us, device "
              f"{timing.get('device_time_us', float('nan')):.1f} us (busy {timing.get('device_busy_us', float('nan')):.1f},"
              f" span {timing.get('device_span_us', float('nan')):.1f})")
        for region in run["regions"]:
            print(f"    {region['region_id']:<22} calls {region['calls']:>2}  cpu {region['cpu_time_us']:>10.1f} us"
                  f"  device {region.get('device_time_us', float('nan')):>10.1f} us")
        residual = run["residual"]
        print(f"    {'(residual)':<22}           cpu {residual['cpu_time_us']:>10.1f} us"
              f"  device {residual.get('device_time_us', float('nan')):>10.1f} us")
    for warning in profile.get("warnings", []):
        print(f"  warning {warning['code']} ({warning['source']}): {warning['message']}")


def fraction_sums_hold(run, domain):
    key = f"{domain}_time_fraction"
    parts = [region[key] for region in run["regions"] if key in region]
    if key in run["residual"]:
        parts.append(run["residual"][key])
    return not parts or abs(sum(parts) - 1.0) < 1e-6


def load_steps(path):
    """A profile of an example's 6 `step`s with --warmup-runs 1, printed: (profile, runs, failures)."""
    profile = load(path)
    print_runs(profile)
    runs = profile["runs"]
    failures = 0
    if len(runs) != 5:
        failures += fail(f"{len(runs)} runs, expected 5 (6 steps, --warmup-runs 1)")
    return profile, runs, failures


def check_pipeline_main(args):
    """examples/cuda_pipeline: 6 steps, 1 discarded; per step upload (copy + memset), compute (2 spin
    kernels, 0.5 ms each), graph (3 kernels, one launch), late_kernel (2 ms, runs after its region)."""
    profile, runs, failures = load_steps(args.profile)
    if "CUDA" not in profile["profiler"]["activities"]:
        failures += fail("no device data: profiler.activities lacks CUDA")
    codes = {w["code"] for w in profile.get("warnings", [])}
    for bad in ("DEVICE_TRACING_UNAVAILABLE", "CUPTI_SUBSCRIBER_CONFLICT", "DROPPED_DEVICE_RECORDS",
                "UNCORRELATED_DEVICE_OPS", "CLOCK_ANOMALY", "NO_RUN_MARKERS"):
        if bad in codes:
            failures += fail(f"warning {bad}")
    expected = {"stage:upload", "stage:compute", "stage:graph", "stage:late_kernel"}
    for run in runs:
        index = run["run_index"]
        regions = {r["region_id"]: r for r in run["regions"]}
        if set(regions) != expected:
            failures += fail(f"run {index}: regions {sorted(regions)}, expected {sorted(expected)}")
            continue
        for domain in ("cpu", "device"):
            if not fraction_sums_hold(run, domain):
                failures += fail(f"run {index}: {domain} fractions do not sum to 1")
        for region_id, region in regions.items():
            if region["calls"] != 1:
                failures += fail(f"run {index}: {region_id} has {region['calls']} calls, expected 1")
            if region.get("device_time_us", 0.0) <= 0.0:
                failures += fail(f"run {index}: {region_id} owns no device time")
        # Two spin kernels of ~0.5 ms each; the late kernel ~2 ms, all of it after its region closed.
        compute = regions["stage:compute"]["device_time_us"]
        late = regions["stage:late_kernel"]
        if compute < 600.0:
            failures += fail(f"run {index}: compute owns {compute:.1f} us of device time, expected ~1000")
        if late["device_time_us"] < 1000.0:
            failures += fail(f"run {index}: late_kernel owns {late['device_time_us']:.1f} us, expected ~2000")
        if late["device_time_us"] < 5.0 * late["cpu_time_us"]:
            failures += fail(f"run {index}: late_kernel's device time {late['device_time_us']:.1f} us is not far above "
                             f"its CPU time {late['cpu_time_us']:.1f} us: the kernel after the region was not kept")
        residual_device = run["residual"].get("device_time_us", 0.0)
        total_device = run["timing"].get("device_time_us", 0.0)
        if total_device <= 0.0 or residual_device > 0.01 * total_device:
            failures += fail(f"run {index}: residual device time {residual_device:.1f} us of {total_device:.1f} us "
                             "(every op was launched inside a region)")
    kernels = {row["key"]: row for row in profile["profiler"]["key_averages"].get("device_time_total", {}).get("events", [])}
    for name, count in (("graph_node(float*, int)", 10), ("graph_tail(float*, int)", 5),
                        ("late_kernel(long long)", 5), ("spin_kernel(long long)", 10)):
        row = kernels.get(name)
        if row is None:
            failures += fail(f"key averages lack {name}")
        elif row["count"] != count:
            failures += fail(f"{name}: count {row['count']}, expected {count}")
    print("check-pipeline: " + ("ok" if failures == 0 else f"{failures} failed assertions"))
    return 1 if failures else 0


def check_nvtx_app_main(args):
    """examples/nvtx_app: 5 steps x layer_0..3, CPU only."""
    profile = load(args.profile)
    print_runs(profile)
    failures = 0
    if len(profile["runs"]) != 5:
        failures += fail(f"{len(profile['runs'])} runs, expected 5")
    for run in profile["runs"]:
        ids = sorted(r["region_id"] for r in run["regions"])
        if ids != ["layer:0", "layer:1", "layer:2", "layer:3"]:
            failures += fail(f"run {run['run_index']}: regions {ids}")
        if not fraction_sums_hold(run, "cpu"):
            failures += fail(f"run {run['run_index']}: cpu fractions do not sum to 1")
    print("check-nvtx-app: " + ("ok" if failures == 0 else f"{failures} failed assertions"))
    return 1 if failures else 0


def check_graphs_main(args):
    """examples/cuda_graphs: 6 steps, 1 discarded; the graph (layer_i: (i + 1) x 100 us, layer_2 also a
    memset; built: 50 us) captured before the steps, replayed inside `replay` next to a direct 30 us
    kernel."""
    profile, runs, failures = load_steps(args.profile)
    codes = {w["code"] for w in profile.get("warnings", [])}
    for bad in ("DEVICE_TRACING_UNAVAILABLE", "CUPTI_SUBSCRIBER_CONFLICT", "DROPPED_DEVICE_RECORDS",
                "UNCORRELATED_DEVICE_OPS", "CLOCK_ANOMALY", "GRAPH_CAPTURED_BEFORE_PROFILING"):
        if bad in codes:
            failures += fail(f"warning {bad}")
    layers = [f"stage:layer_{i}" for i in range(4)]
    for run in runs:
        index = run["run_index"]
        regions = {r["region_id"]: r for r in run["regions"]}
        device = run["timing"].get("device_time_us", 0.0)
        residual = run["residual"].get("device_time_us", 0.0)
        if device < 700.0:
            failures += fail(f"run {index}: device time {device:.1f} us, expected ~1080")
        if residual > 0.01 * device:
            failures += fail(f"run {index}: residual device time {residual:.1f} us of {device:.1f}")
        replay = regions.get("stage:replay", {}).get("device_time_us", 0.0)
        if regions.get("stage:replay", {}).get("calls") != 1:
            failures += fail(f"run {index}: stage:replay is not called once")
        if args.mode == "launch":
            if set(regions) != {"stage:replay"}:
                failures += fail(f"run {index}: regions {sorted(regions)}, expected only stage:replay (launch)")
            if replay < 0.99 * device:
                failures += fail(f"run {index}: replay owns {replay:.1f} of {device:.1f} us (launch attribution)")
            continue
        expected = set(layers) | {"stage:built", "stage:replay"}
        if set(regions) != expected:
            failures += fail(f"run {index}: regions {sorted(regions)}, expected {sorted(expected)}")
            continue
        owned = [regions[r].get("device_time_us", 0.0) for r in layers]
        if not all(a < b for a, b in zip(owned, owned[1:])):
            failures += fail(f"run {index}: layer device times {owned} are not increasing (100, 200+, 300, 400 us)")
        for i, value in enumerate(owned):
            if not 0.6 * 100.0 * (i + 1) <= value <= 1.6 * 100.0 * (i + 1) + 20.0:
                failures += fail(f"run {index}: {layers[i]} owns {value:.1f} us, expected ~{100 * (i + 1)}")
        built = regions["stage:built"].get("device_time_us", 0.0)
        if not 25.0 <= built <= 90.0:
            failures += fail(f"run {index}: stage:built owns {built:.1f} us, expected ~50")
        if not 10.0 <= replay <= 60.0:
            failures += fail(f"run {index}: stage:replay owns {replay:.1f} us, expected ~30 (its direct kernel)")
        for layer in layers:
            if regions[layer]["calls"] != 0 or regions[layer]["cpu_time_us"] != 0.0:
                failures += fail(f"run {index}: {layer} has CPU calls in a replay run")
    print("check-graphs: " + ("ok" if failures == 0 else f"{failures} failed assertions"))
    return 1 if failures else 0


def check_compiled_main(args):
    """The compiled model: from run 2 on (the first runs may still record graphs), per-module device time
    present and summing to the run's device time within --tolerance."""
    profile = load(args.profile)
    print_runs(profile)
    failures = 0
    runs = profile["runs"][2:]
    if not runs:
        failures += fail("fewer than 3 runs")
    if "CUDA" not in profile["profiler"]["activities"]:
        failures += fail("no device data")
    for run in runs:
        index = run["run_index"]
        device = run["timing"].get("device_time_us", 0.0)
        modules = [r for r in run["regions"] if r.get("device_time_us", 0.0) > 0.0]
        owned = sum(r.get("device_time_us", 0.0) for r in run["regions"])
        if len(modules) < 2:
            failures += fail(f"run {index}: {len(modules)} modules own device time (the graph collapsed into one?)")
        if device <= 0.0 or abs(device - owned) > args.tolerance * device:
            failures += fail(f"run {index}: modules own {owned:.1f} of {device:.1f} us of device time "
                             f"(tolerance {100.0 * args.tolerance:.1f} %)")
        else:
            print(f"  run {index}: modules own {owned:.1f} of {device:.1f} us ({100.0 * owned / device:.2f} %)")
    print("check-compiled: " + ("ok" if failures == 0 else f"{failures} failed assertions"))
    return 1 if failures else 0


def check_coexist_main(args):
    """Each COEXIST line: either regionprof reported the conflict (a driver or client that does not share
    CUPTI: a CPU-only profile, as documented), or both tools saw the kernels."""
    failures = 0
    shared = 0
    for line in args.lines:
        seen = json.loads(line[len("COEXIST "):] if line.startswith("COEXIST ") else line)
        print(f"  {seen['order']}: torch.profiler kernels {seen['torch_profiler_kernels']}, regionprof device "
              f"{seen['regionprof_device_us']:.1f} us, warnings {seen['regionprof_warnings']}")
        if "CUPTI_SUBSCRIBER_CONFLICT" in seen["regionprof_warnings"]:
            print("    CUPTI is not shared here: regionprof reported the conflict and profiled CPU-only (kept path)")
            if seen["torch_profiler_kernels"] <= 0:
                failures += fail(f"{seen['order']}: torch.profiler lost its kernels")
            continue
        shared += 1
        if seen["torch_profiler_kernels"] <= 0 or seen["regionprof_device_us"] <= 0.0:
            failures += fail(f"{seen['order']}: CUPTI shared, but one tool saw no kernels")
    print(f"check-coexist: {shared} of {len(args.lines)} orders shared CUPTI; " +
          ("ok" if failures == 0 else f"{failures} failed assertions"))
    return 1 if failures else 0


def compare_main(args):
    a, b = load(args.first), load(args.second)
    ta, tb = region_totals(a, "device_time_us"), region_totals(b, "device_time_us")
    print(f"  {'region':<14} {args.first:>30} {args.second:>30}  difference")
    failures = 0
    if len(a["runs"]) != len(b["runs"]):
        failures += fail(f"{len(a['runs'])} runs against {len(b['runs'])}")
    if set(ta) != set(tb) or not ta:
        failures += fail(f"regions differ: {sorted(ta)} against {sorted(tb)}")
    for region in sorted(set(ta) | set(tb)):
        x, y = ta.get(region, 0.0), tb.get(region, 0.0)
        difference = abs(x - y) / y if y else float("inf")
        print(f"  {region:<14} {x:>27.1f} us {y:>27.1f} us  {100.0 * difference:6.2f} %")
        if difference > args.tolerance:
            failures += fail(f"{region}: device time differs by {100.0 * difference:.2f} % "
                             f"(tolerance {100.0 * args.tolerance:.1f} %)")
    print("compare: " + ("ok" if failures == 0 else f"{failures} failed assertions"))
    return 1 if failures else 0


def best_ns_per_launch(path):
    """The lowest ns_per_launch of the RESULT lines in `path` (best of repeated runs)."""
    with open(path, encoding="utf-8") as f:
        values = [json.loads(line[len("RESULT "):])["ns_per_launch"] for line in f if line.startswith("RESULT ")]
    if not values:
        raise ValueError(f"no RESULT line in {path}")
    return min(values)


def overhead_main(args):
    bare, ours, kineto = (best_ns_per_launch(p) for p in (args.bare, args.regionprof, args.kineto))
    ours_extra, kineto_extra = ours - bare, kineto - bare
    print(f"  launch loop: bare {bare:.1f} ns, regionprof {ours:.1f} ns (+{ours_extra:.1f}), "
          f"torch.profiler {kineto:.1f} ns (+{kineto_extra:.1f}) per launch")
    ratio = ours_extra / kineto_extra if kineto_extra > 0 else float("inf")
    print(f"  launch-overhead ratio regionprof / torch.profiler: {ratio:.2f} (budget <= 1)")
    # 10 % and 100 ns of slack for run-to-run noise on a shared machine.
    if ours_extra > 1.10 * max(kineto_extra, 0.0) + 100.0:
        return fail(f"regionprof adds {ours_extra:.1f} ns per launch, torch.profiler {kineto_extra:.1f} ns")
    print("overhead: ok")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    model = sub.add_parser("model")
    model.add_argument("--device", default="cuda")
    model.add_argument("--warmup", type=int, default=5)
    model.add_argument("--steps", type=int, default=20)
    model.add_argument("--layers", type=int, default=4)
    model.add_argument("--width", type=int, default=4096)
    model.add_argument("--batch", type=int, default=512)
    model.add_argument("--torch-profiler", metavar="TRACE")
    model.set_defaults(main=model_main)
    launch = sub.add_parser("launch")
    launch.add_argument("--device", default="cuda")
    launch.add_argument("--launches", type=int, default=20000)
    launch.add_argument("--torch-profiler", metavar="ACTIVITIES", help="cuda or cpu,cuda")
    launch.set_defaults(main=launch_main)
    compiled = sub.add_parser("compiled")
    compiled.add_argument("--output", default="compiled.json")
    compiled.add_argument("--runs", type=int, default=12)
    compiled.add_argument("--width", type=int, default=2048)
    compiled.add_argument("--batch", type=int, default=256)
    compiled.add_argument("--graph-attribution", default="capture", choices=("capture", "launch"))
    compiled.add_argument("--coexist", action="store_true",
                          help="then profile with torch.profiler at once, in both orders (COEXIST lines)")
    compiled.set_defaults(main=compiled_main)
    graphs = sub.add_parser("check-graphs")
    graphs.add_argument("profile")
    graphs.add_argument("--mode", choices=("capture", "launch"), required=True)
    graphs.set_defaults(main=check_graphs_main)
    check_compiled = sub.add_parser("check-compiled")
    check_compiled.add_argument("profile")
    check_compiled.add_argument("--tolerance", type=float, default=0.02)
    check_compiled.set_defaults(main=check_compiled_main)
    coexist = sub.add_parser("check-coexist")
    coexist.add_argument("lines", nargs="+")
    coexist.set_defaults(main=check_coexist_main)
    pipeline = sub.add_parser("check-pipeline")
    pipeline.add_argument("profile")
    pipeline.set_defaults(main=check_pipeline_main)
    nvtx_app = sub.add_parser("check-nvtx-app")
    nvtx_app.add_argument("profile")
    nvtx_app.set_defaults(main=check_nvtx_app_main)
    compare = sub.add_parser("compare")
    compare.add_argument("first")
    compare.add_argument("second")
    compare.add_argument("--tolerance", type=float, default=0.02)
    compare.set_defaults(main=compare_main)
    overhead = sub.add_parser("overhead")
    overhead.add_argument("bare")
    overhead.add_argument("regionprof")
    overhead.add_argument("kineto")
    overhead.set_defaults(main=overhead_main)
    args = parser.parse_args()
    return args.main(args)


if __name__ == "__main__":
    sys.exit(main())
