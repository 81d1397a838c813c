// What regionprof writes and the one way it writes it: an output set (which formats go to which
// files, and which one to standard output), the writers that render one result in each format, and
// the atomic replacement of every file (a temporary in the target's directory, flushed, fsync'd and
// renamed over the target: a reader, or a kill at any moment, finds the old file or the complete new one).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/report/report.hpp"
#include "regionprof/trace/process_identity.hpp"

namespace regionprof {

/// A file regionprof could not write. what() names the file and why:
/// "cannot write the JSON report to 'out.json': No space left on device" (an empty path: "to
/// standard output").
class output_error : public std::runtime_error {
 public:
  output_error(std::string path, std::string_view what, std::string reason, int error_number = 0);
  const std::string& path() const noexcept { return path_; }      ///< the target ("" standard output)
  const std::string& reason() const noexcept { return reason_; }  ///< "No space left on device"
  /// The errno behind the failure (ENOSPC, ENOENT for a missing directory, EISDIR, ...); 0 when none
  /// applies (a writer that threw, an output the result does not have).
  int error_number() const noexcept { return error_number_; }

 private:
  std::string path_;
  std::string reason_;
  int error_number_ = 0;
};

/// Writes `path` through `write`: the bytes go to a temporary file beside `path` (same directory, so
/// the replacement is a rename), which is flushed, fsync'd, then renamed over `path`. Until then the
/// old file is untouched; on any error the temporary is removed and output_error is thrown naming
/// `path` (and `what` it is, e.g. "JSON report"). A new file gets mode 0666 less the umask, a
/// replaced one keeps its mode. `write` may throw: its message is wrapped the same way. A `path` that
/// is a device, FIFO or socket (`/dev/null`, `/dev/stdout`, a pipe) is written in place, never replaced.
/// Not for a signal handler (it allocates); an exit handler or a thread is fine.
///
/// ```
/// regionprof::write_file_atomically("notes.txt", "notes", [](std::ostream& out) { out << "hello\n"; });
/// ```
void write_file_atomically(const std::string& path, std::string_view what,
                           const std::function<void(std::ostream&)>& write);

/// The formats an output set can hold.
enum class output_format : std::uint8_t {
  json,            ///< the JSON report (docs/report-schema.md), or a job's, or a diff's
  markdown,        ///< the Markdown report
  html,            ///< one self-contained HTML page
  chrome_trace,    ///< a Chrome trace (Perfetto, chrome://tracing)
  terminal_table,  ///< aligned columns and bars (`regionprof report --format table`)
};

/// "JSON", "Markdown", "HTML", "Chrome trace", "terminal table".
std::string_view to_string(output_format format) noexcept;

/// One file of an output set: `format` written to `path`.
struct output_file {
  output_format format = output_format::json;
  std::string path;  ///< may hold placeholders (%r %l %h %p %%) until the set is expanded
};

/// What a command or the library writes: files in order, then at most one format to standard output.
///
/// ```
/// regionprof::output_set outputs;
/// outputs.add(regionprof::output_format::json, "prof-%r.json");
/// outputs.to_stdout = regionprof::output_format::markdown;
/// ```
struct output_set {
  std::vector<output_file> files;
  std::optional<output_format> to_stdout;
  /// True once expanded(): the paths are final, a `%` in them is literal.
  bool placeholders_expanded = false;

  output_set& add(output_format format, std::string path);
  bool empty() const noexcept { return files.empty() && !to_stdout; }
  /// Whether a file or standard output takes `format`.
  bool has(output_format format) const noexcept;

  /// The set with every path's placeholders expanded with `identity` (regionprof::expand_output_path,
  /// its rules and errors, prefixed with the path's format: "JSON: ...").
  output_set expanded(const process_identity& identity) const;
};

/// How one result renders in each format: the seam between the output set and the report writers.
/// An empty function: the result has no such format (writing it is an output_error).
struct output_writers {
  std::string noun = "report";  ///< in messages: "the JSON <noun>", e.g. "job report", "diff"
  std::function<void(std::ostream&)> json;
  std::function<void(std::ostream&)> markdown;
  std::function<void(std::ostream&)> html;
  std::function<void(std::ostream&)> chrome_trace;
  std::function<void(std::ostream&)> terminal_table;
};

/// A profile's writers: JSON, Markdown (shaped by `markdown`) and HTML reports, and its trace.
/// They refer to `profile`, which must outlive them.
output_writers profile_writers(const Profile& profile, const markdown_options& markdown);
/// A job report's writers: JSON, Markdown and Chrome trace (one process per rank).
output_writers job_writers(const job_report& job);
/// A diff's writers: JSON, Markdown and HTML.
output_writers diff_writers(const profile_diff& diff);

/// Called for each output that could not be written (a standard output one with an empty path).
using output_failure_handler = std::function<void(const output_file& file, const output_error& error)>;

/// Writes every file of `outputs` atomically (write_file_atomically), in order, then `to_stdout` to
/// `out`. Paths with placeholders are expanded first (unless the set is expanded already) with this
/// process's identity; a path without `%` is used as given. Without `on_failure`, the first failure
/// throws output_error (or process_identity_error) and nothing after it is written; with it, each
/// failure is handed to it and the other outputs are still written.
///
/// ```
/// regionprof::output_set outputs;
/// outputs.add(regionprof::output_format::json, "profile.json");
/// regionprof::write_outputs(outputs, regionprof::profile_writers(profile, {}), std::cout);
/// ```
void write_outputs(const output_set& outputs, const output_writers& writers, std::ostream& out,
                   const output_failure_handler& on_failure = {});

/// write_outputs of a set of one file: `format` to `path` (placeholders expanded, replaced atomically;
/// output_error naming the path).
///
/// ```
/// regionprof::write_output(regionprof::job_writers(job), regionprof::output_format::json, "job-%h.json");
/// ```
void write_output(const output_writers& writers, output_format format, const std::string& path);

/// A profile's JSON report, Markdown report or Chrome trace to `path`: write_output of its
/// profile_writers (placeholders %r %l %h %p expanded, replaced atomically; output_error naming the path).
///
/// ```
/// regionprof::write_json(profile, "profile-%r.json");
/// regionprof::write_markdown(profile, "report.md", {.runs_detail = 3});
/// regionprof::write_trace(profile, "trace.json");
/// ```
void write_json(const Profile& profile, const std::string& path);
void write_markdown(const Profile& profile, const std::string& path, const markdown_options& markdown = {});
void write_trace(const Profile& profile, const std::string& path);

}  // namespace regionprof
