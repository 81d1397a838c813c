// Invariants: a view holds only what the writers need (rebuilt once at load); the file's JSON text
// itself stays with the Python Profile, so `.data` is the document exactly as saved.
#include "saved_views.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/job.hpp"
#include "regionprof/profile_reader.hpp"
#include "regionprof/report.hpp"
#include "regionprof/saved_report.hpp"

namespace nb = nanobind;

namespace regionprof::python {
namespace {

struct saved_profile_view {
  regionprof::saved_report_input input;
};

struct saved_job_view {
  regionprof::job_report job;
};

}  // namespace

void add_saved_views(nb::module_& m) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const regionprof::profile_read_error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  nb::class_<saved_profile_view>(m, "SavedProfile")
      .def(
          "markdown",
          [](const saved_profile_view& v, std::optional<std::size_t> runs_detail) {
            const auto& in = v.input;
            return regionprof::to_markdown(in.result, in.source, in.options, in.context,
                                           regionprof::markdown_options{.runs_detail = runs_detail});
          },
          nb::arg("runs_detail") = nb::none())
      .def("html", [](const saved_profile_view& v) {
        const auto& in = v.input;
        return regionprof::to_html(in.result, in.source, in.options, in.context);
      });
  m.def(
      "load_profile",
      [](const std::string& path) {
        regionprof::saved_profile saved;
        {
          nb::gil_scoped_release unlocked;
          saved = regionprof::read_profile(path);
        }
        return saved_profile_view{regionprof::to_report_input(saved)};
      },
      nb::arg("path"), "Reads a saved JSON report (regionprof's or the reference module's).");

  nb::class_<saved_job_view>(m, "SavedJob")
      .def("markdown", [](const saved_job_view& v) { return regionprof::job_to_markdown(v.job); })
      .def("json", [](const saved_job_view& v) { return regionprof::job_to_json(v.job); });
  m.def(
      "load_job",
      [](const std::vector<std::pair<std::string, std::string>>& ranks) {
        std::vector<regionprof::saved_profile> profiles;
        profiles.reserve(ranks.size());
        for (const auto& [name, text] : ranks) profiles.push_back(regionprof::read_profile_text(text, name));
        return saved_job_view{regionprof::merge_ranks(std::move(profiles))};
      },
      nb::arg("ranks"), "Joins the rank profiles (name, JSON text) of a saved job report again.");
}

}  // namespace regionprof::python
