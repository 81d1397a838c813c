// regionprof::profile: the in-process harness, a session of timed runs (session/session.hpp).
#include "regionprof/harness/harness.hpp"

#include <stdexcept>
#include <utility>

#include "regionprof/session/session.hpp"

namespace regionprof {

Profile profile(const std::function<void()>& workload, const profile_options& options) {
  if (!workload) throw std::invalid_argument("regionprof::profile: the workload is empty");
  if (options.analysis.skip_runs != 0) {
    throw std::invalid_argument(
        "regionprof::profile: analysis.skip_runs is the harness's own (its internal warm-up run); "
        "leave it 0 and set warmup_runs instead");
  }
  run_target target;
  target.type = options.target_type;
  session_setup setup;
  setup.who = "regionprof::profile";
  session s(options, std::move(target), std::move(setup));
  for (std::size_t i = 0; i < options.warmup_runs; ++i) workload();
  s.start();
  do {
    s.timed_run(workload);  // the first is the internal warm-up run
  } while (!s.timed_runs_done());
  return *s.finish();
}

}  // namespace regionprof
