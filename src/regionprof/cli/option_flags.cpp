#include "regionprof/cli/option_flags.hpp"

#include <memory>

namespace regionprof::cli {

void declare_option_flags(command_line& line, profile_options& options, options::option_surface surface) {
  // The rules --region gave so far: each occurrence sets all of them (the first replaces the defaults).
  auto regions = std::make_shared<std::vector<std::string>>();
  for (const bool outputs : {false, true}) {
    line.section(outputs ? "Outputs" : "Runs and regions");
    for (const options::option* o : options::options_of(surface)) {
      if (o->flag.empty() || (o->kind == options::option_kind::optional_path) != outputs) continue;
      const options::option& opt = *o;
      if (opt.kind == options::option_kind::flag) {
        line.flag(opt.flag, opt.doc, [&options, &opt] { options::set_option(options, opt, opt.flag, true); });
      } else if (opt.kind == options::option_kind::region_rules) {
        line.repeated(opt.flag, opt.value_name, opt.doc,
                      [&options, &opt, regions](std::string_view setting, std::string_view text) {
                        regions->emplace_back(text);
                        options::set_option(options, opt, setting, *regions);
                      });
      } else {
        line.value(opt.flag, opt.value_name, opt.doc,
                   [&options, &opt](std::string_view setting, std::string_view text) {
                     options::set_option(options, opt, setting, options::parse_option_text(opt, setting, text));
                   });
      }
    }
  }
}

output_set outputs_of(const profile_options& options) {
  return options::command_outputs(options.json_output, options.markdown_output, options.trace_file);
}

}  // namespace regionprof::cli
