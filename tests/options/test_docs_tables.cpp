// The options tables of docs/cli.md and docs/python.md are made from the option table (each option's one
// declaration): between `<!-- generated: options SURFACE -->` and `<!-- end generated -->` a doc holds
// exactly what render() gives. A stale table fails here; REGIONPROF_UPDATE_DOCS=1 rewrites them.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/options/option_table.hpp"

using namespace regionprof::options;

namespace {

/// The help text on one line, with `|` escaped for a Markdown table.
std::string one_line(std::string_view doc) {
  std::string out;
  for (const char c : doc) {
    if (c == '\n') {
      out += ' ';
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

std::string code(std::string_view text) { return "`" + std::string(text) + "`"; }

struct surface_name {
  option_surface surface;
  std::string_view name;
};
constexpr surface_name surfaces[] = {{cli_analyze, "cli_analyze"}, {cli_run, "cli_run"},
                                     {environment, "environment"}, {py_profile, "py_profile"},
                                     {py_analyze, "py_analyze"},   {py_run, "py_run"},
                                     {py_steps, "py_steps"}};

std::string render(option_surface surface) {
  std::ostringstream out;
  const bool command = surface == cli_analyze || surface == cli_run;
  if (command) {
    out << "| flag | default | meaning |\n| --- | --- | --- |\n";
  } else if (surface == environment) {
    out << "| variable | flag | meaning |\n| --- | --- | --- |\n";
  } else {
    out << "| keyword | default | meaning |\n| --- | --- | --- |\n";
  }
  for (const option* o : options_of(surface)) {
    if (command) {
      const std::string shown = o->value_name.empty() ? std::string(o->flag) : std::string(o->flag) + " " + std::string(o->value_name);
      out << "| " << code(shown) << " | " << default_text(*o, false) << " | " << one_line(o->doc) << " |\n";
    } else if (surface == environment) {
      out << "| " << code(o->variable) << " | " << (o->flag.empty() ? "(none)" : code(o->flag)) << " | "
          << one_line(o->doc) << " |\n";
    } else {
      out << "| " << code(o->python) << " | " << code(default_text(*o, true)) << " | " << one_line(o->doc) << " |\n";
    }
  }
  return out.str();
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// `text` with every generated section rendered anew; `sections` counts them.
std::string regenerated(const std::string& text, int& sections) {
  static constexpr std::string_view begin = "<!-- generated: options ";
  static constexpr std::string_view end = "<!-- end generated -->";
  std::string out;
  std::size_t at = 0;
  for (std::size_t found; (found = text.find(begin, at)) != std::string::npos;) {
    const std::size_t name_end = text.find(" -->\n", found);
    const std::size_t close = text.find(end, found);
    BOOST_REQUIRE(name_end != std::string::npos && close != std::string::npos && name_end < close);
    const std::string name = text.substr(found + begin.size(), name_end - found - begin.size());
    const surface_name* s = nullptr;
    for (const surface_name& candidate : surfaces) {
      if (candidate.name == name) s = &candidate;
    }
    BOOST_REQUIRE_MESSAGE(s != nullptr, "unknown options table '" << name << "'");
    out += text.substr(at, name_end + 5 - at) + render(s->surface);
    at = close;
    ++sections;
  }
  return out + text.substr(at);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(docs_tables)

BOOST_AUTO_TEST_CASE(the_options_tables_of_the_docs_are_the_declarations) {
  const bool update = std::getenv("REGIONPROF_UPDATE_DOCS") != nullptr;
  int sections = 0;
  for (const char* doc : {"docs/cli.md", "docs/python.md"}) {
    const std::string path = std::string(REGIONPROF_SOURCE_DIR) + "/" + doc;
    const std::string text = read(path);
    const std::string current = regenerated(text, sections);
    if (update && current != text) std::ofstream(path, std::ios::binary) << current;
    BOOST_TEST((update || current == text), doc << ": an options table is stale; run REGIONPROF_UPDATE_DOCS=1 "
                                                << "build/bin/test_options --run_test=docs_tables");
  }
  BOOST_TEST(sections == 7);  // analyze, run, environment; profile, analyze, run, profiler
}

BOOST_AUTO_TEST_CASE(a_row_is_the_declaration) {
  const std::string run = render(cli_run);
  BOOST_TEST(run.find("| `--row-limit N` | 20 | Rows per key-average table and per region's ops (default 20). |\n") != std::string::npos);
  BOOST_TEST(run.find("| `--cross-thread` | off | Also attribute") != std::string::npos);
  const std::string py = render(py_profile);
  BOOST_TEST(py.find("| `measured_runs` | `10` | Recorded, reported runs") != std::string::npos);
  BOOST_TEST(py.find("| `regions` | `None` |") != std::string::npos);
  BOOST_TEST(render(environment).find("| `REGIONPROF_SYNC_RECORDS` | (none) |") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
