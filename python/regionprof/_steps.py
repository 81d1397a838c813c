"""regionprof.profiler and regionprof.schedule: the caller's own loop profiled step by step, as
torch.profiler.profile(schedule=...) with prof.step() does, each recorded step a run of the native
step profiler (src/regionprof/harness/step_profiler.hpp), each cycle of the schedule one Profile."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from regionprof import _keywords, _native
from regionprof._api import Profile, _check_int

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from regionprof._options import StepOptions

__all__ = ["schedule", "profiler"]


class schedule:
    """Which steps are recorded, as torch.profiler.schedule says: the first ``skip_first`` steps are
    not; then each cycle is ``wait`` steps not recorded, ``warmup`` steps (run, not reported), ``active``
    recorded steps (the runs of the cycle's Profile); ``repeat`` cycles, or cycles until the loop ends
    when 0. Unlike torch's, ``repeat`` defaults to 1 (one Profile). A cycle's last warm-up step is
    recorded and discarded (the harness's internal warm-up run); the others run unrecorded.

    ```
    regionprof.schedule(wait=1, warmup=1, active=3, repeat=2)   # steps 2-4 and 7-9 are runs
    ```
    """

    __slots__ = ("wait", "warmup", "active", "repeat", "skip_first")

    def __init__(self, *, wait: int = 0, warmup: int = 0, active: int, repeat: int = 1, skip_first: int = 0) -> None:
        for name, value, minimum in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1),
                                     ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
            _check_int(f"schedule: {name}", value, minimum)
        self.wait, self.warmup, self.active, self.repeat, self.skip_first = wait, warmup, active, repeat, skip_first

    def _native(self) -> Tuple[int, int, int, int, int]:
        return (self.wait, self.warmup, self.active, self.repeat, self.skip_first)

    def __repr__(self) -> str:
        return (f"regionprof.schedule(wait={self.wait}, warmup={self.warmup}, active={self.active}, "
                f"repeat={self.repeat}, skip_first={self.skip_first})")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, schedule) and self._native() == other._native()

    def __hash__(self) -> int:
        return hash(self._native())


_Schedule = schedule


class profiler:
    """A context manager around the caller's own loop: ``p.step()`` ends one step (and begins the next),
    each recorded step is a run. Without ``schedule`` every step is a run and the block's end makes the
    one Profile; with a :class:`schedule`, each cycle's active steps are the runs of one Profile, made
    when its last active step ends. Work after the last ``p.step()`` is not a run; a cycle cut short by
    the block's end is a Profile of the runs it had. Every NVTX range of the process is recorded, as
    for :func:`regionprof.profile` (``regionprof.region`` marks a region).

    ``p.profiles``: the cycles' Profiles in order; ``p.profile``: the last one (None before the first).
    ``on_cycle``: called with each cycle's Profile as it completes; the Profiles are then not kept in
    ``p.profiles`` (a long loop holds one at a time). ``window_output``: each cycle's JSON profile, a
    path naming the cycle with ``%w`` when the schedule may make more than one (every output path then
    needs ``%w``); each report's ``target.window`` is its cycle. Steps must be ended on the thread that
    entered the block. An exception leaving the block discards the cycle in progress and propagates.

    ```
    with regionprof.profiler(schedule=regionprof.schedule(wait=1, warmup=1, active=3)) as p:
        for batch in loader:
            with regionprof.region("forward"):
                loss = model(batch)
            p.step()
    print(p.profile.markdown())
    ```
    """

    _who = "regionprof.profiler"

    @_keywords.takes("steps")
    def __init__(self, *, schedule: Optional[schedule] = None, on_cycle: Optional[Callable[[Profile], Any]] = None,
                 **options: "Unpack[StepOptions]") -> None:
        if schedule is not None and not isinstance(schedule, _Schedule):
            raise TypeError(f"schedule must be a regionprof.schedule or None, not {type(schedule).__name__}")
        if on_cycle is not None and not callable(on_cycle):
            raise TypeError(f"on_cycle must be callable or None, not {type(on_cycle).__name__}")
        _keywords.check(self._who, "steps", options)
        self.schedule = schedule
        self._on_cycle = on_cycle
        self._options: Dict[str, Any] = dict(options)
        self._native: Any = None
        self._thread: Optional[int] = None
        #: Each completed cycle's Profile, in order (empty with on_cycle).
        self.profiles: List[Profile] = []
        #: The last completed cycle's Profile, or None.
        self.profile: Optional[Profile] = None

    def _caller(self) -> Dict[str, Any]:
        """What the front-end knows of the target (see regionprof._api._run_native)."""
        return {"target_type": "loop", "target_kind": "loop"}

    def __enter__(self) -> "profiler":
        if self._native is not None:
            raise RuntimeError(f"{self._who}: the block is already entered (a profiler is entered once)")
        self._native = _native.StepProfiler(self._options, self._caller(),
                                            None if self.schedule is None else self.schedule._native())
        self._thread = threading.get_ident()
        return self

    @property
    def step_num(self) -> int:
        """The number of the current step (0 for the first), as torch.profiler's ``step_num``."""
        return self._native.current_step if self._native is not None else 0

    def step(self) -> None:
        """Ends the current step and begins the next; a cycle this step completes becomes a Profile."""
        if self._native is None:
            raise RuntimeError(f"{self._who}: step() outside the with block")
        if threading.get_ident() != self._thread:
            raise RuntimeError(f"{self._who}: step() on another thread than the one that entered the block "
                               "(a run is a per-thread range): call step() from the loop's thread")
        self._completed(self._native.step())

    def _completed(self, done: Optional[Tuple[Any, Optional[str]]]) -> None:
        if done is None:
            return
        native, trace = done
        completed = Profile(native, None if trace is None else Path(trace))
        self.profile = completed
        if self._on_cycle is not None:
            self._on_cycle(completed)
        else:
            self.profiles.append(completed)

    def __exit__(self, exc_type: Any, exc: Any, traceback: Any) -> None:
        native, self._native = self._native, None
        if native is None:
            return
        if exc_type is not None:
            native.close()  # the exception is the one to report
            return
        self._completed(native.finish())
