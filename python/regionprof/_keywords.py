"""Keyword options made from the native option table (src/regionprof/options/*.def and the .def files
beside the code that implements each option): the keywords of regionprof.profile, regionprof.analyze,
regionprof.run and regionprof.torch.profile, with their defaults, types and docs, come from the one
declaration of each option. Values are checked natively (TypeError / ValueError naming the keyword).
The static types are in the generated stub _options.pyi."""

from __future__ import annotations

import functools
import inspect
import textwrap
from typing import Any, Callable, Dict, Iterable, List, TypeVar

from regionprof import _native

F = TypeVar("F", bound=Callable[..., Any])

#: The annotation of each option kind (as _options.pyi writes it).
ANNOTATIONS = {
    "count": "int", "optional_count": "Optional[int]", "flag": "bool", "optional_number": "Optional[float]",
    "optional_path": "Optional[StrPath]", "run_marker": "Optional[str]", "region_rules": "Optional[Sequence[str]]",
    "graph_attribution": "str",
}


@functools.lru_cache(maxsize=None)
def table(function: str) -> List[Dict[str, Any]]:
    """The options of ``function`` ("profile", "analyze", "run" or "steps": regionprof.profiler), in
    declaration order."""
    return list(_native.option_table(function))


def _entries(function: str, exclude: Iterable[str]) -> List[Dict[str, Any]]:
    return [entry for entry in table(function) if entry["name"] not in set(exclude)]


def check(caller: str, function: str, given: Dict[str, Any], exclude: Iterable[str] = ()) -> None:
    """TypeError for a keyword ``caller`` does not take, as Python says it. Only where the native check
    (``function() got an unexpected keyword argument``) would name another function or accept the
    keyword: regionprof.torch.profile, which takes all of profile's options but ``regions``."""
    names = {entry["name"] for entry in _entries(function, exclude)}
    for name in given:
        if name not in names:
            raise TypeError(f"{caller}() got an unexpected keyword argument '{name}'")


def _doc(function: str, exclude: Iterable[str]) -> str:
    lines = ["Options (each declared once, natively; None: the default or unset):", ""]
    for entry in _entries(function, exclude):
        text = " ".join(entry["doc"].split())
        lines += textwrap.wrap(f"``{entry['name']}`` ({ANNOTATIONS[entry['kind']]}, default {entry['default']!r}): "
                               f"{text}", width=100, subsequent_indent="    ")
    return "\n".join(lines)


def takes(function: str, exclude: Iterable[str] = ()) -> Callable[[F], F]:
    """Gives a ``def f(..., **options)`` the signature and the docs of ``function``'s options, for
    help(), IDEs and inspect.signature."""
    excluded = tuple(exclude)

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        kept = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        added = [inspect.Parameter(entry["name"], inspect.Parameter.KEYWORD_ONLY, default=entry["default"],
                                   annotation=ANNOTATIONS[entry["kind"]]) for entry in _entries(function, excluded)]
        fn.__signature__ = signature.replace(parameters=kept + added)  # type: ignore[attr-defined]
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + "\n\n" + _doc(function, excluded)
        return fn

    return decorate


def stub() -> str:
    """The text of _options.pyi: a TypedDict of each function's options (python/tests/test_options checks
    that the file in the package is this text)."""
    out = ['"""Generated from the native option table by regionprof._keywords.stub(); do not edit.',
           "Regenerate: python -c 'import regionprof._keywords as k; print(k.stub(), end=\"\")' > _options.pyi\"\"\"",
           "", "import os", "from typing import Optional, Sequence, TypedDict, Union", "",
           'StrPath = Union[str, "os.PathLike[str]"]', ""]
    for function, name, who in (("profile", "ProfileOptions", "regionprof.profile"),
                                ("analyze", "AnalyzeOptions", "regionprof.analyze"), ("run", "RunOptions", "regionprof.run"),
                                ("steps", "StepOptions", "regionprof.profiler")):
        out += ["", f"class {name}(TypedDict, total=False):",
                f'    """The keyword options of {who}."""', ""]
        out += [f"    {entry['name']}: {ANNOTATIONS[entry['kind']]}" for entry in table(function)]
    return "\n".join(out) + "\n"
