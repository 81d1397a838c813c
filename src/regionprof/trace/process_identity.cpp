#include "regionprof/trace/process_identity.hpp"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdlib>


namespace regionprof {
namespace {

// The launchers' variables, in the order they are tried: torchrun (and most Python launchers), Open
// MPI, MPICH / Intel MPI (Hydra), Slurm.
constexpr std::array rank_variables{"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
constexpr std::array local_rank_variables{"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                          "SLURM_LOCALID"};
constexpr std::array world_size_variables{"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};

template <std::size_t n>
std::optional<std::uint64_t> first_set(const std::function<std::optional<std::string>(std::string_view)>& lookup,
                                       const std::array<const char*, n>& names) {
  for (const char* name : names) {
    const std::optional<std::string> value = lookup(name);
    if (!value || value->empty()) continue;
    std::uint64_t number = 0;
    const char* end = value->data() + value->size();
    const auto [at, error] = std::from_chars(value->data(), end, number);
    if (error != std::errc{} || at != end) {
      throw process_identity_error(std::string(name) + "='" + *value + "' is not a whole number");
    }
    return number;
  }
  return std::nullopt;
}

/// What expand() replaces: every placeholder; all but `%p` and `%%`; only `%n`.
enum class expansion : std::uint8_t { all = 0, all_but_pid = 1, process_index_only = 2 };

/// Expands the placeholders `mode` names; the others stay as written (a kept `%h` is the host escaped).
std::string expand(std::string_view pattern, const process_identity& identity, expansion mode) {
  const bool keep_pid = mode != expansion::all;
  std::string out;
  bool unique = false;        // the pattern names the rank or the pid
  bool unique_index = false;  // the pattern names the process index or the pid
  bool unique_window = false; // the pattern names the window index
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 == pattern.size()) {
      throw process_identity_error("output path '" + std::string(pattern) +
                                   "': a lone '%' at the end (write '%%' for a '%')");
    }
    const char placeholder = pattern[++i];
    // %n without a process index but with windows is the window's index (windows with `-o
    // 'w/prof-%n.json'` and no --processes): kept for the per-window expansion, as %w is.
    const bool n_is_window = placeholder == 'n' && !identity.process_index && identity.window_index;
    if (mode == expansion::process_index_only && (placeholder != 'n' || n_is_window)) {
      if (n_is_window) unique_window = true;
      if (placeholder == 'r') unique = true;
      if (placeholder == 'p') unique = unique_index = true;
      if (placeholder == 'w') unique_window = true;
      out += '%';
      out += placeholder;
      continue;
    }
    switch (placeholder) {
      case 'r':
        out += std::to_string(identity.rank.value_or(0));
        unique = true;
        break;
      case 'l': out += std::to_string(identity.local_rank.value_or(0)); break;
      case 'h': out += keep_pid ? escape_output_path(identity.host) : identity.host; break;
      case 'p':
        out += keep_pid ? std::string("%p") : std::to_string(identity.pid);
        unique = true;
        unique_index = true;
        break;
      case 'n':
        if (n_is_window) {
          out += keep_pid ? std::string("%n") : std::to_string(*identity.window_index);
          unique_window = true;
        } else {
          out += std::to_string(identity.process_index.value_or(0));
          unique_index = true;
        }
        break;
      case 'w':
        out += keep_pid ? std::string("%w") : std::to_string(identity.window_index.value_or(0));
        unique_window = true;
        break;
      case '%': out += keep_pid ? "%%" : "%"; break;
      default:
        throw process_identity_error("output path '" + std::string(pattern) + "': unknown placeholder '%" +
                                     std::string(1, placeholder) +
                                     "' (known: %r rank, %l local rank, %h host, %p pid, %n process index, %w window index, %% a '%')");
    }
  }
  if (!unique && identity.world_size.value_or(1) > 1) {
    throw process_identity_error("output path '" + std::string(pattern) + "': the job has " +
                                 std::to_string(*identity.world_size) +
                                 " processes and all of them would write this one file; add %r (the rank) or "
                                 "%p (the pid) to the path, e.g. 'profile-%r.json'");
  }
  if (!unique_index && identity.process_count.value_or(1) > 1) {
    throw process_identity_error("output path '" + std::string(pattern) + "': " +
                                 std::to_string(*identity.process_count) +
                                 " processes would all write this one file; add %n (the process index) to the "
                                 "path, e.g. 'prof-%n.json'");
  }
  if (!unique_window && identity.window_index) {
    throw process_identity_error("output path '" + std::string(pattern) +
                                 "': with windows a profile is written per window, and every window would write "
                                 "this one file; add %w (the window index) to the path, e.g. "
                                 "'prof-%w.json'");
  }
  return out;
}

/// gethostname(), "" when it fails.
std::string host_name() {
  std::array<char, 256> name{};
  return gethostname(name.data(), name.size() - 1) == 0 ? std::string(name.data()) : std::string();
}

}  // namespace

process_identity identity_from(const std::function<std::optional<std::string>(std::string_view)>& lookup,
                               std::string host, std::int64_t pid) {
  process_identity identity;
  identity.rank = first_set(lookup, rank_variables);
  identity.local_rank = first_set(lookup, local_rank_variables);
  identity.world_size = first_set(lookup, world_size_variables);
  identity.host = std::move(host);
  identity.pid = pid;
  return identity;
}

process_identity this_process_host_and_pid() {
  return identity_from([](std::string_view) { return std::optional<std::string>(); }, host_name(),
                       static_cast<std::int64_t>(getpid()));
}

process_identity this_process_identity() {
  std::string host = host_name();
  return identity_from(
      [](std::string_view variable) -> std::optional<std::string> {
        const char* value = std::getenv(std::string(variable).c_str());
        if (value == nullptr || value[0] == '\0') return std::nullopt;
        return std::string(value);
      },
      std::move(host), static_cast<std::int64_t>(getpid()));
}

std::string expand_output_path(std::string_view pattern, const process_identity& identity) {
  return expand(pattern, identity, expansion::all);
}

std::string expand_output_path_but_pid(std::string_view pattern, const process_identity& identity) {
  return expand(pattern, identity, expansion::all_but_pid);
}

std::string expand_process_index(std::string_view pattern, const process_identity& identity) {
  return expand(pattern, identity, expansion::process_index_only);
}

std::string escape_output_path(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

}  // namespace regionprof
