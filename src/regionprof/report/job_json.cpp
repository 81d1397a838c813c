// job_to_json: the job report document (docs/report-schema.md, "Job report"). Each rank's profile is
// written by the JSON report's writer, nested at its depth, so the text is that of the profile's own file.
#include <string>

#include <boost/json.hpp>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/json_report.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/report/report_common.hpp"

namespace regionprof {
namespace {

namespace json = boost::json;

/// {"median", "min", "max", "slowest_rank", "imbalance" (when the median is above 0), "ranks"}, in us.
json::object figure_object(const cross_rank_figure& f) {
  json::object o;
  o["median"] = f.median_ns / 1000.0;
  o["min"] = static_cast<double>(f.min_ns) / 1000.0;
  o["max"] = static_cast<double>(f.max_ns) / 1000.0;
  o["slowest_rank"] = f.slowest_rank;
  if (f.imbalance) o["imbalance"] = *f.imbalance;
  o["ranks"] = f.ranks;
  return o;
}

json::object run_object(const cross_rank_run& run) {
  json::object timing;
  timing["wall_time_us"] = figure_object(run.wall);
  timing["cpu_time_us"] = figure_object(run.cpu);
  if (run.device) timing["device_time_us"] = figure_object(*run.device);
  if (run.device_busy) timing["device_busy_us"] = figure_object(*run.device_busy);
  if (run.device_span) timing["device_span_us"] = figure_object(*run.device_span);
  json::array regions;
  for (const cross_rank_region& r : run.regions) {
    json::object entry;
    entry["region_id"] = r.region_id;
    entry["cpu_time_us"] = figure_object(r.cpu);
    if (r.device) entry["device_time_us"] = figure_object(*r.device);
    regions.push_back(std::move(entry));
  }
  json::object o;
  o["run_index"] = run.run_index;
  o["ranks"] = run.cpu.ranks;
  o["timing"] = std::move(timing);
  o["regions"] = std::move(regions);
  return o;
}

void member(std::string& out, const char* key, int depth) {
  out += '\n';
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  report_detail::append_json_string(out, key);
  out += ": ";
}

}  // namespace

std::string job_to_json(const job_report& job) {
  std::string out = "{";
  member(out, "kind", 1);
  out += "\"regionprof_job\",";
  member(out, "schema_version", 1);
  out += "1,";
  member(out, "created_at", 1);
  report_context when;
  when.created_at = job.created_at;
  report_detail::append_json_string(out, report_detail::created_at(when));
  out += ',';
  member(out, "tool", 1);
  json::object tool;
  tool["name"] = "regionprof";
  tool["version"] = std::string(report_detail::tool_version());
  report_detail::append_json(out, tool, 2, 1);
  out += ',';
  member(out, "rank_count", 1);
  report_detail::append_uint(out, job.ranks.size());
  out += ',';
  member(out, "ranks", 1);
  out += '[';
  for (std::size_t i = 0; i < job.ranks.size(); ++i) {
    const job_rank& r = job.ranks[i];
    out += i == 0 ? "\n    {" : ",\n    {";
    member(out, "rank", 3);
    report_detail::append_uint(out, r.rank);
    out += ',';
    member(out, "host", 3);
    report_detail::append_json_string(out, r.host);
    out += ',';
    if (r.pid) {
      member(out, "pid", 3);
      report_detail::append_int(out, *r.pid);
      out += ',';
    }
    member(out, "file", 3);
    report_detail::append_json_string(out, r.file);
    out += ',';
    member(out, "profile", 3);
    const Profile& p = r.profile;
    report_detail::write_json_report(out, nullptr, p.result(), p.source(), p.options(), p.context(), 3);
    out += "\n    }";
  }
  out += job.ranks.empty() ? "]," : "\n  ],";
  member(out, "cross_rank", 1);
  json::array runs;
  for (const cross_rank_run& run : job.runs) runs.push_back(run_object(run));
  json::object cross;
  cross["runs"] = std::move(runs);
  report_detail::append_json(out, cross, 2, 1);
  out += ',';
  member(out, "warnings", 1);
  json::array warnings;
  for (const warning& w : job.warnings) warnings.push_back(report_detail::warning_object(w));
  report_detail::append_json(out, warnings, 2, 1);
  out += "\n}\n";
  return out;
}

}  // namespace regionprof
