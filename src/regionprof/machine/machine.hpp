// The machine a live profile ran on (report `environment`) and cold runs (cache flushes): /proc and /sys
// read under a root folder (tests give a fake tree), GPUs through NVML loaded at run time behind a seam.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// One GPU's clocks at one moment (NVML).
struct gpu_clock_state {
  std::uint32_t sm_clock_mhz = 0;
  std::uint32_t memory_clock_mhz = 0;
  /// NVML's clock event (throttle) reasons, as names (gpu_throttle_reason_names), in bit order.
  std::vector<std::string> throttle_reasons;
};

/// One GPU's memory interface (NVML): its maximum memory clock and its memory bus width.
struct gpu_memory_interface {
  std::uint32_t max_memory_clock_mhz = 0;  ///< nvmlDeviceGetMaxClockInfo(NVML_CLOCK_MEM)
  std::uint32_t bus_width_bits = 0;        ///< nvmlDeviceGetMemoryBusWidth
};

/// The peak memory bandwidth of a memory interface, bytes per second: 2 x max_memory_clock_mhz x 10^6 x
/// bus_width_bits / 8 (double data rate: two transfers per clock, as nvbench computes it). nullopt when
/// either figure is 0 or the product exceeds 2^64 - 1; rounded down where bus_width_bits is not a multiple of 4.
///
/// ```
/// auto peak = regionprof::peak_memory_bandwidth({2619, 5120});  // 3352320000000 (3.35 TB/s)
/// ```
std::optional<std::uint64_t> peak_memory_bandwidth(const gpu_memory_interface& memory);

/// One GPU: its NVML index and name, its clocks before the first and after the last measured run, and
/// its peak memory bandwidth (from gpu_monitor::memory_interface).
struct gpu_environment {
  std::uint32_t index = 0;
  std::string name;
  std::optional<gpu_clock_state> before;
  std::optional<gpu_clock_state> after;
  /// peak_memory_bandwidth of the GPU's memory interface; nullopt where NVML cannot say.
  std::optional<std::uint64_t> peak_memory_bandwidth_bytes_per_second{};
};

/// The machine's load sampled through the runs (machine_probe::sample): each reading is the number of
/// runnable tasks at that moment, /proc/loadavg's fourth field (`3/456`: 3), the reading thread included.
struct load_samples {
  std::uint64_t samples = 0;          ///< readings taken
  std::uint64_t above_cpu_count = 0;  ///< readings that found more runnable tasks than online CPUs
  std::uint64_t max_runnable = 0;     ///< the most runnable tasks one reading found
};

/// How often a session samples the load: after a timed run when at least this long has passed since
/// the last sample (the runs' boundaries, outside their time), and after the last run.
inline constexpr std::int64_t load_sample_interval_ns = 100'000'000;

/// Report `environment` (docs/report-schema.md, `environment`). Every member is
/// what could be read; an unread one is empty or nullopt (and left out of the report).
struct machine_environment {
  std::string cpu_model;             ///< /proc/cpuinfo's first `model name`
  std::size_t cpu_count = 0;         ///< online CPUs (/sys/devices/system/cpu/online); 0: unknown
  std::optional<std::array<double, 3>> load_average;  ///< /proc/loadavg: 1, 5 and 15 minutes, at start
  std::optional<load_samples> runs_load;  ///< sampled through the runs; nullopt: no reading
  std::optional<std::uint64_t> memory_total_bytes;      ///< /proc/meminfo MemTotal
  std::optional<std::uint64_t> memory_available_bytes;  ///< /proc/meminfo MemAvailable, at start
  std::string cpu_governor;  ///< cpu0's cpufreq scaling_governor; empty where not readable
  /// The last-level CPU cache (highest `level` of cpu0/cache/index*), bytes; nullopt where not readable.
  std::optional<std::uint64_t> cpu_last_level_cache_bytes;
  std::vector<gpu_environment> gpus;  ///< empty without NVML or a GPU
};

/// The peak memory bandwidth every GPU of `environment` shares (bytes per second), the denominator of
/// throughput's `device_bytes_peak_fraction` (docs/design.md, rule 18); nullopt without GPUs, when one
/// has no peak, or when two differ.
///
/// ```
/// std::optional<double> peak = regionprof::shared_peak_memory_bandwidth(probe.environment());
/// ```
std::optional<double> shared_peak_memory_bandwidth(const machine_environment& environment);

/// Reads the CPU side of the environment from `root` + /proc/... and /sys/... (`root` "/" for this
/// machine; a test's folder holds the same relative paths). Never throws; what is missing stays unset.
///
/// ```
/// regionprof::machine_environment env = regionprof::read_machine_environment("/");
/// ```
machine_environment read_machine_environment(const std::string& root = "/");

