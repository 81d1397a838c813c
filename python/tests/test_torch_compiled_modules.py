"""Modules inside compiled code as regions (docs/design.md, rule 22), with the real inductor on CPU: each
model is compiled by its first call inside a profile, and each kernel inductor generates counts for the
module it came from.

The two-block model of the tests, and what inductor 2.15 makes of it (its output code, read by hand):
``Net.forward`` is ``b(a(x)) * 2``, a block ``relu(n(l(x)))`` (Linear, LayerNorm). The forward graph runs
four kernels:

- ``extern_kernels.addmm`` for ``a.l``'s linear: module ``a.l``;
- ``cpp_fused_native_layer_norm_relu_0``: ``a.n``'s layer norm and ``a``'s relu, so module ``a`` (the
  deepest containing both);
- ``extern_kernels.addmm`` for ``b.l``'s linear: module ``b.l``;
- ``cpp_fused_mul_native_layer_norm_relu_1``: ``b.n``'s layer norm, ``b``'s relu and the root's ``* 2``,
  so the root, which is not a region: the runs' residual.

Compiling costs 10-25 s a graph here; each test compiles its own model (torch._dynamo.reset() first)."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import pytest
import torch
import torch._dynamo
import torch._inductor.config
from torch import nn
from torch._dynamo.utils import counters

import regionprof
import regionprof.torch as rtorch
from models import LinearNormBlock as Block, Net, train_step
from regionprof._torch_compiled import common_owner, stack_entry_path

torch._inductor.config.compile_threads = 1  # no compile worker pool: on 2 cores it only costs start-up


X = torch.randn(8, 32)


@pytest.fixture(autouse=True)
def fresh_dynamo() -> None:
    torch._dynamo.reset()
    counters.clear()
    torch.manual_seed(0)


def region_ops(p: regionprof.Profile) -> Dict[str, Set[str]]:
    """Each region's op names (rule 20), inductor's graph prefix (``graph_<n>_``) cut from kernel names."""
    found: Dict[str, Set[str]] = {}
    for row in p.to_pandas("region_ops").itertuples():
        key = str(row.key)
        found.setdefault(str(row.region_id), set()).add(key.split("_", 2)[2] if key.startswith("graph_") else key)
    return found


def tree_paths(p: regionprof.Profile) -> List[List[str]]:
    return [n["path"] for n in p.data["tree_summary"]]


def compiled_warnings(p: regionprof.Profile) -> List[str]:
    return [w["message"] for w in p.data["warnings"] if w["code"] == "COMPILED_MODULES"]


def counted() -> Dict[str, Dict[str, Any]]:
    return {name: dict(values) for name, values in counters.items() if name in ("stats", "graph_break", "recompiles")}


def test_stack_entries_and_owners() -> None:
    assert stack_entry_path("L['self'].blocks[0].attn") == ("self", ("blocks", "0", "attn"))
    assert stack_entry_path("L['s'].a.l") == ("s", ("a", "l"))
    assert stack_entry_path("L['self']._modules['enc'].layers.3") == ("self", ("enc", "layers", "3"))
    assert stack_entry_path("L['mods']['head']") == ("mods", ("head",))
    assert stack_entry_path("L['self']") == ("self", ())
    assert stack_entry_path("G['model'].a") is None
    assert stack_entry_path("L['self'].a(1)") is None
    assert common_owner([("a", "n"), ("a",)]) == ("a",)
    assert common_owner([("b", "n"), ("b",), ()]) == ()
    assert common_owner([("a", "l"), ("b", "l")]) == ()
    assert common_owner([("blocks", "1", "fc")]) == ("blocks", "1", "fc")


def test_each_kernel_counts_for_the_module_it_came_from() -> None:
    compiled = torch.compile(Net())
    p = rtorch.profile(compiled, X, warmup_runs=1, measured_runs=3, ops=True, every_level=True)
    assert [r["id"] for r in p.data["regions"]] == ["untuned_module:a", "untuned_module:b"]
    assert tree_paths(p) == [["untuned_module:a"], ["untuned_module:a", "untuned_module:a.l"],
                             ["untuned_module:b"], ["untuned_module:b", "untuned_module:b.l"]]
    ops = region_ops(p)
    assert "cpp_fused_native_layer_norm_relu_0" in ops["untuned_module:a"]
    assert "aten::addmm" in ops["untuned_module:a"] and "aten::addmm" in ops["untuned_module:b"]
    assert not any("cpp_fused" in op for op in ops["untuned_module:b"])
    assert "cpp_fused_mul_native_layer_norm_relu_1" in ops["(residual)"]
    assert "aten::addmm" not in ops["(residual)"]
    assert compiled_warnings(p) == []  # every forward kernel traced
    calls = {r["region_id"]: r["calls"] for r in p.data["runs"][0]["regions"]}
    assert calls == {"untuned_module:a": 2, "untuned_module:b": 1}  # a: its addmm (inside a.l) and kernel 0
    # A later profile of the same compiled model maps its graph again, without compiling anything.
    graphs = counters["stats"]["unique_graphs"]
    again = rtorch.profile(compiled, X, measured_runs=2, every_level=True)
    assert tree_paths(again) == tree_paths(p) and compiled_warnings(again) == []
    assert counters["stats"]["unique_graphs"] == graphs == 1


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])
        self.head = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def test_a_kernel_the_code_calls_for_every_layer_counts_for_each_layer_in_turn() -> None:
    # Inductor generates one layer-norm-and-relu kernel and calls it three times, once per block.
    p = rtorch.profile(torch.compile(Stack()), X, measured_runs=3, ops=True)
    assert [r["id"] for r in p.data["regions"]] == [
        "untuned_module:blocks.0", "untuned_module:blocks.1", "untuned_module:blocks.2", "untuned_module:head"]
    ops = region_ops(p)
    layer_kernels = [{op for op in ops[f"untuned_module:blocks.{i}"] if op.startswith("cpp_fused")} for i in range(3)]
    assert layer_kernels[0] == layer_kernels[1] == layer_kernels[2] == {"cpp_fused_native_layer_norm_relu_0"}
    calls = {r["region_id"]: r["calls"] for r in p.data["runs"][0]["regions"]}
    assert calls == {"untuned_module:blocks.0": 2, "untuned_module:blocks.1": 2, "untuned_module:blocks.2": 2,
                     "untuned_module:head": 1}
    assert compiled_warnings(p) == []


def test_no_recompilation_and_no_graph_break_from_profiling() -> None:
    plain = torch.compile(Net())
    for _ in range(1 + 1 + 2):  # as many calls as the profile makes: warmup_runs, the recorded warm-up, measured
        plain(X)
    without = counted()
    torch._dynamo.reset()
    counters.clear()
    rtorch.profile(torch.compile(Net()), X, warmup_runs=1, measured_runs=2, every_level=True)
    assert counted() == without  # frames, unique graphs, graph breaks, recompiles: all equal
    assert counters["graph_break"] == {} and counters["stats"]["unique_graphs"] == 1


def test_model_compile_in_place_and_regional_compilation() -> None:
    net = Net()
    net.compile()
    p = rtorch.profile(net, X, measured_runs=2)
    assert [r["id"] for r in p.data["regions"]] == ["untuned_module:a", "untuned_module:b"]
    assert compiled_warnings(p) == []

    torch._dynamo.reset()
    regional = Net(32, 16)
    regional.a.compile()
    regional.b.compile()
    p = rtorch.profile(regional, X, measured_runs=2, ops=True, every_level=True)
    assert tree_paths(p) == [["untuned_module:a"], ["untuned_module:a", "untuned_module:a.l"],
                             ["untuned_module:b"], ["untuned_module:b", "untuned_module:b.l"]]
    assert compiled_warnings(p) == []
    ops = region_ops(p)
    # Each block's own fused kernel (layer norm and relu) is the block's; the root's * 2 runs eager.
    assert any(op.startswith("cpp_fused_native_layer_norm_relu") for op in ops["untuned_module:a"])
    assert any(op.startswith("cpp_fused_native_layer_norm_relu") for op in ops["untuned_module:b"])
    assert "aten::mul" in ops["(residual)"]


def test_a_graph_two_blocks_share_goes_to_each_block_that_runs_it() -> None:
    net = Net()  # a and b of one shape: dynamo compiles Block.forward once, for both
    net.a.compile()
    net.b.compile()
    p = rtorch.profile(net, X, measured_runs=3, every_level=True)
    assert tree_paths(p) == [["untuned_module:a"], ["untuned_module:a", "untuned_module:a.l"],
                             ["untuned_module:b"], ["untuned_module:b", "untuned_module:b.l"]]
    assert counters["stats"]["unique_graphs"] == 1
    assert compiled_warnings(p) == []
    calls = {tuple(n["path"]): n["calls"] for n in p.data["tree_summary"]}
    assert calls[("untuned_module:a", "untuned_module:a.l")] == calls[("untuned_module:b", "untuned_module:b.l")] == 1


def test_training_steps_with_a_compiled_backward() -> None:
    net = Net()
    compiled = torch.compile(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(8, 32)
    with rtorch.profiler(compiled, schedule=regionprof.schedule(wait=1, warmup=0, active=3)) as p:
        for _ in range(4):
            train_step(compiled, optimizer, x)
            p.step()
    assert [r["id"] for r in p.profile.data["regions"]] == [
        "untuned_module:a", "untuned_module:b", "untuned_module_backward:Net"]
    (message,) = compiled_warnings(p.profile)
    assert message == (
        "6 module(s) run inside the compiled code of untuned_module:Net (torch.compile(module)) and are regions made "
        "of the kernels traced to them; its compiled backward (1 graph(s)) is not traced to modules, torch's "
        "inductor keeping no provenance for backward graphs: its time is in untuned_module_backward:Net.")
    # Graphs that no longer run (dynamo reset; inductor may keep them alive) are not this profile's: an
    # inference profile of a model of the same class says nothing of a backward graph.
    torch._dynamo.reset()
    with torch.no_grad():
        assert compiled_warnings(rtorch.profile(torch.compile(Net()), X, measured_runs=2)) == []


def test_training_steps_of_regionally_compiled_blocks_have_a_backward_region_each() -> None:
    net = Net(32, 16)  # blocks of two shapes: two graphs
    net.a.compile()
    net.b.compile()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(8, 32, requires_grad=True)  # so that a's backward region ends where its inputs' grads do
    with rtorch.profiler(net, every_level=True, schedule=regionprof.schedule(wait=1, warmup=0, active=3)) as p:
        for _ in range(4):
            train_step(net, optimizer, x)
            p.step()
    assert [r["id"] for r in p.profile.data["regions"]] == [
        "untuned_module:a", "untuned_module:b", "untuned_module_backward:b", "untuned_module_backward:a"]
    assert [n["path"] for n in p.profile.data["tree_summary"]][:2] == [
        ["untuned_module:a"], ["untuned_module:a", "untuned_module:a.l"]]
    messages = compiled_warnings(p.profile)
    assert len(messages) == 2 and all(m.endswith("its time is in untuned_module_backward:" + block + ".")
                                      for m, block in zip(messages, "ab"))


class Pair(Net):
    """Net without the root's ``* 2``: no work of the root's fuses into b's kernel."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


