// regionprof._native: the harness, the Kineto import + analysis, the reports and the emit API for
// Python. The Python package (python/regionprof) wraps these; nothing here knows torch.
//
// Invariants:
// - Workloads run with the GIL held (they are Python callables); a Python exception raised in one
//   crosses the harness as nb::python_error and is restored unchanged.
// - Region handles are NVTX registered strings (regionprof_region_register): valid until exit, so a
//   region wrapper (region_wrapper.cpp) can hold one as a plain integer.
// - C++ errors map to Python ones: std::invalid_argument -> ValueError (rules, options),
//   regionprof::import_error -> regionprof.TraceError (a ValueError naming the file).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "job.hpp"
#include "profile_extras.hpp"
#include "py_options.hpp"
#include "region_wrapper.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/run_marker.hpp"
#include "regionprof/capture/capture.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/harness/step_profiler.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/options/profile_options.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "regionprof/session/session.hpp"
#include "regionprof/trace/process_identity.hpp"
#include "regionprof/trace/warnings.hpp"

namespace nb = nanobind;

namespace {

using region_handle = std::uintptr_t;

/// regionprof::record_memory_event with plain types, the shape the memory reporter compiled against the
/// user's torch calls (src/regionprof/torch/memory_reporting.hpp, record_function).
int record_memory(std::int64_t bytes, std::int64_t total_allocated, std::int16_t device, std::uint8_t kind) {
  return regionprof::record_memory_event(bytes, total_allocated, device,
                                         static_cast<regionprof::memory_event_kind>(kind));
}

using memory_event_tuple =
    std::tuple<std::int64_t, std::int64_t, std::optional<std::int64_t>, std::int64_t, std::string, std::string>;

std::vector<memory_event_tuple> memory_events_of(const regionprof::Profile& p) {
  static constexpr const char* kinds[] = {"allocation", "free", "out_of_memory"};
  const regionprof::trace& t = p.source();
  std::vector<memory_event_tuple> events;
  events.reserve(t.memory_events.size());
  for (const regionprof::memory_event& e : t.memory_events) {
    std::optional<std::int64_t> total;
    if (e.total_allocated != regionprof::memory_event::no_total) total = e.total_allocated;
    events.emplace_back(e.time_ns, e.bytes, total, t.threads.at(e.thread).tid, regionprof::memory_device_key(e.device),
                        kinds[static_cast<std::size_t>(e.kind) % 3]);
  }
  return events;
}

/// A member of the caller's dict, or `fallback`.
template <typename T>
T caller_member(const nb::dict& caller, const char* key, T fallback) {
  return caller.contains(key) ? nb::cast<T>(caller[key]) : std::move(fallback);
}

[[noreturn]] void raise_os_error(int error, const std::string& message) {
  // OSError(errno, text) is the errno's subclass (PermissionError, NotADirectoryError, ...).
  PyErr_SetObject(PyExc_OSError, nb::make_tuple(error, message).ptr());
  throw nb::python_error();
}

/// Every output path option set: its first file's directory created and the file checked writable, so a
/// path that cannot be written fails before the first run (ValueError / OSError naming the keyword).
void prepare_outputs(const regionprof::profile_options& options) {
  for (const regionprof::options::option* o : regionprof::options::options_of(regionprof::options::py_profile)) {
    if (o->kind != regionprof::options::option_kind::optional_path) continue;
    const regionprof::options::option_value value = o->get(options);
    const auto* pattern = std::get_if<std::string>(&value);
    if (pattern == nullptr) continue;
    const std::string name(o->python);
    std::string first;
    try {
      regionprof::process_identity identity = regionprof::this_process_identity();
      if (regionprof::writes_windows(options)) identity.window_index = 0;
      first = regionprof::expand_output_path(*pattern, identity);
    } catch (const regionprof::process_identity_error& e) {
      throw nb::value_error((name + ": " + e.what()).c_str());
    }
    std::error_code error;
    const std::filesystem::path path = std::filesystem::absolute(first, error);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
    if (error) raise_os_error(error.value(), name + ": cannot write " + path.string() + ": " + error.message());
    const bool existed = std::filesystem::exists(path, error);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) raise_os_error(errno, name + ": cannot write " + path.string() + ": " + std::strerror(errno));
    ::close(fd);
    if (!existed) ::unlink(path.c_str());
  }
}

/// The trace file `profile` wrote: its window's when it has one.
std::optional<std::string> written_trace(const regionprof::profile_options& options, const regionprof::Profile& profile) {
  if (!options.trace_file) return std::nullopt;
  const std::string path = regionprof::python::output_path_here(*options.trace_file, profile.source().target.window);
  return std::filesystem::absolute(path).lexically_normal().string();
}

