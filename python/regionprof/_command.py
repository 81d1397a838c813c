"""The ``regionprof`` command of the wheel: executes the C++ command shipped in the package.

The wheel carries ``regionprof/bin/regionprof`` (the same program as the C++ build's
``build/bin/regionprof``) and its injection library ``regionprof/lib/libregionprof_inject.so``, which
the program finds at ``../lib`` beside itself. :func:`main` replaces the Python process with that
program, so every subcommand (analyze, run, diff, report, merge), message and exit status is the C++
one, and ``regionprof run`` starts the profiled program as the program's own child.

```
$ regionprof analyze trace.json.gz -o profile.json
$ python -m regionprof run -o profile.json -- python app.py
```
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn, Optional, Sequence

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

    Never returns: the process becomes the command, whose exit status is this process's.
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
    os.execve(EXECUTABLE, [str(EXECUTABLE), *args], _environment())
