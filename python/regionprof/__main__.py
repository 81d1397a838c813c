"""``python -m regionprof ...``: the ``regionprof`` command (see regionprof._command)."""

from regionprof._command import main

if __name__ == "__main__":
    main()
