// Invariant: the job is joined once, at load, from the rank profiles as saved; the file's JSON text
// itself stays with the Python Profile, so `.data` is the document exactly as saved.
#include "saved_views.hpp"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "regionprof/job.hpp"
#include "regionprof/profile.hpp"
#include "regionprof/profile_reader.hpp"

namespace nb = nanobind;

namespace regionprof::python {
namespace {

struct saved_job_view {
  regionprof::job_report job;
};

}  // namespace

void add_saved_views(nb::module_& m) {
  nb::class_<saved_job_view>(m, "SavedJob")
      .def("markdown", [](const saved_job_view& v) { return regionprof::job_to_markdown(v.job); })
      .def("json", [](const saved_job_view& v) { return regionprof::job_to_json(v.job); });
  m.def(
      "load_job",
      [](const std::vector<std::pair<std::string, std::string>>& ranks) {
        std::vector<regionprof::named_profile> profiles;
        profiles.reserve(ranks.size());
        for (const auto& [name, text] : ranks) {
          profiles.push_back({name, regionprof::read_profile_text(text, name).without_events()});
        }
        return saved_job_view{regionprof::merge_ranks(std::move(profiles))};
      },
      nb::arg("ranks"), "Joins the rank profiles (name, JSON text) of a saved job report again.");
}

}  // namespace regionprof::python
