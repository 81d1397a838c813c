// The CUPTI-backed device session (docs/design.md, "Device side (CUPTI)" and "One clock"; docs/gpu.md).
#include "regionprof/collect/device_session.hpp"

#include <cstdlib>
#include <new>
#include <optional>
#include <stdexcept>

#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/collect/activity_decoder.hpp"
#include "regionprof/collect/buffer_pool.hpp"
#include "regionprof/collect/clock_fit.hpp"
#include "regionprof/collect/collector.hpp"
#include "regionprof/collect/device_l2_flush.hpp"
#include "regionprof/collect/graph_capture.hpp"
#include "regionprof/collect/kernel_names.hpp"
#include "regionprof/trace/clock.hpp"

namespace regionprof {
namespace collect {
namespace {

/// Within this, a sample shows CUPTI's clock to be ours already (the timestamp callback took).
constexpr std::int64_t same_clock_tolerance_ns = 1'000'000;
/// Graph node entries reserved per session (24 bytes each), so capture rarely allocates in a callback.
constexpr std::size_t graph_node_reserve = 4096;

std::int64_t distance(const clock_sample& sample) {
  const std::int64_t difference = static_cast<std::int64_t>(sample.cupti_ns) - sample.monotonic_ns;
  return difference < 0 ? -difference : difference;
}

class cupti_session final : public device_session {
 public:
  cupti_session(const device_options& options, std::unique_ptr<activity_backend> backend)
      : options_(options), backend_(std::move(backend)), status_(backend_->probe()) {}

  ~cupti_session() override {
    if (!collecting_) return;
    try {
      backend_->disable();
      (void)backend_->flush();
      backend_->release();
    } catch (...) {
      // A destructor never throws; what was collected is discarded with the session.
    }
    (void)graph_node_log::instance().end();
    (void)buffer_pool::instance().detach();
  }

  bool available() const override { return status_.ok(); }
  std::string unavailable_reason() const override { return status_.message; }

  void start() override {
    if (collecting_ || !status_.ok()) return;
    std::size_t buffer_bytes = (options_.buffer_bytes + 7) / 8 * 8;  // CUPTI wants 8-byte multiples
    if (buffer_bytes == 0) {
      throw std::runtime_error("regionprof: device_options::buffer_bytes is 0; use the default 4 MiB "
                               "(CUPTI recommends 1 to 10 MiB)");
    }
    if (options_.max_buffer_bytes < buffer_bytes) {
      throw std::runtime_error("regionprof: device_options::max_buffer_bytes (" +
                               std::to_string(options_.max_buffer_bytes) + ") holds no buffer of buffer_bytes (" +
                               std::to_string(buffer_bytes) + "); raise it (default 256 MiB)");
    }
    const std::size_t buffer_count = options_.max_buffer_bytes / buffer_bytes;
    buffer_pool& pool = buffer_pool::instance();
    bool attached = false;
    try {
      attached = pool.attach(buffer_bytes, buffer_count, spill_needed(backend_->library().api_version));
    } catch (const std::bad_alloc&) {
      throw std::runtime_error("regionprof: cannot map " + std::to_string(buffer_bytes * buffer_count) +
                               " bytes of CUPTI activity buffers; lower device_options::max_buffer_bytes");
    }
    if (!attached) {
      status_ = {backend_failure::subscriber_conflict,
                 "another regionprof device session is already collecting in this process (CUPTI serves one)"};
      return;
    }
    // Graph nodes are noted from the first callback on; what an earlier session noted is forgotten.
    graph_node_log::instance().begin(graph_node_reserve);
    started_ns_ = monotonic_now_ns();
    backend_status enabled = backend_->enable(options_.synchronization_records);
    if (!enabled.ok()) {
      (void)graph_node_log::instance().end();
      (void)pool.detach();
      status_ = std::move(enabled);
      return;
    }
    start_clock_ = sample_clocks(*backend_);
    collecting_ = true;
  }

  void synchronize() override {
    if (collecting_) backend_->synchronize_device();
  }

  /// Why there is no device activity: DEVICE_TRACING_UNAVAILABLE, or CUPTI_SUBSCRIBER_CONFLICT.
  warning unavailable_warning(const char* what) const {
    const bool conflict = status_.failure == backend_failure::subscriber_conflict;
    return {conflict ? warning_code::cupti_subscriber_conflict : warning_code::device_tracing_unavailable,
            warning_source::cupti,
            std::string(conflict ? "device tracing off: " : "device tracing unavailable: ") + status_.message + "; " +
                what + " is CPU-only"};
  }

  void flush_device_cache() noexcept override {
    if (status_.ok()) (void)l2_.flush();
  }

  void cut_window(trace& out, std::int64_t cut_ns, bool at_exit) noexcept override {
    if (!collecting_) {
      // Every window says for itself why it has no device activity (stop() says it for the last one).
      if (!status_.ok()) {
        try {
          out.warnings.push_back(unavailable_warning("the window"));
        } catch (...) {
        }
      }
      return;
    }
    try {
      if (at_exit) backend_->synchronize_device();
      const backend_status flushed = at_exit ? backend_->flush() : backend_->flush_completed();
      buffer_pool& pool = buffer_pool::instance();
      const std::vector<completed_buffer> buffers = pool.take_completed();
      if (!windows_) windows_.emplace(*backend_);
      for (const completed_buffer& buffer : buffers) windows_->decode_buffer(buffer.data, buffer.valid_bytes);
      pool.recycle(buffers);  // decoding copied the records out
      const std::optional<clock_sample> now = sample_clocks(*backend_);
      const clock_map clock = clock_until(now);
      std::optional<session_window> window;
      if (start_clock_ && now) window = session_window{started_ns_, monotonic_now_ns()};
      activity_decoder records = windows_->take_window(cut_ns, clock, false);
      records.append_to(out, clock, window);  // graph replays: linked to their capture in the last window only
      out.device_tracing = true;
      for (warning& item : collection_warnings(records.counts(), {}, {})) out.warnings.push_back(std::move(item));
      if (!flushed.ok()) {
        out.warnings.push_back({warning_code::dropped_device_records, warning_source::cupti,
                                "the flush at this window's cut failed (" + flushed.message +
                                    "); records CUPTI still held come with a later window, or late"});
      }
    } catch (...) {
      out.warnings.push_back({warning_code::dropped_device_records, warning_source::cupti,
                              "this window's device activity could not be collected (out of memory)"});
    }
  }