/// (code, message) pairs from Python as the capture's warnings; an unknown code is std::invalid_argument.
std::vector<regionprof::warning> caller_warnings(const nb::handle& pairs) {
  std::vector<regionprof::warning> found;
  for (const auto& [code_text, message] : nb::cast<std::vector<std::pair<std::string, std::string>>>(pairs)) {
    const auto code = regionprof::warning_code_from_string(code_text);
    if (!code) throw std::invalid_argument("unknown warning code '" + code_text + "'");
    found.push_back({*code, regionprof::warning_source::nvtx, message});
  }
  return found;
}

/// The caller's `warnings_at_finish()` (returning (code, message) pairs) as profile_options' function of
/// that name: called with the GIL taken (finish runs with it released), never throwing (a Python error is
/// reported as unraisable and adds nothing). The callable is released with the GIL held, whichever thread
/// drops the last copy.
std::function<std::vector<regionprof::warning>()> warnings_at_finish(nb::object callable) {
  const std::shared_ptr<nb::object> held(new nb::object(std::move(callable)), [](nb::object* object) {
    if (Py_IsInitialized() == 0) return;  // at exit: leaked rather than released without an interpreter
    const nb::gil_scoped_acquire locked;
    delete object;
  });
  return [held]() -> std::vector<regionprof::warning> {
    const nb::gil_scoped_acquire locked;
    try {
      return caller_warnings((*held)());
    } catch (nb::python_error& error) {
      error.discard_as_unraisable("regionprof: warnings_at_finish");
    } catch (const std::exception&) {  // a malformed result: nothing to add
    }
    return {};
  };
}

/// The options of a profile from Python: `given`, the user's keyword options (`function`'s option table,
/// checked there); `caller`, what the Python front-end knows of the target: target_type, target_kind,
/// module_types, args_count, kwargs, uses_inference_function, warnings [(code, message)] and
/// warnings_at_finish (a callable returning more of them as each profile finishes). Checked as
/// a session checks them (`who` names the front-end); output paths prepared.
regionprof::profile_options caller_options(std::string_view function, const char* who, nb::dict given, nb::dict caller) {
  regionprof::profile_options options = regionprof::python::options_from_python(function, given, {});
  options.target_type = caller_member<std::string>(caller, "target_type", "callable");
  options.target_kind = caller_member<std::string>(caller, "target_kind", "");
  options.module_types = caller_member<std::map<std::string, std::string>>(caller, "module_types", {});
  options.uses_inference_function = caller_member<bool>(caller, "uses_inference_function", true);
  options.input = {caller_member<std::size_t>(caller, "args_count", 0),
                   caller_member<std::vector<std::string>>(caller, "kwargs", {})};
  if (caller.contains("warnings")) options.warnings = caller_warnings(caller["warnings"]);
  if (caller.contains("warnings_at_finish")) {
    options.warnings_at_finish = warnings_at_finish(caller["warnings_at_finish"]);
  }
  if (function == "profile") regionprof::validate_profile_options(options, who);
  return options;
}

/// regionprof.profile: returns the profile and the trace file it wrote (None without one).
nb::tuple run_profile(nb::callable workload, nb::dict given, nb::dict caller) {
  const regionprof::profile_options options = caller_options("profile", "regionprof.profile", given, caller);
  prepare_outputs(options);
  regionprof::Profile profile = regionprof::profile([&workload] { workload(); }, options);
  std::optional<std::string> trace = written_trace(options, profile);
  return nb::make_tuple(std::move(profile), std::move(trace));
}

/// regionprof.profiler / regionprof.torch.profiler: regionprof::step_profiler over the caller's loop.
/// step() and finish() return (profile, trace file or None) for a cycle they complete, else None.
class py_step_profiler {
 public:
  using schedule_tuple = std::tuple<std::size_t, std::size_t, std::size_t, std::size_t, std::size_t>;

  py_step_profiler(nb::dict given, nb::dict caller, std::optional<schedule_tuple> schedule) {
    options_ = caller_options("steps", "regionprof.profiler", given, caller);
    std::optional<regionprof::step_schedule> steps;
    if (schedule) {
      const auto [wait, warmup, active, repeat, skip_first] = *schedule;
      steps = regionprof::step_schedule{wait, warmup, active, repeat, skip_first};
    }
    prepare_outputs(options_);
    steps_.emplace(options_, steps, "regionprof.profiler");
  }

  std::optional<nb::tuple> step() {
    regionprof::step_profiler& steps = live();
    std::optional<regionprof::Profile> done;
    {
      const nb::gil_scoped_release unlocked;  // a completed cycle is analysed and written here
      done = steps.step();
    }
    return completed(std::move(done));
  }
  std::optional<nb::tuple> finish() {
    regionprof::step_profiler& steps = live();
    std::optional<regionprof::Profile> done;
    {
      const nb::gil_scoped_release unlocked;
      done = steps.finish();
    }
    steps_.reset();
    return completed(std::move(done));
  }
  /// Discards the loop: the step in progress and its cycle are not profiled.
  void close() noexcept { steps_.reset(); }
  std::uint64_t current_step() { return live().current_step(); }

