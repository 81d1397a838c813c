#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "regionprof/profile.hpp"
#include "report/json_report.hpp"
#include "report/markdown_report.hpp"

namespace regionprof {
namespace {

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw std::runtime_error("regionprof: cannot open '" + path + "' for writing: " + std::strerror(errno) +
                             " (check that the directory exists and is writable)");
  }
  return out;
}

void finish(std::ofstream& out, const std::string& path) {
  out.flush();
  if (!out) throw std::runtime_error("regionprof: writing '" + path + "' failed (disk full?)");
}

}  // namespace

Profile::Profile(trace source, analysis_options options, report_context context)
    : source_(std::move(source)), options_(std::move(options)), context_(std::move(context)),
      result_(analyze(source_, options_)) {}

Profile::Profile(trace source, analysis_options options, report_context context, analysis_result result)
    : source_(std::move(source)), options_(std::move(options)), context_(std::move(context)),
      result_(std::move(result)) {}

Profile Profile::without_events() && {
  trace target;
  target.target_type = std::move(source_.target_type);
  target.target_extra_json = std::move(source_.target_extra_json);
  target.device_tracing = source_.has_device_data();
  return Profile(std::move(target), std::move(options_), std::move(context_), std::move(result_));
}

std::string Profile::json() const { return to_json(result_, source_, options_, context_); }

std::string Profile::markdown(const markdown_options& markdown) const {
  return to_markdown(result_, source_, options_, context_, markdown);
}

std::string Profile::html() const { return to_html(result_, source_, options_, context_); }

std::string Profile::terminal_table(bool colour, std::size_t width) const {
  return to_terminal_table(result_, source_, colour, width);
}

std::string Profile::chrome_trace() const {
  std::ostringstream out;
  write_chrome_trace(source_, out);
  return std::move(out).str();
}

// Streamed to the file: neither the report's text nor a DOM of it is held whole.
void Profile::write_json(const std::string& path) const {
  std::ofstream out = open_for_writing(path);
  std::string buffer;
  report_detail::write_json_report(buffer, &out, result_, source_, options_, context_);
  out << '\n';
  finish(out, path);
}
// Streamed to the file, section by section.
void Profile::write_markdown(const std::string& path, const markdown_options& markdown) const {
  std::ofstream out = open_for_writing(path);
  std::string buffer;
  report_detail::write_markdown_report(buffer, &out, result_, source_, options_, context_, markdown);
  finish(out, path);
}
// Streamed to the file: a large trace is never held as one string.
void Profile::write_trace(const std::string& path) const {
  std::ofstream out = open_for_writing(path);
  try {
    write_chrome_trace(source_, out);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error("regionprof: writing '" + path + "' failed: " + error.what());
  }
  finish(out, path);
}

}  // namespace regionprof
