#include "report_options.hpp"

#include <limits>
#include <ostream>
#include <stdexcept>

namespace regionprof::cli {
namespace {

void check_rule(std::string_view flag, const name_rule& rule, std::string_view role) {
  try {
    validate_name_rule(rule, role);
  } catch (const std::invalid_argument& e) {
    throw usage_error("option " + std::string(flag) + ": " + e.what());
  }
}

}  // namespace

bool parse_report_flag(arguments& args, report_options& options) {
  if (auto value = args.value_of("--run-marker")) {
    // A regex over every domain: Kineto annotations and NVTX ranges alike.
    name_rule rule{match_kind::regex, *value, "run", ""};
    check_rule("--run-marker", rule, "run marker");
    options.analysis.run_marker = std::move(rule);
    return true;
  }
  if (auto value = args.value_of("--region")) {
    name_rule rule;
    try {
      rule = parse_region_arg(*value);
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("option --region: ") + e.what());
    }
    if (!options.custom_regions) options.analysis.region_rules.clear();
    options.custom_regions = true;
    options.analysis.region_rules.push_back(std::move(rule));
    return true;
  }
  if (args.switch_of("--cross-thread")) {
    options.analysis.cross_thread = true;
    return true;
  }
  if (auto value = args.value_of("--row-limit")) {
    options.analysis.row_limit = parse_count("--row-limit", *value, 1, 1'000'000);
    return true;
  }
  if (auto value = args.value_of("-o")) {
    options.json_path = std::move(*value);
    return true;
  }
  if (auto value = args.value_of("--markdown")) {
    options.markdown_path = std::move(*value);
    return true;
  }
  if (auto value = args.value_of("--trace")) {
    options.trace_path = std::move(*value);
    return true;
  }
  return false;
}

std::string_view report_flags_synopsis() {
  return "[--run-marker REGEX] [--region REGEX[=KIND]]... [--cross-thread] [--row-limit N]\n"
         "         [-o OUT.json] [--markdown OUT.md] [--trace OUT.json]";
}

std::string_view report_flags_help() {
  return R"(Runs and regions:
  --run-marker REGEX    Ranges whose whole name matches REGEX (ECMAScript) mark the runs, in any
                        domain: run i is the i-th marker in time. Default: the range
                        'regionprof.profiled_run' in the NVTX domain 'regionprof'.
  --region REGEX[=KIND] Ranges whose whole name matches REGEX are regions of kind KIND (default
                        'region'). The region id is KIND:<first capture group>, or KIND:<whole name>
                        when REGEX has no group. May repeat: the first matching rule wins. Given
                        rules replace the defaults ('aot_module:' and 'untuned_module:' prefixes).
                        KIND is the text after the last '=' when it is an identifier, so REGEX may
                        contain '=' itself.
  --cross-thread        Also attribute work on threads without a run marker (autograd, data
                        loaders) to the run whose marker interval contains it (off: such work is
                        counted in an OFF_THREAD_EVENTS warning).
  --row-limit N         Rows per key-average table (default 20).

Outputs:
  -o OUT.json           Write the JSON report (schema_version 1) to OUT.json. Without -o, the
                        Markdown report goes to standard output.
  --markdown OUT.md     Write the Markdown report to OUT.md.
  --trace OUT.json      Write the trace as a Chrome trace (Perfetto, chrome://tracing), in
                        torch.profiler's conventions, readable by regionprof analyze again.
)";
}

void write_reports(const Profile& profile, const report_options& options, std::ostream& out) {
  if (options.json_path) profile.write_json(*options.json_path);
  if (options.markdown_path) profile.write_markdown(*options.markdown_path);
  if (options.trace_path) profile.write_trace(*options.trace_path);
  if (!options.json_path) {
    out << profile.markdown();
    out.flush();
    if (!out) throw std::runtime_error("cannot write the Markdown report to standard output");
  }
}

}  // namespace regionprof::cli
