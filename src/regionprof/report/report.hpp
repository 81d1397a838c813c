// The writers of every result: a profile's JSON report (docs/report-schema.md, schema_version 1),
// Markdown, HTML and terminal views and its Chrome trace in Kineto's conventions; a diff's JSON, Markdown
// and HTML; a job report's JSON, Markdown and Chrome trace. Each renders a result model (model/, compare/,
// job/) as text; files are written through output/output.hpp.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/compare/profile_diff.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// Settings of the Markdown view only.
struct markdown_options {
  /// How many runs (the first ones) get a detailed `### Run i` table. nullopt: every run when there are
  /// at most default_detailed_runs, else none (the summary and the runs table always cover all).
  std::optional<std::size_t> runs_detail;
  static constexpr std::size_t default_detailed_runs = 5;
};

/// The JSON report, key for key as docs/report-schema.md specifies. Times in microseconds (ns / 1000), written as
/// decimals (1234567 ns -> `1234.567`); fractions omitted when the run's total is 0; device fields
/// omitted (not null, not 0) when the analysis has none. One addition beyond the reference, at the end:
/// `region_summary` [{`region_id`, `runs_present`, `calls_total`, `cpu_time_us` {`mean`, `min`, `max`},
/// `device_time_us` {...} (with device data), `off_thread_cpu_time_us` {...} (when seen)}], over all
/// runs (a run without the region counts as 0). Throws std::invalid_argument when a region aggregate
/// points outside result.regions.
///
/// ```
/// std::string text = regionprof::to_json(profile);
/// ```
std::string to_json(const Profile& profile);

/// A Markdown view that reads top-down: overview; summary (per region the median CPU and device time
/// over runs, share of the run, MAD and cv); memory (per region and device the medians of its memory
/// figures, docs/design.md rule 21, only when some run has them); runs; regions; per-run attribution
/// with a residual row (limited by markdown_options::runs_detail); key averages; warnings. Tables are
/// padded to their column widths; times in us with 3 decimals, shares in % with 2.
///
/// ```
/// std::cout << regionprof::to_markdown(profile, regionprof::markdown_options{.runs_detail = 3});
/// ```
std::string to_markdown(const Profile& profile, const markdown_options& markdown = {});

/// One self-contained HTML page (inline CSS, SVG and script; nothing is fetched) holding
/// to_html_fragment(profile, "regionprof-report"): the summary, a stacked bar per run (its regions and
/// the residual, CPU and, with device data, device), each region's time across runs (a dot per run, the
/// median as a tick), the key-average tables and the warnings.
///
/// ```
/// std::ofstream("report.html") << regionprof::to_html(profile);
/// ```
std::string to_html(const Profile& profile);
/// The same report as a fragment to embed in another page beside other content (a Jupyter output):
/// one `<div class="regionprof" id="ID">` whose style rules are all scoped under `.regionprof` and whose
/// script reaches only the elements under it; `id`, the one id it holds, must be unique in the page
/// (1 to 64 ASCII letters, digits, `-`, `_`, starting with a letter; else std::invalid_argument). The
/// script sets the root's `p.rp-status` to `regionprof-render-ok` when it ran without an error.
std::string to_html_fragment(const Profile& profile, std::string_view id);

/// A terminal view: per region (and the residual) the median CPU and device time over runs, the share of
/// the run, and a bar of that share, in aligned columns `width` characters wide. `colour`: ANSI colours
/// (the caller decides: a TTY and no NO_COLOR). Of the context only the environment is read (the peak
/// memory bandwidth behind the `% of peak BW` column, docs/design.md rule 18).
///
/// ```
/// std::cout << regionprof::to_terminal_table(profile, isatty(1) && !std::getenv("NO_COLOR"));
/// ```
std::string to_terminal_table(const Profile& profile, bool colour, std::size_t width = 100);

/// One row of the memory table (docs/design.md, rule 21; Python's `to_pandas(table="memory")`): one
/// owner's memory figures on one device in one run.
struct memory_row {
  std::size_t run_index = 0;
  std::string_view owner;  ///< a region id, `(residual)` or `(run total)`; valid while the profile is
  device_memory figures;
};

/// Per run, in run order: its regions' memory figures (in the run's region order), its residual's, then
/// the run's own (`(run total)`), each owner's devices ascending; an owner without figures has no row, so
/// a profile without memory events has none.
///
/// ```
/// for (const regionprof::memory_row& row : regionprof::memory_rows(profile)) use(row.owner, row.figures);
/// ```
std::vector<memory_row> memory_rows(const Profile& profile);

