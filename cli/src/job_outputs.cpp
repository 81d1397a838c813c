#include "job_outputs.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <thread>

#include "regionprof/import.hpp"
#include "regionprof/profile.hpp"

namespace regionprof::cli {
namespace {

template <typename write_function>
void write_file(const std::string& path, const char* what, write_function&& write_it) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write the " + std::string(what) + " to '" + path + "'");
  write_it(file);
  file.flush();
  if (!file) throw std::runtime_error("cannot write the " + std::string(what) + " to '" + path + "'");
}

}  // namespace

void write_job_outputs(const job_report& job, const report_settings& settings, std::ostream& out) {
  if (settings.json_path) {
    write_file(*settings.json_path, "job report", [&](std::ostream& file) { file << job_to_json(job); });
  }
  if (settings.markdown_path) {
    write_file(*settings.markdown_path, "job Markdown report", [&](std::ostream& file) { file << job_to_markdown(job); });
  }
  if (settings.trace_path) {
    write_file(*settings.trace_path, "job trace", [&](std::ostream& file) { write_job_trace(job, file); });
  }
  if (!settings.json_path) {
    out << job_to_markdown(job);
    out.flush();
    if (!out) throw std::runtime_error("cannot write the Markdown report to standard output");
  }
}

std::vector<named_profile> analyze_traces(const std::vector<std::string>& paths, const report_settings& settings) {
  std::vector<std::optional<named_profile>> profiles(paths.size());
  std::vector<std::exception_ptr> failures(paths.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      try {
        Profile profile(import_kineto_trace(paths[i]), settings.analysis, report_context{});
        profiles[i].emplace(named_profile{paths[i], std::move(profile).without_events()});
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads =
      std::min<std::size_t>(paths.size(), std::max<std::size_t>(1, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  std::vector<named_profile> out;
  out.reserve(profiles.size());
  for (std::optional<named_profile>& profile : profiles) out.push_back(std::move(*profile));
  return out;
}

}  // namespace regionprof::cli
