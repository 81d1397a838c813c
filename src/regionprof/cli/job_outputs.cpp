#include "regionprof/cli/job_outputs.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

#include "regionprof/import/import.hpp"
#include "regionprof/model/profile.hpp"

namespace regionprof::cli {
std::vector<named_profile> analyze_traces(const std::vector<std::string>& paths, const analysis_options& analysis) {
  std::vector<std::optional<named_profile>> profiles(paths.size());
  std::vector<std::exception_ptr> failures(paths.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) {
      try {
        profiles[i].emplace(named_profile{
            paths[i], Profile::analyzed_without_events(import_kineto_trace(paths[i]), analysis)});
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
