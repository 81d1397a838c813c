// The output set and write_outputs: every file a command or the library writes, through one writer.
#include <algorithm>
#include <exception>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#include "regionprof/output/output.hpp"

namespace regionprof {

std::string_view to_string(output_format format) noexcept {
  switch (format) {
    case output_format::json: return "JSON";
    case output_format::markdown: return "Markdown";
    case output_format::html: return "HTML";
    case output_format::chrome_trace: return "Chrome trace";
    case output_format::terminal_table: return "terminal table";
  }
  return "unknown";
}

bool output_set::has(output_format format) const noexcept {
  return to_stdout == format ||
         std::any_of(files.begin(), files.end(), [format](const output_file& f) { return f.format == format; });
}

output_set& output_set::add(output_format format, std::string path) {
  files.push_back({format, std::move(path)});
  return *this;
}

output_set output_set::expanded(const process_identity& identity) const {
  output_set result = *this;
  for (output_file& file : result.files) {
    try {
      file.path = expand_output_path(file.path, identity);
    } catch (const process_identity_error& e) {
      throw process_identity_error(std::string(to_string(file.format)) + ": " + e.what());
    }
  }
  result.placeholders_expanded = true;
  return result;
}

namespace {

const std::function<void(std::ostream&)>& writer_of(const output_writers& writers, output_format format) {
  switch (format) {
    case output_format::json: return writers.json;
    case output_format::markdown: return writers.markdown;
    case output_format::html: return writers.html;
    case output_format::chrome_trace: return writers.chrome_trace;
    case output_format::terminal_table: return writers.terminal_table;
  }
  return writers.json;
}

/// "JSON report", "Markdown job report", "Chrome trace", "job Chrome trace".
std::string what_of(const output_writers& writers, output_format format) {
  if (format == output_format::chrome_trace) {
    const std::string_view noun = writers.noun;
    const std::size_t last = noun.rfind(' ');
    return last == std::string_view::npos ? "Chrome trace" : std::string(noun.substr(0, last)) + " Chrome trace";
  }
  return std::string(to_string(format)) + " " + writers.noun;
}

/// The set with placeholders expanded: with this process's identity, for the paths that hold a `%`.
output_set final_paths(const output_set& outputs) {
  if (outputs.placeholders_expanded) return outputs;
  output_set result = outputs;
  std::optional<process_identity> identity;
  for (output_file& file : result.files) {
    if (file.path.find('%') == std::string::npos) continue;
    if (!identity) identity = this_process_identity();
    try {
      file.path = expand_output_path(file.path, *identity);
    } catch (const process_identity_error& e) {
      throw process_identity_error(std::string(to_string(file.format)) + ": " + e.what());
    }
  }
  result.placeholders_expanded = true;
  return result;
}

}  // namespace

void write_outputs(const output_set& outputs, const output_writers& writers, std::ostream& out,
                   const output_failure_handler& on_failure) {
  const output_set final = final_paths(outputs);
  for (const output_file& file : final.files) {
    const std::string what = what_of(writers, file.format);
    try {
      const auto& write = writer_of(writers, file.format);
      if (!write) throw output_error(file.path, what, "no such output here");
      write_file_atomically(file.path, what, write);
    } catch (const output_error& e) {
      if (!on_failure) throw;
      on_failure(file, e);
    }
  }
  if (final.to_stdout) {
    const std::string what = what_of(writers, *final.to_stdout);
    const auto& write = writer_of(writers, *final.to_stdout);
    std::string reason;
    if (!write) {
      reason = "no such output here";
    } else {
      write(out);
      out.flush();
      if (!out) reason = "the stream failed";
    }
    if (!reason.empty()) {
      const output_error error("", what, reason);
      if (!on_failure) throw error;
      on_failure(output_file{*final.to_stdout, ""}, error);
    }
  }
}

void write_output(const output_writers& writers, output_format format, const std::string& path) {
  output_set outputs;
  outputs.add(format, path);
  std::ostringstream no_stdout;  // the set sends nothing there
  write_outputs(outputs, writers, no_stdout);
}

}  // namespace regionprof
