# Regenerates tests/data/import/torch2_memory.json: a real torch.profiler 2.x trace with memory events
# (torch 2.15.0 on CPU, profile_memory=True). Under no_grad, torch.nn.Linear(256, 256) on a 32 x 256
# float32 input (made before profiling) inside record_function "linear": aten::addmm allocates the
# 32 x 256 float32 output, 32,768 bytes on the CPU; `del` frees it; then an allocation of 2^50 bytes
# fails (an [OutOfMemory] event). Run: python3 tests/data/make_torch2_memory.py (needs `pip install torch`).
import pathlib, torch
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
model = torch.nn.Linear(256, 256)
x = torch.randn(32, 256)
out = pathlib.Path(__file__).parent / "import" / "torch2_memory.json"
with torch.no_grad():
    model(x)  # warm-up: lazy initialisation outside the profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with record_function("linear"):
            y = model(x)
        del y
        try:
            torch.empty(1 << 50, dtype=torch.uint8)
        except RuntimeError:
            pass
prof.export_chrome_trace(str(out))
