// Hostile Kineto trace inputs for the importer and CLI tests (tests/import/test_hostile_input.cpp,
// tests/cli/test_cli_hostile_input.cpp): generated in the test, never checked in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hostile {

/// `{"ph":"X","cat":CAT,"name":NAME,"pid":1,"tid":TID,"ts":TS,"dur":DUR[,EXTRA]}`. NAME is written
/// between quotes as it is (the caller escapes it), TS and DUR as raw JSON text, EXTRA as raw members.
std::string complete_event(std::string_view cat, std::string_view name, std::string_view ts, std::string_view dur,
                           int tid = 1, std::string_view extra = {});

/// `{"traceEvents":[E0,\nE1,...]}`.
std::string trace_of(const std::vector<std::string>& events);

/// `depth` nested empty arrays: `[[...]]`.
std::string nested_array(std::size_t depth);

/// `n` user_annotation ranges on thread 1, each inside the one before: event i starts at i us and
/// lasts 2n + 10 - 2i us; event 0 is "step", event i > 0 is "r<i>".
std::string nested_ranges_trace(std::size_t n);

/// A "step" range (0 to 100 us) holding a user_annotation of `name_bytes` bytes ("r" then 'x's,
/// 10 to 30 us) and a cpu_op "aten::mm" (12 to 15 us).
std::string long_name_trace(std::size_t name_bytes);

/// Writes a trace of `events` complete events on one thread to `path`, one per line: every 1000th
/// (from the first) a "step" range of 9995 us holding the 999 cpu_ops that follow ("aten::op<i % 50>",
/// 5 us each, 10 us apart). Returns the file's size in bytes.
std::uint64_t write_many_events_trace(const std::string& path, std::size_t events);

/// Writes a trace of `runs` "step" ranges of 1 us, 2 us apart, to `path`: all on thread 1, or each
/// on a thread of its own (`thread_per_run`). Returns the file's size in bytes.
std::uint64_t write_runs_trace(const std::string& path, std::size_t runs, bool thread_per_run);

/// `text` as one gzip member.
std::string gzip(std::string_view text);

}  // namespace hostile
