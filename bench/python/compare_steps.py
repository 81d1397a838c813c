"""The same BERT training step (2 layers, hidden 64, batch 4 x 32, CPU, 1 thread) under torch.profiler and
under regionprof.torch.profiler: each one's step time and backward share, as each reports them
(docs/torch.md). Usage: build/python-venv/bin/python bench/python/compare_steps.py"""
import regionprof, regionprof.torch as rtorch
import statistics, torch
from transformers import BertConfig, BertForSequenceClassification

torch.set_num_threads(1)
torch.manual_seed(0)
config = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=128, max_position_embeddings=64, num_labels=2)
model = BertForSequenceClassification(config).train()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
batch = {"input_ids": torch.randint(0, 1000, (4, 32)), "labels": torch.randint(0, 2, (4,))}
def step():
    model(**batch).loss.backward(); opt.step(); opt.zero_grad()
for _ in range(5): step()
sched = dict(wait=0, warmup=2, active=10)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                            schedule=torch.profiler.schedule(**sched, repeat=1)) as prof:
    for _ in range(12):
        step(); prof.step()
events = prof.events()
steps = [e.cpu_time_total for e in events if e.name.startswith("ProfilerStep")]
backward = [e for e in events if e.name.startswith("autograd::engine::evaluate_function")]
# top-level backward nodes only (no parent of the same kind)
bw_total = sum(e.cpu_time_total for e in backward if not (e.cpu_parent and e.cpu_parent.name.startswith("autograd::engine::evaluate_function")))
print(f"torch.profiler: step median {statistics.median(steps):.0f} us over {len(steps)} steps; backward nodes {bw_total/len(steps):.0f} us/step ({bw_total/sum(steps)*100:.1f} %)")
with rtorch.profiler(model, schedule=regionprof.schedule(**sched)) as p:
    for _ in range(12):
        step(); p.step()
runs = p.profile.data["runs"]
cpu = [r["timing"]["cpu_time_us"] for r in runs]
bw = [sum(x["cpu_time_us"] for x in r["regions"] if "_backward:" in x["region_id"]) for r in runs]
fw = [sum(x["cpu_time_us"] for x in r["regions"] if "_backward:" not in x["region_id"]) for r in runs]
res = [r["residual"]["cpu_time_us"] for r in runs]
print(f"regionprof: step median {statistics.median(cpu):.0f} us over {len(runs)} runs; forward regions {statistics.median(fw):.0f} us, backward regions {statistics.median(bw):.0f} us ({statistics.median(bw)/statistics.median(cpu)*100:.1f} %), residual {statistics.median(res):.0f} us")
print({x["region_id"]: round(x["cpu_time_us"]) for x in runs[0]["regions"]})
