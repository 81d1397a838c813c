// The CPU side of report `environment`, read from /proc and /sys under a root folder, its warnings, and
// machine_probe (begin/end around a measurement).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "regionprof/machine/machine.hpp"

namespace regionprof {
namespace {

std::string path_under(const std::string& root, std::string_view absolute) {
  std::string path = root;
  while (!path.empty() && path.back() == '/') path.pop_back();
  path += absolute;
  return path;
}

/// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

std::string trimmed(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

/// The value of the first `key<spaces/tabs>: value` line of /proc/cpuinfo or /proc/meminfo.
std::optional<std::string> field(const std::string& text, std::string_view key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trimmed(std::string_view(line).substr(0, colon)) != key) continue;
    return trimmed(std::string_view(line).substr(colon + 1));
  }
  return std::nullopt;
}

/// `12345 kB` -> bytes.
std::optional<std::uint64_t> kilobytes(const std::optional<std::string>& value) {
  if (!value) return std::nullopt;
  std::string_view text(*value);
  if (text.size() > 3 && text.substr(text.size() - 3) == " kB") text.remove_suffix(3);
  const auto kb = parse_unsigned(trimmed(text));
  if (!kb || *kb > UINT64_MAX / 1024) return std::nullopt;
  return *kb * 1024;
}

/// `0-3,5,7-8` -> 7; nullopt when malformed.
std::optional<std::size_t> count_cpu_list(std::string_view list) {
  std::size_t count = 0;
  const std::string text = trimmed(list);
  if (text.empty()) return std::nullopt;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = std::string_view(text).substr(at, comma - at);
    const std::size_t dash = item.find('-');
    const auto first = parse_unsigned(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_unsigned(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    count += static_cast<std::size_t>(*last - *first + 1);
    at = comma + 1;
  }
  return count;
}

/// `/proc/loadavg`: "0.50 0.40 0.30 1/123 4567".
std::optional<std::array<double, 3>> load_average(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::array<double, 3> values{};
  std::istringstream in(*text);
  in.imbue(std::locale::classic());
  for (double& value : values) {
    if (!(in >> value) || value < 0.0) return std::nullopt;
  }
  return values;
}

/// `/proc/loadavg`'s runnable tasks: the `3` of "0.50 0.40 0.30 3/123 4567".
std::optional<std::uint64_t> runnable_tasks(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string field;
  for (int i = 0; i < 4; ++i) {
    if (!(in >> field)) return std::nullopt;
  }
  const std::size_t slash = field.find('/');
  if (slash == std::string::npos) return std::nullopt;
  return parse_unsigned(std::string_view(field).substr(0, slash));
}

/// A load spike through the runs: at least 2 samples, and at least a quarter of them, found more runnable
/// tasks than CPUs.
bool spiked(const load_samples& load) { return load.above_cpu_count >= 2 && 4 * load.above_cpu_count >= load.samples; }

/// `32K`, `1024K`, `32M`, `1G` or plain bytes.
std::optional<std::uint64_t> cache_size(std::string_view text) {
  std::string value = trimmed(text);
  if (value.empty()) return std::nullopt;
  std::uint64_t scale = 1;
  switch (value.back()) {
    case 'K': scale = 1ull << 10; break;
    case 'M': scale = 1ull << 20; break;
    case 'G': scale = 1ull << 30; break;
    default: break;
  }
  if (scale != 1) value.pop_back();
  const auto number = parse_unsigned(value);
  if (!number || *number > UINT64_MAX / scale) return std::nullopt;
  return *number * scale;
}

bool throttling(const std::string& reason) {
  return reason != "gpu_idle" && reason != "applications_clocks_setting" && reason != "display_clock_setting";
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string fixed2(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

}  // namespace

std::optional<std::uint64_t> read_last_level_cache_bytes(const std::string& root) {
  std::optional<std::uint64_t> best;
  std::uint64_t best_level = 0;
  // index0, index1, ...: stop at the first missing one (sysfs numbers them densely).
  for (int index = 0; index < 64; ++index) {
    const std::string dir = path_under(root, "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index));
    const auto level_text = read_text(dir + "/level");
    if (!level_text) break;
    const auto level = parse_unsigned(trimmed(*level_text));
    const auto size_text = read_text(dir + "/size");
    if (!level || !size_text) continue;
    const auto size = cache_size(*size_text);
    if (!size) continue;
    if (!best || *level > best_level || (*level == best_level && *size > *best)) {
      best = size;
      best_level = *level;
    }
  }
  return best;
}

machine_environment read_machine_environment(const std::string& root) {
  machine_environment env;
  if (const auto cpuinfo = read_text(path_under(root, "/proc/cpuinfo"))) {
    if (const auto model = field(*cpuinfo, "model name")) env.cpu_model = *model;
  }
  if (const auto online = read_text(path_under(root, "/sys/devices/system/cpu/online"))) {
    env.cpu_count = count_cpu_list(*online).value_or(0);
  }
  env.load_average = load_average(read_text(path_under(root, "/proc/loadavg")));
  if (const auto meminfo = read_text(path_under(root, "/proc/meminfo"))) {
    env.memory_total_bytes = kilobytes(field(*meminfo, "MemTotal"));
    env.memory_available_bytes = kilobytes(field(*meminfo, "MemAvailable"));
  }
  if (const auto governor = read_text(path_under(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"))) {
    env.cpu_governor = trimmed(*governor);
  }
  env.cpu_last_level_cache_bytes = read_last_level_cache_bytes(root);
  return env;
}

std::vector<std::string> gpu_throttle_reason_names(std::uint64_t reasons) {
  static constexpr const char* names[] = {"gpu_idle",           "applications_clocks_setting", "sw_power_cap",
                                          "hw_slowdown",        "sync_boost",                  "sw_thermal_slowdown",
                                          "hw_thermal_slowdown", "hw_power_brake_slowdown",    "display_clock_setting"};
  std::vector<std::string> out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if ((reasons >> bit & 1u) == 0) continue;
    out.emplace_back(bit < std::size(names) ? std::string(names[bit]) : "bit_" + std::to_string(bit));
  }
  return out;
}

std::vector<warning> machine_warnings(const machine_environment& env) {
  std::vector<warning> out;
  const bool at_start =
      env.load_average && env.cpu_count > 0 && (*env.load_average)[0] > static_cast<double>(env.cpu_count);
  const bool through_runs = env.runs_load && env.cpu_count > 0 && spiked(*env.runs_load);
  if (at_start || through_runs) {
    std::string what;
    if (at_start) {
      what = "the 1-minute load average was " + fixed2((*env.load_average)[0]) + " on " +
             std::to_string(env.cpu_count) + " online CPUs when profiling started";
    }
    if (through_runs) {
      what += std::string(at_start ? ", and " : "") + std::to_string(env.runs_load->above_cpu_count) + " of " +
              std::to_string(env.runs_load->samples) + " load samples taken through the runs found more runnable " +
              "tasks than the " + std::to_string(env.cpu_count) + " online CPUs (up to " +
              std::to_string(env.runs_load->max_runnable) + ")";
    }
    out.push_back({warning_code::machine_loaded, warning_source::nvtx,
                   what + ": other work competed for the CPUs; profile on an idle machine and compare profiles "
                          "taken under the same load"});
  }
  if (!env.cpu_governor.empty() && env.cpu_governor != "performance") {
    out.push_back({warning_code::cpu_scaling_enabled, warning_source::nvtx,
                   "the CPU frequency governor is '" + env.cpu_governor +
                       "', not 'performance': the clock may change between runs; set it with cpupower "
                       "frequency-set -g performance"});
  }
  for (const gpu_environment& gpu : env.gpus) {
    std::vector<std::string> reasons;
    for (const auto* state : {&gpu.before, &gpu.after}) {
      if (!*state) continue;
      for (const std::string& reason : (*state)->throttle_reasons) {
        if (throttling(reason) && std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
          reasons.push_back(reason);
        }
      }
    }
    if (reasons.empty()) continue;
    out.push_back({warning_code::gpu_throttled, warning_source::cupti,
                   "GPU " + std::to_string(gpu.index) + " (" + gpu.name + ") was throttled around the measured runs: " +
                       join(reasons) + "; see environment.gpus for its clocks, let it cool down or lock its clocks"});
  }
  return out;
}

std::optional<std::uint64_t> peak_memory_bandwidth(const gpu_memory_interface& memory) {
  // 2 transfers per clock (DDR) x clock in Hz x bus width in bytes, nvbench's formula: the product
  // 2 x MHz x 10^6 x bits, then / 8.
  if (memory.max_memory_clock_mhz == 0 || memory.bus_width_bits == 0) return std::nullopt;
  std::uint64_t transfers = 0;
  std::uint64_t bits = 0;
  if (__builtin_mul_overflow(std::uint64_t{2} * memory.max_memory_clock_mhz, std::uint64_t{1'000'000}, &transfers) ||
      __builtin_mul_overflow(transfers, std::uint64_t{memory.bus_width_bits}, &bits)) {
    return std::nullopt;
  }
  return bits / 8;
}

std::optional<double> shared_peak_memory_bandwidth(const machine_environment& environment) {
  if (environment.gpus.empty()) return std::nullopt;
  const std::optional<std::uint64_t>& first = environment.gpus.front().peak_memory_bandwidth_bytes_per_second;
  for (const gpu_environment& gpu : environment.gpus) {
    if (!gpu.peak_memory_bandwidth_bytes_per_second || gpu.peak_memory_bandwidth_bytes_per_second != first) {
      return std::nullopt;
    }
  }
  return static_cast<double>(*first);
}

machine_probe::machine_probe(std::string root, std::unique_ptr<gpu_monitor> gpus)
    : root_(std::move(root)), gpus_(gpus ? std::move(gpus) : make_nvml_monitor()) {}

void machine_probe::begin() {
  environment_ = read_machine_environment(root_);
  environment_.gpus = gpus_->devices();
  for (gpu_environment& gpu : environment_.gpus) {
    if (const auto memory = gpus_->memory_interface(gpu.index)) {
      gpu.peak_memory_bandwidth_bytes_per_second = peak_memory_bandwidth(*memory);
    }
    gpu.before = gpus_->clocks(gpu.index);
  }
}

void machine_probe::sample() noexcept {
  try {
    const std::optional<std::uint64_t> runnable = runnable_tasks(read_text(path_under(root_, "/proc/loadavg")));
    if (!runnable) return;
    load_samples& load = environment_.runs_load ? *environment_.runs_load : environment_.runs_load.emplace();
    ++load.samples;
    if (environment_.cpu_count > 0 && *runnable > environment_.cpu_count) ++load.above_cpu_count;
    load.max_runnable = std::max(load.max_runnable, *runnable);
  } catch (...) {
    // out of memory reading a small file: the sample is skipped
  }
}

void machine_probe::end() {
  sample();
  for (gpu_environment& gpu : environment_.gpus) gpu.after = gpus_->clocks(gpu.index);
}

std::vector<warning> machine_probe::warnings() const { return machine_warnings(environment_); }

cpu_cache_flusher::cpu_cache_flusher(const std::string& root)
    : bytes_(read_last_level_cache_bytes(root).value_or(fallback_cache_flush_bytes)),
      buffer_(static_cast<std::size_t>(bytes_)) {}

void cpu_cache_flusher::flush() noexcept {
  // One write per 64-byte line is enough to own the line; a volatile pointer keeps the stores.
  volatile unsigned char* data = buffer_.data();
  const unsigned char value = static_cast<unsigned char>(flushes_ + 1);
  for (std::size_t i = 0; i < buffer_.size(); i += 64) data[i] = value;
  ++flushes_;
}

}  // namespace regionprof
