// write_job_trace: the job as a Chrome trace, one process per rank, runs aligned at their starts, written
// by the one Chrome event writer (report/chrome_events.hpp).
#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "regionprof/json/json_text.hpp"
#include "regionprof/report/chrome_events.hpp"
#include "regionprof/report/report.hpp"

namespace regionprof {
namespace {

/// A region or run: the event writer's complete event with `args` {`run`}.
void complete_event(report_detail::chrome_event_writer& events, std::string_view name, const char* cat,
                    std::uint64_t pid, int tid, std::int64_t ts_ns, std::int64_t dur_ns, std::size_t run) {
  events.complete_event(cat, name, false, static_cast<std::int64_t>(pid), tid, ts_ns, std::max<std::int64_t>(dur_ns, 0));
  events.text() += ",\"args\":{\"run\":";
  report_detail::append_uint(events.text(), run);
  events.text() += "}}";
}

void metadata(report_detail::chrome_event_writer& events, const char* what, std::uint64_t pid, int tid,
              std::string_view name) {
  events.metadata_event(what, static_cast<std::int64_t>(pid), tid);
  events.string(name, false);
  events.text() += "}}";
}

}  // namespace

void write_job_trace(const job_report& job, std::ostream& stream) {
  // Run i of every rank starts where the slowest rank's run i - 1 ended (CPU time, the marker's length).
  std::vector<std::int64_t> run_start(job.runs.size() + 1, 0);
  for (std::size_t i = 0; i < job.runs.size(); ++i) run_start[i + 1] = run_start[i] + job.runs[i].cpu.max_ns;

  report_detail::chrome_event_writer events(stream, "regionprof::write_job_trace");
  std::string& out = events.text();
  out += "{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  for (const job_rank& r : job.ranks) {
    std::string label = "rank " + std::to_string(r.rank);
    if (!r.host.empty() || r.pid) {
      label += " (" + r.host + (r.pid ? (r.host.empty() ? "pid " : ", pid ") + std::to_string(*r.pid) : "") + ")";
    }
    metadata(events, "process_name", r.rank, 0, label);
    events.begin_event();
    out += "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":";
    report_detail::append_uint(out, r.rank);
    out += ",\"tid\":0,\"args\":{\"sort_index\":";
    report_detail::append_uint(out, r.rank);
    out += "}}";
    metadata(events, "thread_name", r.rank, 0, "CPU (runs, regions one after another)");
    metadata(events, "thread_name", r.rank, 1, "device (regions' device time one after another)");
  }
  for (const job_rank& r : job.ranks) {
    const analysis_result& result = r.profile.result();
    for (std::size_t i = 0; i < result.runs.size() && i < job.runs.size(); ++i) {
      const run_result& run = result.runs[i];
      const std::int64_t start = run_start[i];
      complete_event(events, "run " + std::to_string(i), "run", r.rank, 0, start, run.cpu_time_ns, i);
      std::int64_t cpu_at = start;
      std::int64_t device_at = start;
      for (const region_aggregate& region : run.regions) {
        const std::string& id = result.regions[region.region].id;
        if (region.cpu_time_ns > 0) {
          complete_event(events, id, "region", r.rank, 0, cpu_at, region.cpu_time_ns, i);
          cpu_at += region.cpu_time_ns;
        }
        if (region.device_time_ns.value_or(0) > 0) {
          complete_event(events, id, "region_device", r.rank, 1, device_at, *region.device_time_ns, i);
          device_at += *region.device_time_ns;
        }
      }
    }
  }
  events.finish();
}

}  // namespace regionprof