/// Writes `source` as a Chrome trace (JSON object with `traceEvents`) in torch.profiler's conventions,
/// loadable by Perfetto and chrome://tracing, and read back exactly by the Kineto importer.
///
/// The format (the contract between this writer and the importer; round trips are exact):
/// - `ts` and `dur` are microseconds written from integer ns with the ns kept as 3 decimals
///   (12345678 ns -> `12345.678`), never through a double. Always: optional `-`, the integer part,
///   `.`, exactly 3 digits (0 -> `0.000`, 999 -> `0.999`, -1500 -> `-1.500`); `dur` = end - start.
/// - CPU intervals are complete events (`ph: "X"`) on their (pid, tid) with `cat` from interval_kind:
///   `user_annotation`, `cpu_op`, `python_function`, `cuda_runtime`, `cuda_driver`. API calls carry
///   `args.correlation`; a range in a named NVTX domain carries `args.domain`. Events of one thread are
///   written in trace order, so the importer restores input order (rule 1's tie-break).
///   Precisely: API calls always carry `args.correlation` (0 included); every interval whose domain is
///   not 0 carries `args.domain` (the domain's name); an interval with neither has no `args`.
/// - Device ops are complete events with `cat` `kernel`, `gpu_memcpy` or `gpu_memset`, `pid` = device,
///   `tid` = stream, and `args` {`device`, `stream`, `correlation`, `bytes` (copies and sets)}.
///   `correlation` is always written (0: unknown); `bytes` only for `gpu_memcpy` and `gpu_memset`.
/// - Each launch gets an `ac2g` flow: `ph: "s"` on the API call, `ph: "f"` (`bp: "e"`) on each of its
///   device ops, `id` = correlation id. Precisely: only ids != 0 that have both an API call and at least
///   one device op get a flow; the `s` sits on the first API call with that id (trace order), at its
///   `ts`; every device op with that id gets an `f` at its own `ts`. Both have `cat` and `name` "ac2g".
///   Readers need no flow event to link ops to calls: `args.correlation` carries the link.
/// - Thread and process names are `ph: "M"` metadata events (`thread_name`, `process_name`), with no
///   `ts`: a `thread_name` for each CPU thread that has a name (none for unnamed threads); for each
///   device a `process_name` "GPU <device>" on pid = device, and for each of its streams a
///   `thread_name` "stream <stream>" on (device, stream), by device then stream number. As in
///   Kineto, a CPU pid equal to a device number shares that process in viewers; readers tell CPU
///   from device events by `cat`, and apply `thread_name` only to (pid, tid) pairs that carry CPU
///   intervals, so a thread with no interval does not come back (it carries nothing the analysis uses).
/// - Order: all metadata events, then the CPU intervals in trace::intervals order (each API call's
///   `s` right after it), then the device ops in trace::device_ops order (each followed by its `f`s).
///   One event per line.
/// - Top-level `deviceProperties`/`distributedInfo` come from trace::target, and a top-level
///   `regionprof` object keeps what Kineto has no place for: {`schema_version`: 1, `target_type`,
///   `device_tracing`, `run_wall_times_ns`, `module_types`, `warnings`: [{`code`, `source`, `message`}]}.
///   Precisely, the top-level keys in order: `schemaVersion` (1); every member of trace::target but
///   `type`, in the JSON report's order (Kineto's `deviceProperties`, `distributedInfo`, ...) except the names this format uses
///   itself (`schemaVersion`, `displayTimeUnit`, `regionprof`, `traceEvents`); `displayTimeUnit` ("ns");
///   `regionprof`; `traceEvents` last. `device_tracing` is trace::device_tracing as is; `warnings` are
///   trace::warnings (the producers', not the analysis's); `run_wall_times_ns` are integers.
/// - Strings are JSON-escaped (control characters and DEL as escapes, never raw: Perfetto's tokenizer
///   rejects raw control bytes); valid UTF-8 passes through, and each invalid UTF-8 subpart is replaced by
///   U+FFFD (so only such a name does not come back byte for byte).
///
/// Streams: the output is written in chunks of about 1 MiB as it is formatted, never built whole.
/// Throws std::invalid_argument (before writing anything) when an index in `source` points outside its
/// table, and std::runtime_error when `out` fails.
///
/// ```
/// std::ofstream out("trace.json", std::ios::binary);
/// regionprof::write_chrome_trace(trace, out);
/// ```
void write_chrome_trace(const trace& source, std::ostream& out);

/// The profile's trace as a Chrome trace (write_chrome_trace), as text.
///
/// ```
/// std::string text = regionprof::to_chrome_trace(profile);
/// ```
std::string to_chrome_trace(const Profile& profile);

/// The diff as JSON (docs/cli.md, "Diff JSON"), one member per line, final newline.
std::string to_json(const profile_diff& diff);
/// The diff as Markdown: run totals, then one table of every region and domain, new and vanished regions,
/// then (with has_tree) the region tree's paths the same way.
std::string to_markdown(const profile_diff& diff);
/// A tree path as the views show it: `a > b > c`.
std::string path_text(const std::vector<std::string>& path);
/// The diff as one self-contained HTML page (inline CSS, SVG and script; nothing fetched): A against B per
/// region, each run a dot, the median a bar.
std::string to_html(const profile_diff& diff);


/// The job report as JSON (`"kind": "regionprof_job"`, schema_version 1; docs/report-schema.md): one
/// member per line, 2-space indent, final newline; each rank's profile as its JSON report (to_json), nested.
///
/// ```
/// std::ofstream("job.json") << regionprof::job_to_json(job);
/// ```
std::string job_to_json(const job_report& job);

/// The job report as Markdown: the stragglers first (each run's regions by time lost to the slowest
/// rank, max - median), then the ranks, the runs across ranks, and the warnings.
///
/// ```
/// std::cout << regionprof::job_to_markdown(job);
/// ```
std::string job_to_markdown(const job_report& job);

/// The job as a Chrome trace: one process per rank (pid = rank), run i of every rank starting at the
/// same time (the end of the slowest rank's run i - 1: clocks of different hosts are never compared),
/// and within a run its regions one after another in order of appearance, CPU time on thread 0 and
/// device time on thread 1 (their places inside a run are not measured, only their lengths).
///
/// ```
/// std::ofstream out("job_trace.json", std::ios::binary);
/// regionprof::write_job_trace(job, out);
/// ```
void write_job_trace(const job_report& job, std::ostream& out);

}  // namespace regionprof
