"""Modules wrapped by AITune's ``aitune.torch.Module`` are tuned regions without ``tuned=``, named as
AITune names them (``aot_module:<wrapper name>``), and restored afterwards.

AITune 0.6.0's import needs TensorRT, Torch-TensorRT, ONNX Runtime, ModelOpt and more, which this
machine cannot install; the test therefore uses a stand-in with AITune's interface and behaviour where
regionprof meets it: ``aitune.torch.module_registry.MODULE_REGISTRY.modules`` (name -> wrapper), the
wrapper a proxy whose ``__class__`` is the wrapped module's class (``wrapt.CallableObjectProxy``),
``__wrapped__``, ``name``, and a ``forward`` on the wrapped instance that AITune swaps during each call.
With the real package importable, the real one is used."""

from __future__ import annotations

import sys
import types
from collections import OrderedDict
from typing import Any, Dict, Iterator, List

import pytest
import torch
from torch import nn

import regionprof
import regionprof.torch as rtorch
from models import Vae


class StandInModule:
    """aitune.torch.Module's shape: a proxy registered under its name; forward swapped per call."""

    def __init__(self, module: nn.Module, name: str, registry: Any) -> None:
        object.__setattr__(self, "__wrapped__", module)
        object.__setattr__(self, "_self_name", name)
        original = module.forward

        def proxy_forward(*args: Any, **kwargs: Any) -> Any:
            module.forward = original  # AITune restores the original forward around the call...
            try:
                return original(*args, **kwargs)
            finally:
                module.forward = proxy_forward  # ...and puts its own back after it

        module.forward = proxy_forward
        registry.modules[name] = self

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(self.__wrapped__)

    @property
    def name(self) -> str:
        return self._self_name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__wrapped__, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__wrapped__, name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)


class Registry:
    def __init__(self) -> None:
        self.modules: "OrderedDict[str, Any]" = OrderedDict()


@pytest.fixture
def aitune(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A function wrap(module, name) -> AITune wrapper, with the registry regionprof reads."""
    registry = Registry()
    stand_in = types.ModuleType("aitune.torch.module_registry")
    stand_in.MODULE_REGISTRY = registry  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "aitune.torch.module_registry", stand_in)
    yield lambda module, name: StandInModule(module, name, registry)


class Pipe(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.text = nn.Linear(8, 8)
        self.vae = Vae()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.vae(self.text(x))


def run_calls(p: regionprof.Profile, run: int) -> Dict[str, int]:
    return {r["region_id"]: r["calls"] for r in p.data["runs"][run]["regions"]}


def state(model: nn.Module) -> List[Any]:
    return [(id(m), sorted((k, id(v)) for k, v in m.__dict__.items())) for m in model.modules()]


def test_wrapped_modules_are_tuned_and_named_as_aitune_names_them(aitune: Any) -> None:
    torch.manual_seed(0)
    pipe = Pipe()
    vae = pipe.vae
    pipe.vae = aitune(vae, "vae_trt")
    assert isinstance(pipe.vae, nn.Module) and pipe._modules["vae"] is not vae
    before = state(vae)
    p = rtorch.profile(pipe, torch.randn(2, 8), warmup_runs=1, measured_runs=3)
    ids = [r["id"] for r in p.data["regions"]]
    assert ids == ["untuned_module:text", "aot_module:vae_trt"]
    types_ = {r["id"]: r["module_type"] for r in p.data["regions"]}
    assert types_["aot_module:vae_trt"] == f"{Vae.__module__}.Vae"
    for run in range(3):  # AITune's forward swap does not lose the region after the first call
        assert run_calls(p, run) == {"untuned_module:text": 1, "aot_module:vae_trt": 1}
    assert state(vae) == before
    # An explicit tuned name wins over AITune's.
    q = rtorch.profile(pipe, torch.randn(2, 8), measured_runs=1, tuned={"vae": "mine"})
    assert "aot_module:mine" in [r["id"] for r in q.data["regions"]]


def test_registered_wrappers_outside_the_object_are_regions_too(aitune: Any) -> None:
    torch.manual_seed(0)
    pipe = Pipe()
    other = aitune(nn.Linear(8, 8), "side_model")
    p = rtorch.profile(pipe, torch.randn(2, 8), inference_function=lambda x: other(pipe(x)), measured_runs=1)
    assert run_calls(p, 0) == {"untuned_module:text": 1, "untuned_module:vae": 1, "aot_module:side_model": 1}
