// Which process of a job this is (rank, local rank, world size, host, pid, from the launchers'
// environment variables), and output paths with placeholders expanded from it, so that the processes
// of one job never write one file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace regionprof {

/// One process of a (possibly distributed) job. Rank, local rank and world size are those the
/// launcher set (absent when none of its variables is set).
struct process_identity {
  std::optional<std::uint64_t> rank;        ///< RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID
  std::optional<std::uint64_t> local_rank;  ///< LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
  std::optional<std::uint64_t> world_size;  ///< WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS
  std::string host;                         ///< gethostname()
  std::int64_t pid = 0;                     ///< the profiled process's pid
  /// `regionprof run --processes N`: this process's index, 0 to N - 1, and N (absent otherwise).
  std::optional<std::uint64_t> process_index;
  std::optional<std::uint64_t> process_count;
  /// With windows (docs/design.md, "Long runs: windows"): the index of the window a profile is written for (`%w`), 0 for the
  /// first; set (to any value) whenever windows are on, so that a path without `%w` is refused.
  std::optional<std::uint64_t> window_index;
};

/// A rank variable with a value that is not a whole number, or an output path pattern that cannot be
/// used. what() names the variable or the path and what is wrong.
class process_identity_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Reads the identity through `lookup` (a variable's value, or nullopt when unset or empty); for each
/// field the first variable that is set wins (torchrun's, then Open MPI's, then MPICH/Intel MPI's,
/// then Slurm's). `host` and `pid` are the caller's. Throws process_identity_error naming the variable
/// whose value is not a whole number.
///
/// ```
/// auto id = regionprof::identity_from(
///     [](std::string_view name) -> std::optional<std::string> {
///       return name == "OMPI_COMM_WORLD_RANK" ? std::optional<std::string>("3") : std::nullopt; },
///     "node7", 4242);  // id.rank == 3, id.world_size empty
/// ```
process_identity identity_from(const std::function<std::optional<std::string>(std::string_view)>& lookup,
                               std::string host, std::int64_t pid);

/// identity_from(std::getenv, gethostname(), getpid()).
///
/// ```
/// regionprof::process_identity me = regionprof::this_process_identity();
/// ```
process_identity this_process_identity();

/// This process's host and pid only (no rank, local rank or world size): for a producer whose paths use no
/// placeholder when a launcher variable cannot be read, so that a stray `RANK=node-3` costs no profile.
///
/// ```
/// regionprof::process_identity me = regionprof::this_process_host_and_pid();  // me.rank is empty
/// ```
process_identity this_process_host_and_pid();

/// Expands an output path pattern: `%r` rank, `%l` local rank (each 0 when the launcher set none),
/// `%h` host, `%p` pid, `%n` process index (0 when none), `%w` window index (0 when none), `%%` a `%`.
/// Throws process_identity_error naming the pattern for an unknown `%x` or a lone `%` at the end, when
/// the world size is above 1 for a pattern with neither `%r` nor `%p`, when the process count is above 1
/// for a pattern with neither `%n` nor `%p` (the processes would all write one file), and when windows
/// are on (`window_index` set) for a pattern without `%w` (the windows would all write one file), saying
/// what to add.
///
/// ```
/// regionprof::process_identity id{2, 0, 4, "node7", 4242};
/// regionprof::expand_output_path("prof-%r.json", id);      // "prof-2.json"
/// regionprof::expand_output_path("%h/%p-100%%.json", id);  // "node7/4242-100%.json"
/// regionprof::expand_output_path("prof.json", id);         // throws: add %r or %p
/// id.world_size = 1; id.process_index = 1; id.process_count = 3;
/// regionprof::expand_output_path("a/prof-%n.json", id);    // "a/prof-1.json"
/// id.window_index = 4;
/// regionprof::expand_output_path("a/prof-%n-%w.json", id);  // "a/prof-1-4.json"
/// ```
std::string expand_output_path(std::string_view pattern, const process_identity& identity);

/// As expand_output_path, but `%p`, `%w` and `%%` stay as they are: for a parent that knows every field
/// but the pid of the process that will write and its windows (`regionprof run`). The result expands again with
/// expand_output_path to the same path as the pattern would have. Same errors.
///
/// ```
/// regionprof::expand_output_path_but_pid("r%r-%p.json", id);  // "r2-%p.json"
/// ```
std::string expand_output_path_but_pid(std::string_view pattern, const process_identity& identity);

/// As expand_output_path, but only `%n` is expanded (every other placeholder stays as written): for
/// `regionprof run --processes N`, which knows the index the injected library does not. Same errors,
/// except that the world-size check runs on the other placeholders as they are.
///
/// ```
/// id.process_index = 1; id.process_count = 3;
/// regionprof::expand_process_index("r%r-%n.json", id);  // "r%r-1.json"
/// ```
std::string expand_process_index(std::string_view pattern, const process_identity& identity);

/// `text` with each `%` doubled, so that expand_output_path gives `text` back.
std::string escape_output_path(std::string_view text);

}  // namespace regionprof
