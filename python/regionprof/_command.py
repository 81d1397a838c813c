"""The ``regionprof`` command of the wheel: executes the C++ command shipped in the package.

The wheel carries ``regionprof/bin/regionprof`` (the same program as the C++ build's
``build/bin/regionprof``) and its injection library ``regionprof/lib/libregionprof_inject.so``, which
the program finds at ``../lib`` beside itself. :func:`main` replaces the Python process with that
program, so every subcommand (analyze, run, diff, report, merge), message and exit status is the C++
one, and ``regionprof run`` starts the profiled program as the program's own child. :func:`run`
(``regionprof.run``) runs ``regionprof run`` as a child and reads the profiles it wrote back.

```
$ regionprof analyze trace.json.gz -o profile.json
$ python -m regionprof run -o profile.json -- python app.py
```
"""

from __future__ import annotations

import errno
import itertools
import os
import signal
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Deque, List, NoReturn, Optional, Sequence, Union

from regionprof import _keywords

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from regionprof._api import Profile
    from regionprof._options import RunOptions

#: The C++ command inside the installed package.
EXECUTABLE = Path(__file__).resolve().parent / "bin" / "regionprof"


def _environment() -> dict:
    """The caller's environment, less what ``import regionprof`` added (the NVTX tool variable that
    names the extension): the command must see the environment the user gave it."""
    import regionprof

    env = dict(os.environ)
    added = getattr(regionprof, "_NVTX_INJECTION_SET_BY_IMPORT", None)
    if added is not None and env.get("NVTX_INJECTION64_PATH") == added:
        del env["NVTX_INJECTION64_PATH"]
    return env


