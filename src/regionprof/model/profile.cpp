#include "regionprof/model/profile.hpp"

#include <utility>

#include "regionprof/analysis/releasing.hpp"

namespace regionprof {

Profile::Profile(trace source, analysis_options options, report_context context)
    : source_(std::move(source)), options_(std::move(options)), context_(std::move(context)),
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
  return Profile(std::move(source), std::move(options), std::move(context), std::move(result)).without_events();
}

}  // namespace regionprof
