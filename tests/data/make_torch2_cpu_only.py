# Regenerates tests/data/torch2_cpu_only.json: a CPU-only torch.profiler 2.x trace (torch 2.15.0 on
# CPU, no CUDA); 2 profiled steps, each with the record_function regions "## forward ##" and
# "## backward ##". Run: python3 tests/data/make_torch2_cpu_only.py (needs `pip install torch`).
import pathlib, torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
out = pathlib.Path(__file__).with_name("torch2_cpu_only.json")
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2),
             on_trace_ready=lambda p: p.export_chrome_trace(str(out))) as prof:
    for _ in range(4):
        x = torch.randn(16, 8)
        with record_function("## forward ##"):
            loss = model(x).sum()
        with record_function("## backward ##"):
            loss.backward()
        prof.step()
