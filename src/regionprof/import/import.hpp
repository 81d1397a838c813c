// Readers for traces made elsewhere: torch.profiler (Kineto) Chrome trace JSON, plain or gzip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "regionprof/json/microseconds.hpp"  // microseconds_text_to_ns, which the importer reads times with
#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// A trace file that cannot be imported: unreadable, not JSON, truncated gzip, or JSON of the wrong
/// shape. what() is the full message, `<file>: <what is wrong> (at line L, column C, byte offset O)`,
/// ready to print; the parts are kept for callers that format their own.
///
/// ```
/// try {
///   auto t = regionprof::import_kineto_trace("step.json.gz");
/// } catch (const regionprof::import_error& e) {
///   std::cerr << "regionprof: " << e.what() << "\n";  // names the file, the problem, the place
/// }
/// ```
class import_error : public std::runtime_error {
 public:
  /// `offset` is the byte offset in the (decompressed) JSON text; line and column (1-based, column
  /// in bytes) are given with it when known.
  import_error(std::string file, std::string problem, std::optional<std::uint64_t> offset = {},
               std::uint64_t line = 0, std::uint64_t column = 0);

  const std::string& file() const noexcept { return file_; }
  const std::string& problem() const noexcept { return problem_; }
  std::optional<std::uint64_t> offset() const noexcept { return offset_; }
  std::uint64_t line() const noexcept { return line_; }      ///< 0: unknown
  std::uint64_t column() const noexcept { return column_; }  ///< 0: unknown

 private:
  std::string file_;
  std::string problem_;
  std::optional<std::uint64_t> offset_;
  std::uint64_t line_ = 0;
  std::uint64_t column_ = 0;
};

/// Tuning knobs of the Kineto reader. The defaults are what the CLI uses.
struct kineto_import_options {
  /// The events are parsed in windows of about this many bytes (simdjson on-demand over each), so
  /// memory stays bounded by the window, never by the file, and a window's structural index stays in
  /// the CPU cache (measured here: 256 KiB windows parse ~30 % faster than 8 MiB ones). A window
  /// grows while one event does not fit, up to max_event_bytes. Tiny values exist for tests.
  std::size_t window_bytes = std::size_t{256} << 10;
  /// An event (or a top-level member other than traceEvents) larger than this is an error.
  std::size_t max_event_bytes = std::size_t{64} << 20;
};

/// Reads a Kineto / torch.profiler Chrome trace (plain JSON or gzip, told apart by the magic bytes,
/// not the name): an object with `traceEvents`, or a bare list of events.
///
/// - Complete events (`ph: "X"`) of `cat` cpu_op, user_annotation, python_function, cuda_runtime and
///   cuda_driver become CPU intervals on their (pid, tid) thread, in file order per thread;
///   kernel, gpu_memcpy and gpu_memset become device ops (device: args.device or pid, stream:
///   args.stream or tid, args.correlation, args.bytes). Flows, metadata (thread_name names threads),
///   other instants, counters, gpu_user_annotation and the profiler's own spans are not intervals; other
///   categories and phases are not read and counted in an IGNORED_EVENTS warning (source import).
/// - torch.profiler's `[memory]` and `[OutOfMemory]` instants (profile_memory=True) become
///   trace::memory_events on their (pid, tid) thread: args `Device Type` 0 (cpu) or 1 (CUDA device
///   `Device Id`), `Bytes` (> 0 allocated, < 0 freed; an [OutOfMemory]'s: asked for) and `Total Allocated`
///   when present. A [memory] of 0 bytes and the memory events of other devices are counted in an
///   IGNORED_EVENTS warning.
/// - `ts`/`dur` are microseconds; their text is converted to integer ns exactly (no double on the
///   way). Beyond 3 decimals, ns are rounded half to even.
/// - A string pid/tid gets a stable synthetic number (<= -2^46, from a hash of the string) and the
///   string becomes the thread's name unless thread_name metadata names it.
/// - Top-level `deviceProperties`/`distributedInfo` go to trace::target (as foreign members) with
///   type `kineto_trace`; the `regionprof` object of regionprof's own Chrome writer restores the type,
///   device_tracing, run wall times, module types and producer warnings, and `args.domain` restores
///   range domains, so write_chrome_trace followed by this reader is exact.
///
/// Throws import_error naming `path` and what is wrong (line, column and offset for JSON errors).
///
/// ```
/// regionprof::trace t = regionprof::import_kineto_trace("sampled_rank0_kineto.json.gz");
/// regionprof::analysis_options options;
/// options.run_marker = {regionprof::match_kind::regex, "ProfilerStep#\\d+"};
/// auto result = regionprof::analyze(t, options);
/// ```
trace import_kineto_trace(const std::string& path, const kineto_import_options& options = {});

/// The same reader over bytes in memory (plain or gzip); `name` stands for the file in messages.
///
/// ```
/// auto t = regionprof::import_kineto_trace_text(R"([{"ph":"X","cat":"cpu_op","name":"aten::mm",
///     "pid":1,"tid":1,"ts":1.5,"dur":2}])", "snippet");
/// // one cpu_op interval from 1500 ns to 3500 ns
/// ```
trace import_kineto_trace_text(std::string_view bytes, const std::string& name = "<memory>",
                               const kineto_import_options& options = {});

}  // namespace regionprof
