#!/usr/bin/env bash
# Runs pytest files with the virtual environment's Python. Usage: run_pytest.sh VENV FILE...
# Exit 77 (ctest: skipped) without the environment; pytest's "no tests collected" (5) is a failure.
set -uo pipefail
venv=$1
shift
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import regionprof._native, torch" 2>/dev/null; then
  echo "run_pytest.sh: no virtual environment with regionprof and torch at $venv (scripts/test creates it); skipped"
  exit 77
fi
"$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "run_pytest.sh: pytest collected no tests in $*"
  exit 1
fi
exit "$rc"