  void stop(trace& out) override {
    if (!collecting_) {
      if (!status_.ok() && !reported_) {
        reported_ = true;
        out.warnings.push_back(unavailable_warning("the profile"));
      }
      return;
    }
    collecting_ = false;
    // Wait for launched work, stop producing records, then collect every buffer (records are converted
    // to our clock up to the flush, so the clock is restored only after it).
    backend_->synchronize_device();
    backend_->disable();
    const backend_status flushed = backend_->flush();
    collection_stats stats;
    stats.dropped_records = backend_->take_dropped_records();
    const std::optional<clock_sample> stop_clock = sample_clocks(*backend_);
    const std::int64_t stopped_ns = monotonic_now_ns();
    backend_->release();
    const std::vector<node_origin> nodes = graph_node_log::instance().end();
    stats.lost_graph_nodes = graph_node_log::instance().lost();
    // Detach from CUPTI when nothing else uses it: a process left attached stays slower
    // (pytorch#146604); a later session attaches again.
    if (options_.detach_after_stop) backend_->detach();
    pool_harvest harvest = buffer_pool::instance().detach();
    stats.spilled_buffers = harvest.spilled_buffers;
    stats.spilled_records = harvest.spilled_records;
    stats.refused_requests = harvest.refused_requests;
    stats.buffer_bytes = harvest.buffer_bytes;
    stats.buffer_count = harvest.buffer_count;
    stats.outstanding_buffers = harvest.outstanding;
    if (!flushed.ok()) stats.flush_error = flushed.message;

    const clock_map clock = clock_until(stop_clock);
    const bool clock_known = start_clock_ || stop_clock || backend_->timestamps_are_monotonic();

    // The session's window applies where the clocks were paired, i.e. where the mapping is known.
    std::optional<session_window> window;
    if (start_clock_ && stop_clock) window = session_window{started_ns_, stopped_ns};

    activity_decoder decoder = windows_ ? std::move(*windows_) : activity_decoder(*backend_);
    windows_.reset();
    for (const completed_buffer& buffer : harvest.completed) decoder.decode_buffer(buffer.data, buffer.valid_bytes);
    if (decoder.windows_taken()) {
      // Windows: the last one, with what earlier cuts carried; late records are counted.
      activity_decoder last = decoder.take_window(0, clock, true);
      last.append_to(out, clock, window, nodes);
      decoder.add_window_counts(last.counts());
    } else {
      decoder.append_to(out, clock, window, nodes);
    }
    kernel_names::instance().clear();
    out.device_tracing = true;
    for (warning& item : collection_warnings(decoder.counts(), decoder.overheads(), stats)) {
      out.warnings.push_back(std::move(item));
    }
    if (!clock_known) {
      out.warnings.push_back({warning_code::clock_anomaly, warning_source::cupti,
                              "CUPTI refused regionprof's clock and its own could not be read "
                              "(cuptiGetTimestamp failed): device times may be offset from CPU times"});
    }
  }

 private:
  /// One clock: identity when CUPTI stamps monotonic_now_ns() (the samples agree), else the line through
  /// the start pairing and `later` (a cut's or the stop's), or an offset from the one pairing there is.
  clock_map clock_until(const std::optional<clock_sample>& later) const {
    if (start_clock_ && later) {
      if (distance(*start_clock_) > same_clock_tolerance_ns || distance(*later) > same_clock_tolerance_ns) {
        return clock_map::fit(*start_clock_, *later);
      }
      return {};
    }
    if (start_clock_ || later) {
      const clock_sample& only = start_clock_ ? *start_clock_ : *later;
      if (distance(only) > same_clock_tolerance_ns) return clock_map::offset(only);
    }
    return {};
  }

  device_options options_;
  std::unique_ptr<activity_backend> backend_;
  backend_status status_;
  bool collecting_ = false;
  bool reported_ = false;  // the unavailability warning was added once
  std::optional<clock_sample> start_clock_;
  device_l2_flusher l2_;  // cold runs (flush_device_cache); freed with the session
  std::int64_t started_ns_ = 0;  // monotonic_now_ns() just before enabling
  std::optional<activity_decoder> windows_;  // cut_window: what was decoded and carried so far
};

}  // namespace

std::unique_ptr<device_session> make_device_session(const device_options& options,
                                                    std::unique_ptr<activity_backend> backend) {
  return std::make_unique<cupti_session>(options, std::move(backend));
}

std::unique_ptr<device_session> make_injected_device_session(const device_options& options) {
  device_options injected = options;
  injected.detach_after_stop = false;  // the session stops at exit, while the driver may be tearing down
  return make_device_session(injected, make_cupti_backend(driver_probe::injected));
}

}  // namespace collect

std::unique_ptr<device_session> make_device_session(const device_options& options) {
  return collect::make_device_session(options, collect::make_cupti_backend(collect::driver_probe::initialize));
}

}  // namespace regionprof