 private:
  regionprof::step_profiler& live() {
    if (!steps_) throw std::logic_error("regionprof.profiler: the loop was finished already");
    return *steps_;
  }
  std::optional<nb::tuple> completed(std::optional<regionprof::Profile> profile) const {
    if (!profile) return std::nullopt;
    std::optional<std::string> trace = written_trace(options_, *profile);
    return nb::make_tuple(std::move(*profile), std::move(trace));
  }

  regionprof::profile_options options_;
  std::optional<regionprof::step_profiler> steps_;
};

/// regionprof.analyze: a torch.profiler (Kineto) trace imported and analysed with `given`, the user's
/// keyword options (the option table's).
regionprof::Profile run_analyze(const std::string& path, nb::dict given) {
  const regionprof::profile_options options =
      regionprof::python::options_from_python("analyze", given, regionprof::options::command_defaults());
  // A file that cannot be opened is an OSError naming it (a file that is no trace: TraceError, below).
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
    raise_os_error(EISDIR, "trace: cannot read " + path + ": " + std::strerror(EISDIR));
  }
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd < 0) {
    const int error = errno;
    raise_os_error(error, "trace: cannot read " + path + ": " + std::strerror(error));
  } else {
    ::close(fd);
  }
  regionprof::trace imported;
  {
    nb::gil_scoped_release unlocked;  // the import reads and parses the file only
    imported = regionprof::import_kineto_trace(path);
  }
  return regionprof::Profile(std::move(imported), options.analysis, regionprof::report_context{});
}

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "regionprof's native core: harness, Kineto import, analysis, reports, NVTX regions";
  // Profiles a program still holds at exit (a module-level `p = profile(...)`) are freed with the
  // interpreter, not leaked: no "leaked instances" lines at exit.
  nb::set_leak_warnings(false);

  // A file regionprof could not write is an OSError (the errno's subclass: FileNotFoundError for a
  // missing directory, IsADirectoryError, PermissionError, ...) whose message names the path.
  nb::register_exception_translator([](const std::exception_ptr& thrown, void*) {
    try {
      std::rethrow_exception(thrown);
    } catch (const regionprof::output_error& e) {
      if (e.error_number() == 0) {
        PyErr_SetString(PyExc_OSError, e.what());
      } else {
        PyErr_SetObject(PyExc_OSError, nb::make_tuple(e.error_number(), e.what()).ptr());
      }
    }
  });
  nb::exception<regionprof::import_error>(m, "TraceError", PyExc_ValueError);
  nb::exception<regionprof::profile_read_error>(m, "ProfileReadError", PyExc_ValueError);

  nb::class_<regionprof::Profile>(m, "NativeProfile")
      .def("json", [](const regionprof::Profile& p) { return regionprof::to_json(p); },
           "The JSON report (docs/report-schema.md) as text.")
      .def(
          "markdown",
          [](const regionprof::Profile& p, std::optional<std::size_t> runs_detail) {
            return regionprof::to_markdown(p, regionprof::markdown_options{.runs_detail = runs_detail});
          },
          nb::arg("runs_detail") = nb::none(),
          "The Markdown report; runs_detail: how many runs get a detailed table (default: all up to 5).")
      .def("html", [](const regionprof::Profile& p) { return regionprof::to_html(p); },
           "The HTML report (one self-contained page) as text.")
      .def(
          "html_fragment",
          [](const regionprof::Profile& p, const std::string& id) { return regionprof::to_html_fragment(p, id); },
          nb::arg("id"), "The HTML report as a fragment scoped to one <div id=id> (a notebook output).")
      .def("chrome_trace", [](const regionprof::Profile& p) { return regionprof::to_chrome_trace(p); },
           "The Chrome trace as text.")
      .def("write_json", [](const regionprof::Profile& p, const std::string& path) { regionprof::write_json(p, path); },
           nb::arg("path"))
      .def("write_trace", [](const regionprof::Profile& p, const std::string& path) { regionprof::write_trace(p, path); },
           nb::arg("path"))
      .def("memory_events", &memory_events_of,
           "The trace's memory events (docs/design.md, rule 21), in trace order: (time_ns, bytes, total_allocated "
           "or None, thread id, device key 'cpu' or 'cuda:N', kind 'allocation', 'free' or 'out_of_memory').")
      .def("memory_rows", &regionprof::python::memory_tuples,
           "The memory table (docs/design.md, rule 21): (run_index, owner, device, allocated_bytes, freed_bytes, "
           "allocations, frees, peak_allocated_bytes or None) per run, owner (regions in run order, (residual), "
           "(run total)) and device.");

  m.def("profile", &run_profile, nb::arg("workload"), nb::arg("options"), nb::arg("caller"),
        "regionprof::profile over a Python callable (called with no arguments, GIL held) with the keyword "
        "options `options` (option_table('profile')); returns (profile, the trace file written or None). "
        "With windows, every window's profile is written and the last one returned.");
  nb::class_<py_step_profiler>(m, "StepProfiler")
      .def(nb::init<nb::dict, nb::dict, std::optional<py_step_profiler::schedule_tuple>>(), nb::arg("options"),
           nb::arg("caller"), nb::arg("schedule").none(),
           "regionprof::step_profiler with the keyword options `options` (option_table('steps')) and the schedule "
           "(wait, warmup, active, repeat, skip_first) or None (every step a run). Step 0 begins now.")
      .def("step", &py_step_profiler::step,
           "Ends the step, begins the next; (profile, trace file or None) of the cycle it completed, else None.")
      .def("finish", &py_step_profiler::finish,
           "Ends the loop; (profile, trace file or None) of the cycle in progress if it has runs, else None.")
      .def("close", &py_step_profiler::close, "Discards the loop and the cycle in progress.")
      .def_prop_ro("current_step", &py_step_profiler::current_step);
  m.def("analyze", &run_analyze, nb::arg("path"), nb::arg("options"),
        "Imports a torch.profiler (Kineto) trace and analyses it with the keyword options `options` "
        "(option_table('analyze')).");
  // Loading a saved JSON report into the one result model (regionprof/saved/profile_reader.hpp): the profile
  // writes the JSON, Markdown and HTML its analysis wrote. profile_read_error is a ValueError.
  m.def("read_profile", &regionprof::read_profile, nb::arg("path"), "Reads a saved JSON report (a file).");
  m.def("read_profile_text",
        [](const std::string& text, const std::string& name) { return regionprof::read_profile_text(text, name); },
        nb::arg("text"), nb::arg("name") = "<memory>",
        "Reads a saved JSON report from its text; `name` stands for the file in messages.");
  m.def("parse_region_arg",
        [](const std::string& arg) {
          const regionprof::name_rule rule = regionprof::parse_region_arg(arg);
          return std::make_pair(rule.pattern, rule.kind);
        },
        nb::arg("arg"), "Validates a REGEX[=KIND] rule; returns (regex, kind). Raises ValueError.");

  m.def("register_region",
        [](const std::string& kind, const std::string& name) {
          return reinterpret_cast<region_handle>(regionprof_region_register(kind.c_str(), name.c_str()));
        },
        nb::arg("kind"), nb::arg("name"), "Registers the range `<kind>:<name>` once; returns its handle.");
  m.def("push", [](region_handle handle) {
    regionprof_region_push(reinterpret_cast<regionprof_region_handle>(handle));
  }, nb::arg("handle"));
  m.def("pop", [] { regionprof_region_pop(); });
  m.def("start", [](region_handle handle) {
    return regionprof_region_start(reinterpret_cast<regionprof_region_handle>(handle));
  }, nb::arg("handle"), "Starts a registered region that may end on another thread or out of order; returns its id.");
  m.def("end", [](unsigned long long id) { regionprof_region_end(id); }, nb::arg("id"),
        "Ends a region started by start() (0 is ignored).");
  m.def("declare_work",
        [](std::optional<std::uint64_t> bytes, std::optional<std::uint64_t> flops, std::optional<std::uint64_t> items) {
          regionprof::declare_work({bytes, flops, items});
        },
        nb::arg("bytes").none(), nb::arg("flops").none(), nb::arg("items").none(),
        "Declares work for the innermost regionprof range open on this thread (docs/design.md, rule 18).");
  m.def("op_range_functions",
        [] {
          return std::make_pair(reinterpret_cast<std::uintptr_t>(&regionprof::push_default_range),
                                reinterpret_cast<std::uintptr_t>(&regionprof::pop_default_range));
        },
        "Addresses of the capture's default-domain push (int(const char*)) and pop (int()), for the op-range "
        "callback compiled against the user's torch (src/regionprof/torch/op_ranges_extension.cpp).");
  m.def("memory_event_function",
        [] { return reinterpret_cast<std::uintptr_t>(&record_memory); },
        "Address of the capture's memory-event entry point with plain types (int(int64 bytes, int64 total, "
        "int16 device, uint8 kind)), for the memory reporter compiled against the user's torch "
        "(src/regionprof/torch/memory_reporting.hpp).");
  if (!regionprof::python::add_region_wrapper(m.ptr())) throw nb::python_error();
  regionprof::python::add_profile_extras(m);
  regionprof::python::add_options_api(m);

  m.attr("__version__") = REGIONPROF_VERSION;  // CMakeLists.txt's project(VERSION), as in every report
  define_job_api(m);
}
