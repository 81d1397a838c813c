// The seam between the output set and the writers: how a Profile, a job report and a diff render in
// each format. The one file to adapt when a writer's signature changes.
#include <ostream>
#include <string>

#include "regionprof/output/output.hpp"
#include "regionprof/report/json_report.hpp"
#include "regionprof/report/markdown_report.hpp"

namespace regionprof {

// Streamed to the file: neither the report's text nor a DOM of it is held whole (HTML excepted).
output_writers profile_writers(const Profile& profile, const markdown_options& markdown) {
  output_writers writers;
  writers.json = [&profile](std::ostream& out) {
    std::string buffer;
    report_detail::write_json_report(buffer, &out, profile.result(), profile.source(), profile.options(),
                                     profile.context());
    out << '\n';
  };
  writers.markdown = [&profile, markdown](std::ostream& out) {
    std::string buffer;
    report_detail::write_markdown_report(buffer, &out, profile.result(), profile.source(), profile.options(),
                                         profile.context(), markdown);
  };
  writers.html = [&profile](std::ostream& out) {
    out << to_html(profile);
  };
  writers.chrome_trace = [&profile](std::ostream& out) { write_chrome_trace(profile.source(), out); };
  return writers;
}

output_writers job_writers(const job_report& job) {
  output_writers writers;
  writers.noun = "job report";
  writers.json = [&job](std::ostream& out) { out << job_to_json(job); };
  writers.markdown = [&job](std::ostream& out) { out << job_to_markdown(job); };
  writers.chrome_trace = [&job](std::ostream& out) { write_job_trace(job, out); };
  return writers;
}

output_writers diff_writers(const profile_diff& diff) {
  output_writers writers;
  writers.noun = "diff";
  writers.json = [&diff](std::ostream& out) { out << to_json(diff); };
  writers.markdown = [&diff](std::ostream& out) { out << to_markdown(diff); };
  writers.html = [&diff](std::ostream& out) { out << to_html(diff); };
  return writers;
}

void write_json(const Profile& profile, const std::string& path) {
  write_output(profile_writers(profile, {}), output_format::json, path);
}

void write_markdown(const Profile& profile, const std::string& path, const markdown_options& markdown) {
  write_output(profile_writers(profile, markdown), output_format::markdown, path);
}

void write_trace(const Profile& profile, const std::string& path) {
  write_output(profile_writers(profile, {}), output_format::chrome_trace, path);
}

}  // namespace regionprof
