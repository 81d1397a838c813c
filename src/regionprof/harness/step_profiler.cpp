// regionprof::step_profiler: each recorded step a timed run of the cycle's session (session/session.hpp).
#include "regionprof/harness/step_profiler.hpp"

#include <stdexcept>
#include <utility>

#include "regionprof/session/session.hpp"

namespace regionprof {

step_action action_of(const step_schedule& schedule, std::uint64_t step) noexcept {
  if (step < schedule.skip_first) return step_action::none;
  step -= schedule.skip_first;
  const std::uint64_t cycle_steps = schedule.wait + schedule.warmup + schedule.active;
  if (cycle_steps == 0 || schedule.active == 0) return step_action::none;
  if (schedule.repeat > 0 && step / cycle_steps >= schedule.repeat) return step_action::none;
  const std::uint64_t in_cycle = step % cycle_steps;
  if (in_cycle < schedule.wait) return step_action::none;
  if (in_cycle < schedule.wait + schedule.warmup) return step_action::warmup;
  return in_cycle + 1 < cycle_steps ? step_action::record : step_action::record_and_save;
}

void validate_step_schedule(const step_schedule& schedule, std::string_view who) {
  if (schedule.active == 0) {
    throw std::invalid_argument(std::string(who) + ": the schedule's active must be at least 1 (the recorded steps of "
                                "each cycle)");
  }
}

namespace {

void check_options(const profile_options& options, std::string_view who) {
  const std::string prefix = std::string(who) + ": ";
  if (options.window_runs) {
    throw std::invalid_argument(prefix + "window_runs does not apply to steps: each cycle of the schedule is one "
                                "profile (schedule(active=N) for N runs each); leave window_runs unset");
  }
  if (options.stopping.max_noise) {
    throw std::invalid_argument(prefix + "stopping on noise (max_noise) does not apply to steps: the schedule says "
                                "which steps are runs; leave max_noise unset");
  }
  if (options.analysis.skip_runs != 0) {
    throw std::invalid_argument(prefix + "analysis.skip_runs does not apply to steps: use the schedule's warmup");
  }
}

}  // namespace

step_profiler::step_profiler(profile_options options, std::optional<step_schedule> schedule, std::string who)
    : options_(std::move(options)), schedule_(schedule), who_(std::move(who)) {
  check_options(options_, who_);
  if (options_.window_output) {  // each cycle's JSON profile
    options_.json_output = std::move(options_.window_output);
    options_.window_output.reset();
  }
  if (schedule_) {
    validate_step_schedule(*schedule_, who_);
    options_.measured_runs = schedule_->active;
    options_.warmup_runs = schedule_->warmup > 0 ? schedule_->warmup - 1 : 0;  // the last is the session's
  } else {
    options_.warmup_runs = 0;
  }
  make_session();
  begin_step();
}

step_profiler::~step_profiler() = default;  // ~session discards a cycle in progress

void step_profiler::make_session() {
  session_setup setup;
  setup.who = who_;
  setup.warmup_run = schedule_ && schedule_->warmup > 0;
  if (schedule_ && schedule_->repeat != 1) setup.window = window_position{cycles_, schedule_->active};
  run_target target;
  target.type = options_.target_type;
  session_ = std::make_unique<session>(options_, std::move(target), std::move(setup));
}

void step_profiler::begin_step() {
  const step_action action = schedule_ ? action_of(*schedule_, step_) : step_action::record;
  bool opens = action == step_action::record || action == step_action::record_and_save;
  // Of a cycle's warm-up steps only the last is recorded: the session's internal warm-up run.
  if (action == step_action::warmup) opens = action_of(*schedule_, step_ + 1) != step_action::warmup;
  if (!opens || !session_) return;
  if (!started_) {
    session_->start();
    started_ = true;
  }
  session_->begin_timed_run();
  run_thread_ = std::this_thread::get_id();
  run_open_ = true;
}

std::optional<Profile> step_profiler::step() {
  if (finished_) throw std::logic_error(who_ + ": step() after the loop was finished");
  if (run_open_ && std::this_thread::get_id() != run_thread_) {
    throw std::logic_error(who_ + ": step() on another thread than the step began on (the run marker is a "
                           "per-thread range): end every step on the loop's thread");
  }
  std::optional<Profile> done;
  if (run_open_) {
    run_open_ = false;
    (void)session_->end_timed_run();
  }
  if (schedule_ && action_of(*schedule_, step_) == step_action::record_and_save) done = finish_cycle();
  ++step_;
  begin_step();
  return done;
}

std::optional<Profile> step_profiler::finish() {
  if (finished_) throw std::logic_error(who_ + ": the loop was finished already");
  finished_ = true;
  if (run_open_) {
    run_open_ = false;
    session_->abandon_timed_run();  // the step in progress is not a run
  }
  if (!session_ || session_->measured_wall_times().empty()) {
    session_.reset();
    return std::nullopt;
  }
  return finish_cycle();
}

std::optional<Profile> step_profiler::finish_cycle() {
  std::optional<Profile> profile = session_->finish();
  session_.reset();
  started_ = false;
  ++cycles_;
  const bool more = !finished_ && schedule_ && (schedule_->repeat == 0 || cycles_ < schedule_->repeat);
  if (more) make_session();
  return profile;
}

}  // namespace regionprof