def test_shares_of_compiled_modules_match_eager_where_fusion_moves_no_work() -> None:
    # a's matmul does 4 times b's work and the matmuls dominate (batch 512); fusion merges each block's
    # layer norm and relu within the block. Compiling removes per-op overhead, which weighs more in the
    # smaller block: at batch 128 that alone moved a's share from 0.72 to 0.79 (medians); at 1024, 0.76 and 0.79.
    net = Pair(256, 64).eval()
    x = torch.randn(512, 256)

    def share_of_a(p: regionprof.Profile) -> float:
        # Each region's fastest run: the scheduler only ever adds to a run (other work on the machine).
        times = {r["region_id"]: r["cpu_time_us_min"] for r in p.to_pandas("summary").to_dict("records")}
        return times["untuned_module:a"] / (times["untuned_module:a"] + times["untuned_module:b"])

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: no pool wake-ups in either
    try:
        eager = share_of_a(rtorch.profile(net, x, warmup_runs=3, measured_runs=40))
        compiled = share_of_a(rtorch.profile(torch.compile(net), x, warmup_runs=3, measured_runs=40))
    finally:
        torch.set_num_threads(threads)
    assert 0.7 < eager < 0.85
    assert abs(compiled - eager) < 0.06, (eager, compiled)


class FakeTritonKernel:
    """What inductor's generated code calls a Triton kernel through: an object with ``run`` (and more)."""

    def __init__(self) -> None:
        self.launches = 0
        self.grid = (1, 1, 1)

    def run(self, *args: Any, stream: int = 0) -> None:
        self.launches += 1


