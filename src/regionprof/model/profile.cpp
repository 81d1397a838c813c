#include "regionprof/model/profile.hpp"

#include <ctime>
#include <utility>

#include "regionprof/analysis/releasing.hpp"

namespace regionprof {

namespace {

/// `context` with created_at set to now when empty: an analysed profile's time.
report_context stamped(report_context context) {
  if (context.created_at.empty()) context.created_at = utc_timestamp_now();
  return context;
}

}  // namespace

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  const std::size_t length = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buffer, length);
}

Profile::Profile(trace source, analysis_options options, report_context context)
    : source_(std::move(source)), options_(std::move(options)), context_(stamped(std::move(context))),
      result_(analyze(source_, options_)) {}

Profile::Profile(trace source, analysis_options options, report_context context, analysis_result result)
    : source_(std::move(source)), options_(std::move(options)), context_(std::move(context)),
      result_(std::move(result)) {}

Profile Profile::without_events() && {
  trace target;
  target.target = std::move(source_.target);
  target.device_tracing = source_.has_device_data();
  return Profile(std::move(target), std::move(options_), std::move(context_), std::move(result_));
}

Profile Profile::analyzed_without_events(trace source, analysis_options options, report_context context) {
  analysis_result result = detail::analyze_releasing_intervals(source, options);
  return Profile(std::move(source), std::move(options), stamped(std::move(context)), std::move(result))
      .without_events();
}

}  // namespace regionprof
