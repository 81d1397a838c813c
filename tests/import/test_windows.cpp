// The windowed parse must not depend on where windows end: generated traces (pretty and minified,
// plain and gzip, from memory and from a file) give the same records for every window size, and a
// syntax error deep in a file is reported at the same place.
#include <zlib.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "import_test_support.hpp"
#include "regionprof/import/import.hpp"

using namespace regionprof;

namespace {

/// A Kineto-shaped trace with the awkward parts windows can cut through: long names, escapes,
/// non-ASCII text, strings holding brackets, commas and quotes, nested args, fields in any order,
/// top-level members before and after traceEvents; torch's memory instants among the events. `pretty`: one
/// field per line, else one line.
std::string generated_trace(bool pretty, int events) {
  std::mt19937 random(12345);
  const std::string nl = pretty ? "\n" : "";
  const std::string names[] = {
      "aten::mm", "cudaLaunchKernel", "## forward ##", "caf\\u00e9 \\\"quoted\\\" {x: [1, 2]}, y",
      "\xe8\xa8\x88\xe7\xae\x97 \xf0\x9f\x98\x80 \\\\ back\\/slash", std::string(3000, 'k') + "_long_kernel_name",
      "tab\\tnewline\\n", "ends with backslash \\\\"};
  std::string out = "{" + nl + "\"schemaVersion\": 1," + nl +
                    "\"deviceProperties\": [{\"id\": 0, \"name\": \"GPU \\\"0\\\" ]}\", \"props\": [[1, 2], {\"a\": null}]}]," + nl +
                    "\"traceEvents\": [" + nl;
  for (int i = 0; i < events; ++i) {
    if (i != 0) out += "," + nl;
    const std::string& name = names[random() % std::size(names)];
    const long long ts = 1682725898236567LL + i * 7;
    const int which = static_cast<int>(random() % 5);
    std::string fields[8];
    std::string memory_name;  // a memory event's name, in place of the random one
    int n = 0;
    if (which == 0) {
      fields[n++] = "\"ph\": \"X\"";
      fields[n++] = "\"cat\": \"cpu_op\"";
      fields[n++] = "\"args\": {\"Input Dims\": [[2048, 1], [3]], \"note\": \"} ] , \\\" {\", \"nested\": {\"deep\": [true, false, null, -1.5e-3]}}";
    } else if (which == 1) {
      fields[n++] = "\"ph\": \"X\"";
      fields[n++] = "\"cat\": \"cuda_runtime\"";
      fields[n++] = "\"args\": {\"cbid\": 211, \"correlation\": " + std::to_string(1000 + i) + "}";
    } else if (which == 2) {
      fields[n++] = "\"cat\": \"kernel\"";
      fields[n++] = "\"ph\": \"X\"";
      fields[n++] = "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(1000 + i - 1) +
                    ", \"grid\": [1, 2, 3]}";
    } else if (which == 3) {
      fields[n++] = "\"ph\": \"X\"";
      fields[n++] = "\"cat\": \"user_annotation\"";
      fields[n++] = "\"args\": {\"domain\": \"d" + std::to_string(i % 3) + "\"}";
    } else if (i % 2 == 0) {
      // torch's [memory] / [OutOfMemory] instant (profile_memory=True): CPU or CUDA, args in two orders.
      const bool oom = i % 3 == 2;
      const std::string device = i % 8 == 0 ? "\"Device Type\": 1, \"Device Id\": " + std::to_string(i % 3)
                                            : "\"Device Type\": 0, \"Device Id\": -1";
      const std::string sign = !oom && i % 3 == 1 ? "-" : "";
      const std::string bytes = "\"Bytes\": " + sign + std::to_string(16 * i + 16);
      const std::string total = "\"Total Allocated\": " + std::to_string(1000 * i) + ", \"Total Reserved\": 0";
      fields[n++] = "\"ph\": \"i\"";
      fields[n++] = "\"cat\": \"cpu_instant_event\"";
      fields[n++] = "\"args\": {" + (i % 3 == 0 ? total + ", " + device + ", " + bytes
                                                : device + ", \"Addr\": " + std::to_string(140000000000LL + i) + ", " +
                                                      bytes + ", " + total) + "}";
      memory_name = oom ? "[OutOfMemory]" : "[memory]";
    } else {
      fields[n++] = "\"ph\": \"f\"";
      fields[n++] = "\"cat\": \"ac2g\"";
      fields[n++] = "\"id\": " + std::to_string(i);
    }
    fields[n++] = "\"name\": \"" + (memory_name.empty() ? name : memory_name) + "\"";
    fields[n++] = "\"pid\": " + std::string(i % 4 == 0 ? "\"Spans\"" : "4037");
    fields[n++] = "\"tid\": " + std::to_string(i % 3 == 0 ? -1 : 23695);
    fields[n++] = "\"ts\": " + std::to_string(ts) + (i % 2 ? ".125" : "");
    fields[n++] = "\"dur\": " + std::to_string(i % 50) + ".0";
    std::shuffle(fields + 3, fields + n, random);  // some fields before ph/cat, some after
    std::string event = "{";
    for (int f = 0; f < n; ++f) event += (f ? ", " + nl + "    " : nl + "    ") + fields[f];
    out += (pretty ? "  " : "") + event + nl + "  }";
  }
  out += nl + "]," + nl + "\"distributedInfo\": {\"rank\": 0, \"note\": \"[{,}]\"}," + nl +
         "\"traceName\": \"gen\"" + nl + "}" + nl;
  return out;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  BOOST_TEST_REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  BOOST_TEST_REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  const auto path = std::filesystem::temp_directory_path() / ("regionprof_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

kineto_import_options window(std::size_t bytes) {
  kineto_import_options options;
  options.window_bytes = bytes;
  return options;
}

const std::size_t window_sizes[] = {64, 100, 128, 257, 1000, 4096, 65536};

}  // namespace

BOOST_AUTO_TEST_SUITE(windows)

BOOST_AUTO_TEST_CASE(every_window_size_gives_the_same_trace) {
  for (const bool pretty : {true, false}) {
    BOOST_TEST_CONTEXT((pretty ? "pretty" : "minified")) {
      const std::string text = generated_trace(pretty, 400);
      const trace reference = import_kineto_trace_text(text, "whole", window(std::size_t{1} << 30));
      BOOST_TEST_REQUIRE(reference.intervals.size() > 200u);
      BOOST_TEST_REQUIRE(reference.device_ops.size() > 50u);
      BOOST_TEST_REQUIRE(reference.memory_events.size() > 20u);
      BOOST_TEST(reference.domains.size() == 4u);
      BOOST_TEST(!reference.target.foreign.empty());
      const std::string file = temp_file(pretty ? "pretty.json" : "minified.json", text);
      const std::string gz_file = temp_file(pretty ? "pretty.json.gz" : "minified.json.gz", gzip(text));
      for (const std::size_t bytes : window_sizes) {
        BOOST_TEST_CONTEXT("window " << bytes) {
          import_test::expect_same_trace(import_kineto_trace_text(text, "memory", window(bytes)), reference);
          import_test::expect_same_trace(import_kineto_trace(file, window(bytes)), reference);
          import_test::expect_same_trace(import_kineto_trace(gz_file, window(bytes)), reference);
        }
      }
      std::filesystem::remove(file);
      std::filesystem::remove(gz_file);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_cut_position_of_a_small_minified_trace) {
  // Newline-free JSON is cut by quote parity; every window size from 64 to 700 bytes moves the cut
  // across every kind of byte: inside strings, escapes, multi-byte UTF-8, numbers, between events.
  const std::string text = generated_trace(false, 24);
  const trace reference = import_kineto_trace_text(text, "whole", window(std::size_t{1} << 30));
  for (std::size_t bytes = 64; bytes <= 700; ++bytes) {
    BOOST_TEST_CONTEXT("window " << bytes) {
      import_test::expect_same_trace(import_kineto_trace_text(text, "memory", window(bytes)), reference);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_syntax_error_deep_in_the_file_is_reported_in_place_for_every_window) {
  std::string text = generated_trace(true, 300);
  // Break event 250: drop the comma after its first field.
  std::size_t at = 0;
  for (int i = 0; i <= 250; ++i) at = text.find("\n  {", at + 1);
  const std::size_t comma = text.find(", \n", at);  // the separator after its first field
  text.erase(comma, 1);
  std::uint64_t line = 1;
  for (std::size_t i = 0; i < comma; ++i) line += text[i] == '\n';
  const std::string file = temp_file("broken.json", text);
  for (const std::size_t bytes : window_sizes) {
    BOOST_TEST_CONTEXT("window " << bytes) {
      try {
        (void)import_kineto_trace(file, window(bytes));
        BOOST_FAIL("the broken trace must not import");
      } catch (const import_error& e) {
        BOOST_TEST(e.problem().starts_with("invalid JSON in traceEvents[250]"), e.problem());
        BOOST_TEST_REQUIRE(e.offset().has_value());
        BOOST_TEST(*e.offset() > comma);  // the next field's key, on the next line
        BOOST_TEST(e.line() == line + 1);
        BOOST_TEST(e.column() == 5u);
      }
    }
  }
  std::filesystem::remove(file);
}

BOOST_AUTO_TEST_CASE(an_event_larger_than_the_limit_is_an_error) {
  const std::string text = "[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + std::string(5000, 'n') +
                           "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}, " + "{\"ph\": \"X\"}]";
  kineto_import_options options = window(64);
  options.max_event_bytes = 1024;
  try {
    (void)import_kineto_trace_text(text, "huge", options);
    BOOST_FAIL("a 5 KB event must exceed a 1 KiB limit");
  } catch (const import_error& e) {
    BOOST_TEST(e.problem().starts_with("traceEvents[0] does not end within 1024 bytes"), e.problem());
  }
  options.max_event_bytes = 8192;
  BOOST_TEST(import_kineto_trace_text(text, "huge", options).intervals.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