/// The last-level cache size in bytes from `root`/sys/devices/system/cpu/cpu0/cache/index*/{level,size}
/// (`32K`, `1024K`, `32M`): the largest size among the indexes of the highest level; nullopt when unreadable.
std::optional<std::uint64_t> read_last_level_cache_bytes(const std::string& root = "/");

/// The size the CPU cache flush writes when the last-level cache size cannot be read: 64 MiB.
inline constexpr std::uint64_t fallback_cache_flush_bytes = 64ull << 20;

/// NVML's clock event reason bits as names: 0x1 gpu_idle, 0x2 applications_clocks_setting,
/// 0x4 sw_power_cap, 0x8 hw_slowdown, 0x10 sync_boost, 0x20 sw_thermal_slowdown, 0x40 hw_thermal_slowdown,
/// 0x80 hw_power_brake_slowdown, 0x100 display_clock_setting; other bits as `bit_N`.
///
/// ```
/// auto names = regionprof::gpu_throttle_reason_names(0x5);  // {"gpu_idle", "sw_power_cap"}
/// ```
std::vector<std::string> gpu_throttle_reason_names(std::uint64_t reasons);

/// The seam to the GPUs' state: NVML in a real process (make_nvml_monitor), a fake in tests.
class gpu_monitor {
 public:
  virtual ~gpu_monitor() = default;
  /// Index and name of every GPU; empty when none can be read.
  virtual std::vector<gpu_environment> devices() = 0;
  /// The clocks of GPU `index` now; nullopt when they cannot be read. Never throws.
  virtual std::optional<gpu_clock_state> clocks(std::uint32_t index) = 0;
  /// GPU `index`'s maximum memory clock and bus width; nullopt (the default) when they cannot be read.
  /// Never throws.
  virtual std::optional<gpu_memory_interface> memory_interface(std::uint32_t /*index*/) { return std::nullopt; }
};

/// NVML (libnvidia-ml.so.1, loaded with dlopen, never linked); a monitor without devices when NVML is
/// absent or fails to initialise.
std::unique_ptr<gpu_monitor> make_nvml_monitor();

/// Records the environment over a measurement: begin() reads the CPU side (load average and memory at
/// start), each GPU's peak memory bandwidth and its clocks before the first measured run; sample() reads
/// the load between runs (one small /proc read; never while a run is timed); end() takes a last sample
/// and the clocks after the last run.
///
/// ```
/// regionprof::machine_probe probe;            // "/" and NVML
/// probe.begin();
/// for (auto& run : runs) { run(); probe.sample(); }
/// probe.end();
/// trace.warnings += probe.warnings(); context.environment = probe.environment();
/// ```
class machine_probe {
 public:
  /// `gpus` null: make_nvml_monitor().
  explicit machine_probe(std::string root = "/", std::unique_ptr<gpu_monitor> gpus = nullptr);
  /// Reads the environment anew; the load samples start over.
  void begin();
  /// One reading of the runnable tasks into environment().runs_load; nothing when /proc/loadavg cannot be
  /// read. Never throws.
  void sample() noexcept;
  void end();
  const machine_environment& environment() const noexcept { return environment_; }
  /// machine_warnings(environment()).
  std::vector<warning> warnings() const;

 private:
  std::string root_;
  std::unique_ptr<gpu_monitor> gpus_;
  machine_environment environment_;
};

/// The warnings `environment` calls for, in this order: MACHINE_LOADED (1-minute load average above
/// cpu_count at start, or a load spike through the runs: at least 2 samples, and at least a quarter of
/// them, found more runnable tasks than CPUs; one warning saying which), CPU_SCALING_ENABLED (a governor
/// other than `performance`), GPU_THROTTLED (per GPU, a throttle reason before or after other than
/// gpu_idle, applications_clocks_setting and display_clock_setting).
std::vector<warning> machine_warnings(const machine_environment& environment);

/// Cold runs, CPU side: a buffer of the last-level cache's size (read_last_level_cache_bytes, else
/// fallback_cache_flush_bytes), written whole by every flush() so that the next run starts with none of
/// its data in the CPU caches.
///
/// ```
/// regionprof::cpu_cache_flusher flusher;  // sizes itself from /sys
/// flusher.flush();                        // before each measured run, outside its timing
/// ```
class cpu_cache_flusher {
 public:
  explicit cpu_cache_flusher(const std::string& root = "/");
  void flush() noexcept;
  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t flushes() const noexcept { return flushes_; }

 private:
  std::uint64_t bytes_;
  std::vector<unsigned char> buffer_;
  std::uint64_t flushes_ = 0;
};

}  // namespace regionprof
