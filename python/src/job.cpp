// regionprof._native's job API: one NativeJob (the core's job_report) made either by joining rank
// profiles (their JSON texts, as gathered over torch.distributed) with merge_ranks, the join of
// `regionprof merge`, or by reading a saved job report back (read_job_text: the same join again).
#include "job.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "profile_extras.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/saved/profile_reader.hpp"

namespace nb = nanobind;

namespace {

/// Reads each text as the profile named `names[i]` (messages name it) and merges them.
regionprof::job_report merge_profile_texts(const std::vector<std::string>& texts,
                                           const std::vector<std::string>& names) {
  if (texts.size() != names.size()) throw std::invalid_argument("merge_profiles: one name per profile");
  std::vector<regionprof::named_profile> profiles;
  profiles.reserve(texts.size());
  nb::gil_scoped_release unlocked;  // parsing and merging touch no Python object
  for (std::size_t i = 0; i < texts.size(); ++i) {
    profiles.push_back({names[i], regionprof::read_profile_text(texts[i], names[i])});
  }
  return regionprof::merge_ranks(std::move(profiles));
}

/// `format` of the job to `path`, atomically (regionprof/output/output.hpp); output_error is an OSError.
void write_job(const regionprof::job_report& job, regionprof::output_format format, const std::string& path) {
  regionprof::write_output(regionprof::job_writers(job), format, path);
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
          "The job's Chrome trace (one process per rank) as text.")
      .def(
          "write_json",
          [](const regionprof::job_report& job, const std::string& path) {
            write_job(job, regionprof::output_format::json, path);
          },
          nb::arg("path"), "Writes the job report to `path` (atomically); OSError naming it.")
      .def(
          "write_trace",
          [](const regionprof::job_report& job, const std::string& path) {
            write_job(job, regionprof::output_format::chrome_trace, path);
          },
          nb::arg("path"), "Writes the job's Chrome trace to `path` (atomically); OSError naming it.")
      .def(
          "memory_rows",
          [](const regionprof::job_report& job) {
            std::vector<std::pair<std::uint64_t, std::vector<regionprof::python::memory_tuple>>> ranks;
            for (const regionprof::job_rank& rank : job.ranks) {
              ranks.emplace_back(rank.rank, regionprof::python::memory_tuples(rank.profile));
            }
            return ranks;
          },
          "Per rank, in rank order, (rank, NativeProfile.memory_rows() of its profile).");
  m.def("merge_profiles", &merge_profile_texts, nb::arg("texts"), nb::arg("names"),
        "Joins rank profiles (JSON texts; names[i] names texts[i] in messages) into a job report, as "
        "`regionprof merge` does. Raises ValueError for no profile, RuntimeError naming a bad one.");
  m.def(
      "read_saved_text",
      [](const std::string& text, const std::string& name) -> nb::object {
        regionprof::saved_report saved;
        {
          nb::gil_scoped_release unlocked;
          saved = regionprof::read_saved_report_text(text, name);
        }
        if (saved.job) return nb::cast(std::move(*saved.job));
        return nb::cast(std::move(*saved.profile));
      },
      nb::arg("text"), nb::arg("name") = "<memory>",
      "Reads a saved report of either kind from one parse: a NativeJob for a job report (kind "
      "regionprof_job), else a NativeProfile. Raises ProfileReadError (a ValueError) naming the file.");
  m.def(
      "read_job_text",
      [](const std::string& text, const std::string& name) {
        nb::gil_scoped_release unlocked;
        return regionprof::read_job_text(text, name);
      },
      nb::arg("text"), nb::arg("name") = "<memory>",
      "Reads a saved job report (kind regionprof_job) back; `name` stands for the file in messages. "
      "Raises ProfileReadError (a ValueError) naming the file and the key.");
}
