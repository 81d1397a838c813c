#include <sstream>
#include <utility>

#include "regionprof/output/output.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/analysis/releasing.hpp"

namespace regionprof {
namespace {

/// One file through the one writer: atomic, placeholders expanded, errors naming the path.
void write_one(const Profile& profile, output_format format, const std::string& path,
               const markdown_options& markdown = {}) {
  write_output(profile_writers(profile, markdown), format, path);
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

Profile Profile::analyzed_without_events(trace source, analysis_options options, report_context context) {
  analysis_result result = detail::analyze_releasing_intervals(source, options);
  return Profile(std::move(source), std::move(options), std::move(context), std::move(result)).without_events();
}

std::string Profile::json() const { return to_json(result_, source_, options_, context_); }

std::string Profile::markdown(const markdown_options& markdown) const {
  return to_markdown(result_, source_, options_, context_, markdown);
}

std::string Profile::html() const { return to_html(result_, source_, options_, context_); }

std::string Profile::terminal_table(bool colour, std::size_t width) const {
  return to_terminal_table(result_, source_, colour, width, context_);
}

std::string Profile::chrome_trace() const {
  std::ostringstream out;
  write_chrome_trace(source_, out);
  return std::move(out).str();
}

void Profile::write_json(const std::string& path) const { write_one(*this, output_format::json, path); }

void Profile::write_markdown(const std::string& path, const markdown_options& markdown) const {
  write_one(*this, output_format::markdown, path, markdown);
}

void Profile::write_trace(const std::string& path) const { write_one(*this, output_format::chrome_trace, path); }

}  // namespace regionprof