def main(argv: Optional[Sequence[str]] = None) -> NoReturn:
    """Executes ``regionprof/bin/regionprof`` with ``argv`` (default: this process's arguments).

    Never returns: the process becomes the command, whose exit status is this process's. The signals
    Python ignores (SIGPIPE, SIGXFSZ) get their default action back first, since an ignored signal stays
    ignored across exec: so a closed output pipe (``regionprof report p.json | head -1``) ends the command
    by SIGPIPE, quietly, as it ends the C++ build's.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not os.access(EXECUTABLE, os.X_OK):
        sys.stderr.write(
            f"regionprof: the command is missing from this installation ({EXECUTABLE}); "
            "reinstall the wheel (pip install --force-reinstall regionprof)\n"
        )
        sys.exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    for number in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(number, signal.SIG_DFL)
    os.execve(EXECUTABLE, [str(EXECUTABLE), *args], _environment())


def _relay(stream: IO[str], to: IO[str], tail: "Optional[Deque[str]]") -> None:
    """Copies the command's output line by line to this process's ``sys.stdout`` / ``sys.stderr`` (so it
    shows in Jupyter too), keeping the last lines of stderr for an error."""
    for line in stream:
        to.write(line)
        to.flush()
        if tail is not None:
            tail.append(line)


@_keywords.takes("run")
def run(
    argv: Sequence[Union[str, "os.PathLike[str]"]],
    *,
    extra_args: Sequence[str] = (),
    **options: "Unpack[RunOptions]",
) -> Union["Profile", List["Profile"]]:
    """Runs ``regionprof run [flags] -- argv`` with the package's own command (``regionprof/bin/regionprof``
    and its injection library: the program needs no change, its NVTX ranges become runs and regions) and
    returns the profile it wrote, read back with :func:`regionprof.load`: one Profile, or with
    ``processes`` N > 1 a list of N, process 0's first (each process of its own, one after another: one
    side of ``regionprof diff``'s per-process test). With windows, each process writes a profile per
    window (bounded memory) and the last window's is returned; windows need ``output``.

    ``output``: the JSON profile's path (placeholders as in docs/cli.md: ``%n`` the process index, needed
    with ``processes`` > 1; ``%w`` the window index, needed with windows; ``%r %l %h %%``); the files stay,
    and the first one's directory is created. Without it the profiles go to a temporary directory,
    removed once they are read. ``%p`` is refused (the profiled program's pid is not known here). The
    other options are the command's flags of the same name (below); ``extra_args``: more of its flags as
    they are (``["--trace", "t-%n.json"]``).

    The command's and the program's output is copied to ``sys.stdout`` and ``sys.stderr`` as it comes.
    Raises TypeError / ValueError for a bad parameter before anything runs (an ``output`` the processes or
    windows would share: the placeholders' own message), subprocess.CalledProcessError
    when the command exits non-zero (its usage errors, exit 2, and the program's own status; ``stderr``
    holds the last lines of its stderr), and FileNotFoundError naming a profile that was not written (or
    the command, when it is missing from the installation).

    ```
    profile = regionprof.run(["python", "app.py"], warmup_runs=1)
    side = regionprof.run(["python", "app.py"], processes=3, output="a/prof-%n.json")  # 3 Profiles
    ```
    """
    import collections
    import shutil
    import subprocess
    import tempfile
    import threading
    import time

    from regionprof import _native
    from regionprof._api import _check_path, load

    if isinstance(argv, (str, bytes)) or not isinstance(argv, Sequence) or not argv:
        raise TypeError("argv must be a non-empty list of the program and its arguments, e.g. ['python', 'app.py']")
    words = [os.fspath(_check_path("argv", word)) for word in argv]
    if isinstance(extra_args, (str, bytes)) or not all(isinstance(w, str) for w in extra_args):
        raise TypeError("extra_args must be a list of str")
    given = dict(options)
    output = given.pop("output", None)
    flags, windows, processes = _native.run_flags(given)  # TypeError / ValueError naming the keyword
    if output is None and windows:
        raise ValueError("windows need output, the path each window's profile is written to, with %w (the "
                         "window index), e.g. output='w/prof-%w.json': the windows' files are what the run leaves")
    if not os.access(EXECUTABLE, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, f"regionprof.run: the command is missing from this installation "
                                f"({EXECUTABLE}); reinstall the wheel (pip install --force-reinstall regionprof)")
    temporary = None
    if output is None:
        temporary = tempfile.mkdtemp(prefix="regionprof-run-")
        pattern = os.path.join(temporary.replace("%", "%%"), "prof-%n.json")
    else:
        pattern = os.path.expanduser(os.fspath(_check_path("output", output)))
    try:
        if "%p" in pattern.replace("%%", ""):
            raise ValueError(f"output '{pattern}': regionprof.run reads the profiles back and cannot know the "
                             "program's pid (%p); use %n (the process index) instead")
        # The directory of the first file, as regionprof.profile does for its outputs (the command wants it).
        first = _native.expand_output_path(pattern, 0 if windows else None,
                                           *((0, processes) if processes > 1 else (None, None)))
        os.makedirs(os.path.dirname(os.path.abspath(first)), exist_ok=True)
        command = [str(EXECUTABLE), "run", *flags, "-o", pattern, *extra_args, "--", *words]
        started = time.time()
        sys.stdout.flush()
        sys.stderr.flush()
        tail: Deque[str] = collections.deque(maxlen=20)
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8",
                              errors="replace", env=_environment()) as child:
            relays = [threading.Thread(target=_relay, args=(child.stdout, sys.stdout, None), daemon=True),
                      threading.Thread(target=_relay, args=(child.stderr, sys.stderr, tail), daemon=True)]
            for relay in relays:
                relay.start()
            status = child.wait()
            for relay in relays:
                relay.join()
        if status != 0:
            raise subprocess.CalledProcessError(status, command, stderr="".join(tail))
        profiles = []
        for index in range(processes):
            process = (index, processes) if processes > 1 else (None, None)
            if not windows:
                path = _native.expand_output_path(pattern, None, *process)
            else:
                # The last window this run wrote: windows 0, 1, ... while their files are new.
                path = None
                for window in itertools.count():
                    candidate = _native.expand_output_path(pattern, window, *process)
                    if not os.path.isfile(candidate) or os.path.getmtime(candidate) < started - 1:
                        break
                    path = candidate
                if path is None:
                    path = _native.expand_output_path(pattern, 0, *process)
            if not os.path.isfile(path):
                raise FileNotFoundError(errno.ENOENT, f"regionprof.run: process {index} of {processes} wrote no "
                                        f"profile to '{path}' (see the command's message above)")
            profiles.append(load(path))
        return profiles if processes > 1 else profiles[0]
    finally:
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
