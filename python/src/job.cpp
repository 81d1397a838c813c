// regionprof._native's job API: rank profiles (their JSON text, as gathered over torch.distributed)
// joined into one job report by the core's merge_ranks, the same join as `regionprof merge`.
#include "job.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/job.hpp"
#include "regionprof/profile.hpp"
#include "regionprof/profile_reader.hpp"

namespace nb = nanobind;

namespace {

/// Reads each text as the profile named `names[i]` (messages name it) and merges them.
regionprof::job_report merge_profile_texts(const std::vector<std::string>& texts,
                                           const std::vector<std::string>& names) {
  if (texts.size() != names.size()) throw std::invalid_argument("merge_profiles: one name per profile");
  std::vector<regionprof::named_profile> profiles;
  profiles.reserve(texts.size());
  {
    nb::gil_scoped_release unlocked;  // parsing and merging touch no Python object
    for (std::size_t i = 0; i < texts.size(); ++i) {
      profiles.push_back({names[i], regionprof::read_profile_text(texts[i], names[i])});
    }
    return regionprof::merge_ranks(std::move(profiles));
  }
}

}  // namespace

void define_job_api(nb::module_& m) {
  nb::class_<regionprof::job_report>(m, "NativeJob")
      .def("json", &regionprof::job_to_json, "The job report (kind regionprof_job) as JSON text.")
      .def("markdown", &regionprof::job_to_markdown, "The job's Markdown view, stragglers first.")
      .def(
          "chrome_trace",
          [](const regionprof::job_report& job) {
            std::ostringstream out;
            regionprof::write_job_trace(job, out);
            return out.str();
          },
          "The job's Chrome trace (one process per rank) as text.");
  m.def("merge_profiles", &merge_profile_texts, nb::arg("texts"), nb::arg("names"),
        "Joins rank profiles (JSON texts; names[i] names texts[i] in messages) into a job report, as "
        "`regionprof merge` does. Raises ValueError for no profile, RuntimeError naming a bad one.");
}
