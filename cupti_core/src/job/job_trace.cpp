// write_job_trace: the job as a Chrome trace, one process per rank, runs aligned at their starts.
#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "regionprof/job.hpp"
#include "json/json_text.hpp"

namespace regionprof {
namespace {

/// Events are separated by ",\n": `first` is true until one was written.
void separate(std::string& out, bool& first) {
  if (!first) out += ",\n";
  first = false;
}

void complete_event(std::string& out, bool& first, std::string_view name, const char* cat, std::uint64_t pid, int tid,
                    std::int64_t ts_ns, std::int64_t dur_ns, std::size_t run) {
  separate(out, first);
  out += "{\"ph\": \"X\", \"cat\": \"";
  out += cat;
  out += "\", \"name\": ";
  report_detail::append_json_string(out, name);
  out += ", \"pid\": ";
  report_detail::append_uint(out, pid);
  out += ", \"tid\": ";
  report_detail::append_int(out, tid);
  out += ", \"ts\": ";
  report_detail::append_us(out, ts_ns);
  out += ", \"dur\": ";
  report_detail::append_us(out, std::max<std::int64_t>(dur_ns, 0));
  out += ", \"args\": {\"run\": ";
  report_detail::append_uint(out, run);
  out += "}}";
}

void metadata(std::string& out, bool& first, const char* what, std::uint64_t pid, int tid, std::string_view name) {
  separate(out, first);
  out += "{\"ph\": \"M\", \"name\": \"";
  out += what;
  out += "\", \"pid\": ";
  report_detail::append_uint(out, pid);
  out += ", \"tid\": ";
  report_detail::append_int(out, tid);
  out += ", \"args\": {\"name\": ";
  report_detail::append_json_string(out, name);
  out += "}}";
}

}  // namespace

void write_job_trace(const job_report& job, std::ostream& stream) {
  // Run i of every rank starts where the slowest rank's run i - 1 ended (CPU time, the marker's length).
  std::vector<std::int64_t> run_start(job.runs.size() + 1, 0);
  for (std::size_t i = 0; i < job.runs.size(); ++i) run_start[i + 1] = run_start[i] + job.runs[i].cpu.max_ns;

  std::string out = "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  for (const job_rank& r : job.ranks) {
    std::string label = "rank " + std::to_string(r.rank);
    if (!r.host.empty() || r.pid) {
      label += " (" + r.host + (r.pid ? (r.host.empty() ? "pid " : ", pid ") + std::to_string(*r.pid) : "") + ")";
    }
    metadata(out, first, "process_name", r.rank, 0, label);
    separate(out, first);
    out += "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": ";
    report_detail::append_uint(out, r.rank);
    out += ", \"tid\": 0, \"args\": {\"sort_index\": ";
    report_detail::append_uint(out, r.rank);
    out += "}}";
    metadata(out, first, "thread_name", r.rank, 0, "CPU (runs, regions one after another)");
    metadata(out, first, "thread_name", r.rank, 1, "device (regions' device time one after another)");
  }
  for (const job_rank& r : job.ranks) {
    for (std::size_t i = 0; i < r.profile.runs.size() && i < job.runs.size(); ++i) {
      const saved_run& run = r.profile.runs[i];
      const std::int64_t start = run_start[i];
      complete_event(out, first, "run " + std::to_string(i), "run", r.rank, 0, start, run.cpu_ns, i);
      std::int64_t cpu_at = start;
      std::int64_t device_at = start;
      for (const saved_region_time& region : run.regions) {
        if (region.cpu_ns > 0) {
          complete_event(out, first, region.region_id, "region", r.rank, 0, cpu_at, region.cpu_ns, i);
          cpu_at += region.cpu_ns;
        }
        if (region.device_ns.value_or(0) > 0) {
          complete_event(out, first, region.region_id, "region_device", r.rank, 1, device_at, *region.device_ns, i);
          device_at += *region.device_ns;
        }
      }
      if (out.size() > (1u << 20)) {
        stream.write(out.data(), static_cast<std::streamsize>(out.size()));
        out.clear();
      }
    }
  }
  out += "\n]}\n";
  stream.write(out.data(), static_cast<std::streamsize>(out.size()));
  if (!stream) throw std::runtime_error("cannot write the job trace");
}

}  // namespace regionprof
