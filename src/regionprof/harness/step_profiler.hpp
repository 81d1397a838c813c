// A profiler around the caller's own loop (a training loop, a serving loop): each step the schedule
// records is a timed run of one session, each cycle of the schedule one profile. The same steps as
// torch.profiler.profile(schedule=...) with prof.step(); the runs are the harness's timed runs
// (session/session.hpp), so the reports read as the harness's do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "regionprof/model/profile.hpp"
#include "regionprof/options/profile_options.hpp"

namespace regionprof {

class session;

/// Which steps are recorded: torch.profiler.schedule's meaning. Steps are numbered from 0 (the first
/// step begins when the profiler is made). The first `skip_first` steps are not recorded; then each
/// cycle is `wait` steps not recorded, `warmup` steps, `active` recorded steps; `repeat` cycles, or
/// cycles until the loop ends when 0. Unlike torch.profiler.schedule, `repeat` defaults to one cycle.
struct step_schedule {
  std::size_t wait = 0;
  std::size_t warmup = 0;
  std::size_t active = 1;
  std::size_t repeat = 1;
  std::size_t skip_first = 0;
};

/// What the schedule does with a step (torch.profiler.ProfilerAction's values).
enum class step_action : std::uint8_t {
  none = 0,             ///< not recorded
  warmup = 1,           ///< a warm-up step: the last one of a cycle is the session's warm-up run, recorded and discarded
  record = 2,           ///< a run
  record_and_save = 3,  ///< a run, the cycle's last: its profile is made when the step ends
};

/// The action of step `step` under `schedule`.
///
/// ```
/// regionprof::action_of({.wait = 1, .warmup = 1, .active = 2}, 3);  // step_action::record_and_save
/// ```
step_action action_of(const step_schedule& schedule, std::uint64_t step) noexcept;

/// Checks a schedule: active at least 1. Throws std::invalid_argument `<who>: ...`.
void validate_step_schedule(const step_schedule& schedule, std::string_view who);

/// Profiles the caller's loop, each step a run. Made before the loop (step 0 begins), step() after each
/// step's work, finish() after the loop (or the destructor: the step in progress and its cycle are
/// discarded then). Without a schedule every step is a run and finish() makes the one profile; with
/// one, each cycle's active steps are the runs of one profile, made when its last active step ends
/// (step() returns it). Work after the last step() (the step in progress at finish()) is not a run; a
/// cycle cut short by finish() is a profile of the runs it had. Steps must be ended on the thread that
/// began them (the run marker is a per-thread NVTX range).
///
/// With several cycles possible (`repeat` other than 1), each cycle is a window (report `target.window`
/// the cycle's index, `%w` in output paths, which every output path then needs). A cycle's warm-up
/// steps run unrecorded but for the last one, the session's internal warm-up run. `options`: the
/// harness's, but for measured_runs and warmup_runs (the schedule says), window_runs and stopping on
/// noise (refused); window_output, when set, is each cycle's JSON profile (json_output).
///
/// ```
/// regionprof::step_profiler steps(options, regionprof::step_schedule{.wait = 1, .warmup = 1, .active = 3});
/// for (auto& batch : loader) {
///   train_step(batch);
///   if (auto cycle = steps.step()) std::cout << regionprof::to_markdown(*cycle);
/// }
/// steps.finish();
/// ```
class step_profiler {
 public:
  /// Throws std::invalid_argument (`<who>: ...`) for options or a schedule that cannot be used, and
  /// std::logic_error when another capture session is active in the process.
  step_profiler(profile_options options, std::optional<step_schedule> schedule,
                std::string who = "regionprof::step_profiler");
  ~step_profiler();
  step_profiler(const step_profiler&) = delete;
  step_profiler& operator=(const step_profiler&) = delete;

  /// Ends the current step and begins the next. Returns the profile of the cycle this step completed
  /// (written to the outputs too), else nullopt.
  std::optional<Profile> step();
  /// Ends the loop: the step in progress is not a run. Returns the profile of the cycle in progress when
  /// it has at least one run (always the one profile without a schedule), else nullopt. Called once.
  std::optional<Profile> finish();
  /// The number of the current step (0 for the first).
  std::uint64_t current_step() const noexcept { return step_; }
  /// The cycles whose profiles were made so far.
  std::uint64_t cycles() const noexcept { return cycles_; }

 private:
  void make_session();
  void begin_step();
  std::optional<Profile> finish_cycle();

  profile_options options_;
  std::optional<step_schedule> schedule_;
  std::string who_;
  /// The next or current cycle's session: made (claiming the capture) when the previous cycle ends, so
  /// that no other session can start inside the loop; started at the cycle's first recorded step.
  std::unique_ptr<session> session_;
  bool started_ = false;
  std::thread::id run_thread_;
  std::uint64_t step_ = 0;
  std::uint64_t cycles_ = 0;
  bool run_open_ = false;  ///< the current step is a timed run (its marker is open)
  bool finished_ = false;
};

}  // namespace regionprof
