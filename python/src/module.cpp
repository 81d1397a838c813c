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
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "job.hpp"
#include "profile_extras.hpp"
#include "region_wrapper.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/run_marker.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/options/profile_options.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "regionprof/trace/warnings.hpp"

namespace nb = nanobind;

namespace {

using region_handle = std::uintptr_t;

/// Region rules from their CLI form; nullopt keeps `fallback`.
std::vector<regionprof::name_rule> region_rules(const std::optional<std::vector<std::string>>& regions,
                                                std::vector<regionprof::name_rule> fallback) {
  if (!regions) return fallback;
  std::vector<regionprof::name_rule> rules;
  rules.reserve(regions->size());
  for (const std::string& arg : *regions) rules.push_back(regionprof::parse_region_arg(arg));
  return rules;
}

/// `graph_attribution=` ("capture" or "launch"): docs/design.md, rule 15.
regionprof::graph_attribution graph_attribution_arg(const std::string& text) {
  const std::optional<regionprof::graph_attribution> mode = regionprof::parse_graph_attribution(text);
  if (!mode) throw std::invalid_argument("graph_attribution must be 'capture' or 'launch', not '" + text + "'");
  return *mode;
}

regionprof::Profile run_profile(nb::callable workload, std::size_t warmup_runs, std::size_t measured_runs,
                                std::optional<std::string> trace_file,
                                std::optional<std::vector<std::string>> regions, bool cross_thread,
                                std::size_t row_limit, bool device_tracing, std::string target_type,
                                std::map<std::string, std::string> module_types, std::size_t args_count,
                                std::vector<std::string> kwargs, bool uses_inference_function,
                                const std::string& graph_attribution, std::optional<double> max_noise,
                                std::optional<std::size_t> min_runs, std::optional<std::size_t> max_runs,
                                std::optional<double> min_time_s, std::optional<double> max_time_s,
                                bool flush_cache, std::optional<std::size_t> window_runs,
                                std::optional<std::string> window_output, std::string target_kind,
                                const std::vector<std::pair<std::string, std::string>>& warnings) {
  regionprof::profile_options options;
  options.warmup_runs = warmup_runs;
  options.measured_runs = measured_runs;
  options.trace_file = std::move(trace_file);
  options.analysis.region_rules = region_rules(regions, regionprof::in_process_region_rules());
  options.analysis.cross_thread = cross_thread;
  options.analysis.row_limit = row_limit;
  options.analysis.graph_attribution = graph_attribution_arg(graph_attribution);
  options.device_tracing = device_tracing;
  options.target_type = std::move(target_type);
  options.module_types = std::move(module_types);
  options.uses_inference_function = uses_inference_function;
  options.input = {args_count, std::move(kwargs)};
  options.stopping = {max_noise, min_runs, max_runs, min_time_s, max_time_s};  // docs/design.md, rule 16
  options.flush_cache = flush_cache;
  options.window_runs = window_runs;
  options.window_output = std::move(window_output);
  options.target_kind = std::move(target_kind);
  for (const auto& [code_text, message] : warnings) {
    const auto code = regionprof::warning_code_from_string(code_text);
    if (!code) throw std::invalid_argument("unknown warning code '" + code_text + "'");
    options.warnings.push_back({*code, regionprof::warning_source::nvtx, message});
  }
  return regionprof::profile([&workload] { workload(); }, options);
}

regionprof::Profile run_analyze(const std::string& path, std::optional<std::string> run_marker,
                                std::optional<std::vector<std::string>> regions, bool cross_thread,
                                std::size_t row_limit, std::size_t skip_runs,
                                const std::string& graph_attribution) {
  regionprof::analysis_options options;
  options.skip_runs = skip_runs;
  options.run_marker = run_marker ? regionprof::run_marker_rule(*run_marker) : regionprof::default_run_marker();
  options.region_rules = region_rules(regions, regionprof::default_region_rules());
  options.cross_thread = cross_thread;
  options.row_limit = row_limit;
  options.graph_attribution = graph_attribution_arg(graph_attribution);
  regionprof::trace imported;
  {
    nb::gil_scoped_release unlocked;  // the import reads and parses the file only
    imported = regionprof::import_kineto_trace(path);
  }
  return regionprof::Profile(std::move(imported), std::move(options), regionprof::report_context{});
}

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "regionprof's native core: harness, Kineto import, analysis, reports, NVTX regions";
  // Profiles a program still holds at exit (a module-level `p = profile(...)`) are freed with the
  // interpreter, not leaked: no "leaked instances" lines at exit.
  nb::set_leak_warnings(false);

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
      .def("chrome_trace", [](const regionprof::Profile& p) { return regionprof::to_chrome_trace(p); },
           "The Chrome trace as text.")
      .def("write_json", [](const regionprof::Profile& p, const std::string& path) { regionprof::write_json(p, path); },
           nb::arg("path"))
      .def("write_trace", [](const regionprof::Profile& p, const std::string& path) { regionprof::write_trace(p, path); },
           nb::arg("path"));

  m.def("profile", &run_profile, nb::arg("workload"), nb::arg("warmup_runs"), nb::arg("measured_runs"),
        nb::arg("trace_file").none(), nb::arg("regions").none(), nb::arg("cross_thread"), nb::arg("row_limit"),
        nb::arg("device_tracing"), nb::arg("target_type"), nb::arg("module_types"), nb::arg("args_count"),
        nb::arg("kwargs"), nb::arg("uses_inference_function"), nb::arg("graph_attribution"),
        nb::arg("max_noise").none() = nb::none(), nb::arg("min_runs").none() = nb::none(),
        nb::arg("max_runs").none() = nb::none(), nb::arg("min_time_s").none() = nb::none(),
        nb::arg("max_time_s").none() = nb::none(), nb::arg("flush_cache") = false,
        nb::arg("window_runs").none() = nb::none(), nb::arg("window_output").none() = nb::none(),
        nb::arg("target_kind") = "", nb::arg("warnings") = std::vector<std::pair<std::string, std::string>>{},
        "regionprof::profile over a Python callable (called with no arguments, GIL held); with window_runs, "
        "every window's profile is written to window_output (%w) and the last one returned; target_kind "
        "and (code, message) warnings go into the report (every window's).");
  m.def("analyze", &run_analyze, nb::arg("path"), nb::arg("run_marker").none(), nb::arg("regions").none(),
        nb::arg("cross_thread"), nb::arg("row_limit"), nb::arg("skip_runs") = 0, nb::arg("graph_attribution") = "capture",
        "Imports a torch.profiler (Kineto) trace and analyses it (skip_runs: warm-up runs left out).");
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
  m.def("declare_work",
        [](std::optional<std::uint64_t> bytes, std::optional<std::uint64_t> flops, std::optional<std::uint64_t> items) {
          regionprof::declare_work({bytes, flops, items});
        },
        nb::arg("bytes").none(), nb::arg("flops").none(), nb::arg("items").none(),
        "Declares work for the innermost regionprof range open on this thread (docs/design.md, rule 18).");
  if (!regionprof::python::add_region_wrapper(m.ptr())) throw nb::python_error();
  regionprof::python::add_profile_extras(m);

  m.attr("__version__") = REGIONPROF_VERSION;  // CMakeLists.txt's project(VERSION), as in every report
  define_job_api(m);
}
