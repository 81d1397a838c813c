"""The keyword options of regionprof.profile, analyze, run and regionprof.torch.profile come from the
native option table (src/regionprof/options/*.def): signatures, defaults, docs, checks and the
generated stub _options.pyi."""

import inspect
from pathlib import Path

import pytest

import regionprof
from regionprof import _keywords, _native


def test_the_stub_in_the_tree_is_the_generated_one() -> None:
    stub = Path(__file__).resolve().parents[1] / "regionprof" / "_options.pyi"
    assert stub.read_text() == _keywords.stub(), (
        "python/regionprof/_options.pyi is stale; regenerate it with the command in its first lines")


@pytest.mark.parametrize("function, table, excluded", [
    (regionprof.profile, "profile", set()),
    (regionprof.analyze, "analyze", set()),
    (regionprof.run, "run", set()),
    (regionprof.torch.profile, "profile", {"regions"}),
    (regionprof.profiler, "steps", set()),
    (regionprof.torch.profiler, "steps", {"regions"}),
])
def test_every_option_is_a_keyword_with_its_default_and_doc(function, table, excluded) -> None:
    parameters = inspect.signature(function).parameters
    doc = (function.__init__ if inspect.isclass(function) else function).__doc__
    entries = [e for e in _native.option_table(table) if e["name"] not in excluded]
    assert entries, table
    for entry in entries:
        parameter = parameters[entry["name"]]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        assert parameter.default == entry["default"]
        assert f"``{entry['name']}`` (" in doc
    assert not [name for name in excluded if name in parameters]
    assert not [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]


def test_defaults_are_the_native_ones() -> None:
    defaults = {e["name"]: e["default"] for e in _native.option_table("profile")}
    assert defaults["warmup_runs"] == 3 and defaults["measured_runs"] == 10
    assert defaults["row_limit"] == 20 and defaults["graph_attribution"] == "capture"
    assert defaults["device_tracing"] is True and defaults["flush_cache"] is False
    assert defaults["regions"] is None and defaults["window_runs"] is None
    assert {e["name"]: e["default"] for e in _native.option_table("run")}["warmup_runs"] == 0


@pytest.mark.parametrize("call, error, message", [
    (lambda: regionprof.profile(lambda: None, measured_run=3), TypeError,
     r"^profile\(\) got an unexpected keyword argument 'measured_run'$"),
    (lambda: regionprof.torch.profile(object(), regions=["a=b"]), TypeError,
     r"^regionprof.torch.profile\(\) got an unexpected keyword argument 'regions'$"),
    (lambda: regionprof.analyze("t.json", skip_runs=1), TypeError,
     r"^analyze\(\) got an unexpected keyword argument 'skip_runs'$"),
    (lambda: regionprof.profile(lambda: None, window_runs="3"), TypeError,
     r"^window_runs must be an int or None, not str \('3'\)$"),
    (lambda: regionprof.profile(lambda: None, measured_runs=None), TypeError,
     r"^measured_runs must be an int, not NoneType \(None\)$"),
    (lambda: regionprof.profile(lambda: None, row_limit=0), ValueError, r"^row_limit must be at least 1, not 0$"),
    (lambda: regionprof.profile(lambda: None, row_limit=10**30), ValueError,
     r"^row_limit must be at most 1000000, not 10{30}$"),
    (lambda: regionprof.profile(lambda: None, max_noise=True), TypeError, r"^max_noise must be a number or None"),
    (lambda: regionprof.profile(lambda: None, device_tracing=None), TypeError, r"^device_tracing must be a bool"),
    (lambda: regionprof.profile(lambda: None, regions=[3]), TypeError,
     r"^regions must be a list of 'REGEX=KIND' strings"),
    (lambda: regionprof.profile(lambda: None, graph_attribution=1), TypeError,
     r"^graph_attribution must be 'capture' or 'launch', not int"),
    (lambda: regionprof.analyze("t.json", run_marker=b"x"), TypeError, r"^run_marker must be a str \(a regex\)"),
    (lambda: regionprof.run(["true"], processes=0), ValueError, r"^processes must be at least 1, not 0$"),
])
def test_checks_name_the_keyword(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call()


def test_run_flags_are_the_commands_own() -> None:
    flags, windows, processes = _native.run_flags(
        {"window_runs": 3, "regions": ["a(.*)=b", "c"], "cross_thread": True, "row_limit": 5, "processes": 2,
         "run_marker": None})
    assert flags == ["--window-runs", "3", "--region", "a(.*)=b", "--region", "c=region", "--cross-thread",
                     "--row-limit", "5", "--processes", "2"]
    assert windows is True and processes == 2
    assert _native.run_flags({"cross_thread": False}) == ([], False, 1)  # a flag left off is no flag
