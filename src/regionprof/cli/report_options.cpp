#include "regionprof/cli/report_options.hpp"

namespace regionprof::cli {

void declare_report_options(command_line& line, report_settings& settings) {
  line.section("Runs and regions")
      .value("--run-marker", "REGEX",
             "Ranges whose whole name matches REGEX mark the runs, in any domain:\n"
             "run i is the i-th marker in time. Default: the range\n"
             "'regionprof.profiled_run' in the NVTX domain 'regionprof'.",
             [&settings](std::string_view setting, std::string_view regex) { settings.set_run_marker(setting, regex); })
      .repeated("--region", "REGEX[=KIND]",
                "Ranges whose whole name matches REGEX are regions of kind KIND\n"
                "(default 'region'). The region id is KIND:<first capture group>,\n"
                "or KIND:<whole name> when REGEX has no group. May repeat:\n"
                "the first matching rule wins. Given rules replace the defaults\n"
                "('aot_module:' and 'untuned_module:' prefixes). KIND is the text after\n"
                "the last '=' when it is an identifier, so REGEX may contain '=' itself.\n"
                "REGEX is RE2 syntax (close to Python's re: \\d, [a-z], (?i), groups;\n"
                "no backreferences or lookaround), matched in linear time; an invalid\n"
                "or unsupported pattern is a usage error that names the rule.",
                [&settings](std::string_view setting, std::string_view arg) { settings.add_region(setting, arg); })
      .flag("--cross-thread",
            "Also attribute work on threads without a run marker (autograd, data\n"
            "loaders) to the run whose marker interval contains it (off: such work is\n"
            "counted in an OFF_THREAD_EVENTS warning).",
            [&settings] { settings.analysis.cross_thread = true; })
      .value("--graph-attribution", "MODE",
             "Who owns the kernels of a CUDA graph replay: 'capture' (default), the\n"
             "region open where each node was captured, in the replay's run; or\n"
             "'launch', the region around the graph launch.",
             [&settings](std::string_view setting, std::string_view mode) {
               settings.set_graph_attribution(setting, mode);
             })
      .value("--row-limit", "N", "Rows per key-average table (default 20).",
             [&settings](std::string_view setting, std::string_view n) { settings.set_row_limit(setting, n); });
  line.section("Outputs")
      .value("-o", "OUT.json",
             "Write the JSON report (schema_version 1) to OUT.json. Without -o, the\n"
             "Markdown report goes to standard output.",
             [&settings](std::string_view, std::string_view path) { settings.json_path = path; })
      .value("--markdown", "OUT.md", "Write the Markdown report to OUT.md.",
             [&settings](std::string_view, std::string_view path) { settings.markdown_path = path; })
      .value("--trace", "OUT.json",
             "Write the trace as a Chrome trace (Perfetto, chrome://tracing), in\n"
             "torch.profiler's conventions, readable by regionprof analyze again.",
             [&settings](std::string_view, std::string_view path) { settings.trace_path = path; });
}

}  // namespace regionprof::cli