def test_kernel_wrappers_open_their_regions_around_each_call() -> None:
    from regionprof import _native, _torch_compiled

    outer = _native.register_region("untuned_module", "enc")
    inner = _native.register_region("untuned_module", "enc.attn")
    other = _native.register_region("untuned_module", "dec")
    triton = FakeTritonKernel()
    launch = _torch_compiled._wrapped({("", 0): (outer, inner)}, 1, False, None, "k0", triton)
    cpp_kernel = _torch_compiled._wrapped({("", 0): (other,)}, 1, False, None, "k1", lambda *args: sum(args))
    shared = _torch_compiled._wrapped({("enc", 0): (outer,), ("dec", 0): (other,)}, 1, True, None, "k2", lambda: None)
    in_enc = _torch_compiled.in_frame("enc", shared)
    # One kernel the generated code calls from two places (one per layer): enc's first, dec's second,
    # counted from the start of each call of the graph.
    calls = _torch_compiled._GraphCalls()
    twice = _torch_compiled._wrapped({("", 0): (outer,), ("", 1): (other,)}, 2, False, calls, "k3", lambda: None)
    graph = calls.counting(lambda: (twice(), twice()))

    def workload() -> None:
        launch.run(1, 2, stream=0)  # the proxy forwards what it does not wrap
        assert cpp_kernel(1, 2) == 3 and launch.grid == (1, 1, 1)
        in_enc()  # told apart by the frame: enc's region
        shared()  # no frame marks the thread: no region
        graph()
        twice()  # outside a call of its graph: no place known, the first place's regions (enc)

    p = regionprof.profile(workload, warmup_runs=0, measured_runs=2)
    assert triton.launches == 3  # the recorded warm-up and 2 measured runs
    run_calls = {r["region_id"]: r["calls"] for r in p.data["runs"][0]["regions"]}
    assert run_calls == {"untuned_module:enc": 4, "untuned_module:dec": 2}
    assert [n["path"] for n in p.data["tree_summary"]] == [
        ["untuned_module:enc"], ["untuned_module:enc", "untuned_module:enc.attn"], ["untuned_module:dec"]]


def test_a_graph_that_cannot_be_mapped_is_a_warning_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from regionprof import _torch_compiled

    def unforeseen(*args: Any) -> None:
        raise KeyError("a generated module of an unforeseen form")

    monkeypatch.setattr(_torch_compiled, "_kernel_owners", unforeseen)
    p = rtorch.profile(torch.compile(Net()), X, measured_runs=2)
    assert len(p.data["runs"]) == 2
    assert compiled_warnings(p)[0] == (
        "6 module(s) run inside the compiled code of untuned_module:Net (torch.compile(module)) and are regions "
        "made of the kernels traced to them; no forward graph of its compiled code was traced, so its time is in "
        "the runs' residual: let its first call (the compile) run inside the profile.")
    assert compiled_warnings(p)[-1] == (
        "1 compiled graph(s) could not be mapped to modules (KeyError: 'a generated module of an unforeseen form'): "
        "their kernels' time is in the regions around their calls.")
