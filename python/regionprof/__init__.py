"""regionprof: where each run of a program spends its time, region by region, on the CPU and the GPU.

The native core (the NVTX capture, CUPTI, the analysis and the reports) is compiled into
``regionprof._native``; this package wraps it for Python:

- :func:`regionprof.torch.profile` profiles a torch model, every module a region (a drop-in for
  AITune's ``runtime_profile``),
- :func:`regionprof.torch.profiler` profiles the user's own training loop step by step (``p.step()``),
  every module and its backward a region,
- :func:`profile` profiles any callable, :func:`profiler` any loop, :func:`region` marks a region,
- :func:`analyze` reads a torch.profiler trace,
- :func:`run` profiles a program from outside (``regionprof run``) and reads its profiles back.

```
import regionprof
with regionprof.region("load"):
    data = load()
print(regionprof.profile(lambda: step(data)).markdown())
```

Importing the package points ``NVTX_INJECTION64_PATH`` at the extension (unless another tool is named
there), so the NVTX ranges of every library in the process (torch, the ``nvtx`` package) are
recorded. Import regionprof before the first NVTX call of the process.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

_NVTX_INJECTION_VARIABLE = "NVTX_INJECTION64_PATH"
#: The value this import gave NVTX_INJECTION64_PATH (None: it set nothing); the command removes it.
_NVTX_INJECTION_SET_BY_IMPORT: "str | None" = None


def _point_nvtx_at_extension() -> None:
    """Names the extension as the process's NVTX tool, before any NVTX instance initialises."""
    global _NVTX_INJECTION_SET_BY_IMPORT
    if os.environ.get(_NVTX_INJECTION_VARIABLE):
        return  # another tool (Nsight Systems, ...) owns NVTX: the report says NVTX_TOOL_CONFLICT
    spec = importlib.util.find_spec("regionprof._native")
    if spec is not None and spec.origin:
        _NVTX_INJECTION_SET_BY_IMPORT = os.path.realpath(spec.origin)
        os.environ[_NVTX_INJECTION_VARIABLE] = _NVTX_INJECTION_SET_BY_IMPORT


_point_nvtx_at_extension()

from regionprof._native import TraceError  # noqa: E402
from regionprof._api import JobProfile, Profile, analyze, load, profile, region  # noqa: E402
from regionprof._command import run  # noqa: E402
from regionprof._steps import profiler, schedule  # noqa: E402
from regionprof.distributed import gather  # noqa: E402

if TYPE_CHECKING:
    from regionprof import torch as torch

__all__ = ["Profile", "TraceError", "analyze", "load", "profile", "profiler", "region", "run", "schedule", "torch",
           "JobProfile", "gather"]
from regionprof._native import __version__  # noqa: E402  (CMakeLists.txt's project VERSION)


def __getattr__(name: str) -> Any:
    """``regionprof.torch`` is imported on first use, so ``import regionprof`` never imports torch."""
    if name == "torch":
        import importlib

        return importlib.import_module("regionprof.torch")
    raise AttributeError(f"module 'regionprof' has no attribute {name!r}")
