// The Chrome trace export: Kineto categories, exact ts text, ac2g flows, metadata, escaping, streaming, memory
// events (instants and counter tracks).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <tuple>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "support/report_fixtures.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

/// Intervals (in this order):
///   0 main   range   "regionprof.profiled_run" (domain regionprof)  12 345 678 .. 22 345 678
///   1 main   range   "aot_module:encoder"                            12 400 000 .. 15 000 000
///   2 main   cpu_op  "aten::mm"                                      12 500 000 .. 14 000 000
///   3 main   runtime "cudaGraphLaunch"  correlation 7                12 600 000 .. 12 700 000
///   4 main   driver  "cuLaunchKernel"   correlation 8 (no device op) 13 000 000 .. 13 000 500
///   5 worker python  "forward"                                       12 345 000 .. 12 346 000
///   6 worker runtime "cudaMemcpyAsync"  correlation 9                12 345 100 .. 12 345 200
/// Device ops:
///   0 kernel "k1"          correlation 7, device 0 stream 7   12 800 000 .. 12 900 000
///   1 kernel "k2"          correlation 7, device 0 stream 7   12 900 000 .. 12 950 001  (a graph: 2 ops)
///   2 memcpy "Memcpy HtoD" correlation 9, device 1 stream 3   12 346 000 .. 12 347 000, 4096 bytes
///   3 memset "Memset"      correlation 99 (no API call), device 0 stream 20, 8 bytes
trace sample_trace() {
  trace t;
  const thread_index main = t.add_thread(100, 101, "main");
  const thread_index worker = t.add_thread(100, 102);
  const domain_index rp = t.domain("regionprof");
  const auto add = [&](std::int64_t start, std::int64_t end, const char* name, thread_index thread,
                       interval_kind kind, std::uint32_t correlation = 0, domain_index domain = 0) {
    t.intervals.push_back({start, end, t.strings.intern(name), thread, correlation, domain, kind});
  };
  add(12345678, 22345678, "regionprof.profiled_run", main, interval_kind::range, 0, rp);
  add(12400000, 15000000, "aot_module:encoder", main, interval_kind::range);
  add(12500000, 14000000, "aten::mm", main, interval_kind::cpu_op);
  add(12600000, 12700000, "cudaGraphLaunch", main, interval_kind::runtime_api, 7);
  add(13000000, 13000500, "cuLaunchKernel", main, interval_kind::driver_api, 8);
  add(12345000, 12346000, "forward", worker, interval_kind::python_function);
  add(12345100, 12345200, "cudaMemcpyAsync", worker, interval_kind::runtime_api, 9);
  t.device_ops.push_back({12800000, 12900000, 0, t.strings.intern("k1"), 7, 7, 0, device_op_kind::kernel});
  t.device_ops.push_back({12900000, 12950001, 0, t.strings.intern("k2"), 7, 7, 0, device_op_kind::kernel});
  t.device_ops.push_back({12346000, 12347000, 4096, t.strings.intern("Memcpy HtoD"), 9, 3, 1, device_op_kind::memcpy});
  t.device_ops.push_back({20000000, 20000100, 8, t.strings.intern("Memset"), 99, 20, 0, device_op_kind::memset});
  t.device_tracing = true;
  return t;
}

std::string chrome_text(const trace& t) {
  std::ostringstream out;
  write_chrome_trace(t, out);
  return out.str();
}

std::vector<json::object> events_with(const json::array& events, std::string_view ph) {
  std::vector<json::object> found;
  for (const json::value& event : events) {
    if (event.at("ph").as_string() == json::string_view(ph.data(), ph.size())) found.push_back(event.as_object());
  }
  return found;
}

/// A streambuf that records the size of every write handed to it.
class recording_buffer : public std::streambuf {
 public:
  std::string text;
  std::vector<std::size_t> writes;

 protected:
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    text.append(data, static_cast<std::size_t>(count));
    writes.push_back(static_cast<std::size_t>(count));
    return count;
  }
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      text += traits_type::to_char_type(c);
      writes.push_back(1);
    }
    return traits_type::not_eof(c);
  }
};

/// A streambuf that accepts `capacity` bytes and then fails (a full disk).
class full_buffer : public std::streambuf {
 public:
  explicit full_buffer(std::size_t capacity) : capacity_(capacity) {}

 protected:
  std::streamsize xsputn(const char*, std::streamsize count) override {
    const auto accepted = std::min<std::streamsize>(count, static_cast<std::streamsize>(capacity_));
    capacity_ -= static_cast<std::size_t>(accepted);
    return accepted;
  }
  int_type overflow(int_type c) override {
    if (capacity_ == 0) return traits_type::eof();
    --capacity_;
    return traits_type::not_eof(c);
  }

 private:
  std::size_t capacity_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(chrome_trace)

BOOST_AUTO_TEST_CASE(complete_events_with_kineto_categories) {
  const std::string text = chrome_text(sample_trace());
  const json::object root = parse(text).as_object();
  BOOST_TEST(str(root.at("displayTimeUnit")) == "ns");
  BOOST_TEST(root.at("schemaVersion").as_int64() == 1);
  BOOST_TEST(keys(root).back() == "traceEvents");  // events last: a streaming reader sees the rest first
  const json::array& events = root.at("traceEvents").as_array();
  const auto complete = events_with(events, "X");
  BOOST_TEST_REQUIRE(complete.size() == 11u);

  // CPU intervals in trace order, then device ops in trace order.
  std::vector<std::string> names, cats;
  for (const auto& event : complete) {
    names.push_back(str(event.at("name")));
    cats.push_back(str(event.at("cat")));
  }
  BOOST_TEST(names == (std::vector<std::string>{"regionprof.profiled_run", "aot_module:encoder", "aten::mm",
                                                "cudaGraphLaunch", "cuLaunchKernel", "forward", "cudaMemcpyAsync", "k1",
                                                "k2", "Memcpy HtoD", "Memset"}),
             boost::test_tools::per_element());
  BOOST_TEST(cats == (std::vector<std::string>{"user_annotation", "user_annotation", "cpu_op", "cuda_runtime",
                                               "cuda_driver", "python_function", "cuda_runtime", "kernel", "kernel",
                                               "gpu_memcpy", "gpu_memset"}),
             boost::test_tools::per_element());

  // The run marker: on its thread, named intact, with its domain.
  const json::object& marker = complete[0];
  BOOST_TEST(marker.at("pid").as_int64() == 100);
  BOOST_TEST(marker.at("tid").as_int64() == 101);
  BOOST_TEST(str(marker.at("args").at("domain")) == "regionprof");
  BOOST_TEST(keys(marker) == (std::vector<std::string>{"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"}),
             boost::test_tools::per_element());
  BOOST_TEST(!complete[1].contains("args"));  // a range in the default domain, not an API call
  BOOST_TEST(!complete[2].contains("args"));
  BOOST_TEST(complete[3].at("args").at("correlation").as_int64() == 7);
  BOOST_TEST(complete[4].at("args").at("correlation").as_int64() == 8);
  BOOST_TEST(complete[6].at("tid").as_int64() == 102);

  // Device ops on pid = device, tid = stream, with device/stream/correlation/bytes.
  const json::object& memcpy_op = complete[9];
  BOOST_TEST(memcpy_op.at("pid").as_int64() == 1);
  BOOST_TEST(memcpy_op.at("tid").as_int64() == 3);
  const json::object& args = memcpy_op.at("args").as_object();
  BOOST_TEST(keys(args) == (std::vector<std::string>{"device", "stream", "correlation", "bytes"}),
             boost::test_tools::per_element());
  BOOST_TEST(args.at("device").as_int64() == 1);
  BOOST_TEST(args.at("stream").as_int64() == 3);
  BOOST_TEST(args.at("correlation").as_int64() == 9);
  BOOST_TEST(args.at("bytes").as_int64() == 4096);
  BOOST_TEST(keys(complete[7].at("args").as_object()) == (std::vector<std::string>{"device", "stream", "correlation"}),
             boost::test_tools::per_element());
  BOOST_TEST(complete[10].at("args").at("bytes").as_int64() == 8);
}

BOOST_AUTO_TEST_CASE(timestamps_are_exact_decimal_text) {
  const std::string text = chrome_text(sample_trace());
  // ts/dur in us with the ns as 3 decimals, written from integers.
  BOOST_TEST(text.find(R"("name":"regionprof.profiled_run","pid":100,"tid":101,"ts":12345.678,"dur":10000.000)") !=
             std::string::npos);
  BOOST_TEST(text.find(R"("name":"k2","pid":0,"tid":7,"ts":12900.000,"dur":50.001)") != std::string::npos);
  BOOST_TEST(text.find(R"("name":"cuLaunchKernel","pid":100,"tid":101,"ts":13000.000,"dur":0.500)") != std::string::npos);

  // Epoch-sized timestamps keep every nanosecond (a double would not).
  trace big;
  const thread_index thread = big.add_thread(1, 1);
  big.intervals.push_back({1695835542514261123, 1695835542514262124, big.strings.intern("op"), thread, 0, 0,
                           interval_kind::cpu_op});
  BOOST_TEST(chrome_text(big).find(R"("ts":1695835542514261.123,"dur":1.001)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(flows_pair_api_calls_with_their_device_ops) {
  const json::array events = parse(chrome_text(sample_trace())).at("traceEvents").as_array();
  const auto starts = events_with(events, "s");
  const auto finishes = events_with(events, "f");
  const auto complete = events_with(events, "X");
  // Correlation 7 (a graph: two kernels) and 9 have both sides; 8 has no device op and 99 no API call.
  BOOST_TEST_REQUIRE(starts.size() == 2u);
  BOOST_TEST_REQUIRE(finishes.size() == 3u);
  std::map<std::int64_t, int> finishes_per_id;
  for (const auto& flow : finishes) {
    BOOST_TEST(str(flow.at("cat")) == "ac2g");
    BOOST_TEST(str(flow.at("name")) == "ac2g");
    BOOST_TEST(str(flow.at("bp")) == "e");
    ++finishes_per_id[flow.at("id").as_int64()];
    // It sits on its device op: same track, same ts, same correlation.
    const auto op = std::find_if(complete.begin(), complete.end(), [&](const json::object& event) {
      return event.at("pid") == flow.at("pid") && event.at("tid") == flow.at("tid") && event.at("ts") == flow.at("ts") &&
             event.contains("args") && event.at("args").as_object().contains("device") &&
             event.at("args").at("correlation") == flow.at("id");
    });
    BOOST_TEST((op != complete.end()));
  }
  BOOST_TEST(finishes_per_id[7] == 2);
  BOOST_TEST(finishes_per_id[9] == 1);
  for (const auto& flow : starts) {
    BOOST_TEST(str(flow.at("cat")) == "ac2g");
    BOOST_TEST(!flow.contains("bp"));
    const auto call = std::find_if(complete.begin(), complete.end(), [&](const json::object& event) {
      return event.at("pid") == flow.at("pid") && event.at("tid") == flow.at("tid") && event.at("ts") == flow.at("ts") &&
             (event.at("cat") == "cuda_runtime" || event.at("cat") == "cuda_driver") &&
             event.at("args").at("correlation") == flow.at("id");
    });
    BOOST_TEST((call != complete.end()));
  }
  BOOST_TEST(starts[0].at("id").as_int64() == 7);
  BOOST_TEST(starts[0].at("tid").as_int64() == 101);
  BOOST_TEST(starts[1].at("id").as_int64() == 9);
  BOOST_TEST(starts[1].at("tid").as_int64() == 102);
}

BOOST_AUTO_TEST_CASE(metadata_names_threads_devices_and_streams) {
  const json::array events = parse(chrome_text(sample_trace())).at("traceEvents").as_array();
  const auto metadata = events_with(events, "M");
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t, std::string>> seen;
  for (const auto& event : metadata) {
    seen.emplace_back(str(event.at("name")), event.at("pid").as_int64(), event.at("tid").as_int64(),
                      str(event.at("args").at("name")));
  }
  using row = std::tuple<std::string, std::int64_t, std::int64_t, std::string>;
  // The named CPU thread only (the worker has no name), then each device and its streams in order.
  const std::vector<row> expected{{"thread_name", 100, 101, "main"}, {"process_name", 0, 0, "GPU 0"},
                                  {"thread_name", 0, 7, "stream 7"},  {"thread_name", 0, 20, "stream 20"},
                                  {"process_name", 1, 0, "GPU 1"},    {"thread_name", 1, 3, "stream 3"}};
  BOOST_TEST_REQUIRE(seen.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST_INFO("metadata " << i);
    BOOST_TEST((seen[i] == expected[i]));
  }
  // Metadata comes before the first complete event.
  const auto first_x = std::find_if(events.begin(), events.end(), [](const json::value& e) { return e.at("ph") == "X"; });
  const auto last_m = std::find_if(events.rbegin(), events.rend(), [](const json::value& e) { return e.at("ph") == "M"; });
  BOOST_TEST((last_m.base() <= first_x));
}

BOOST_AUTO_TEST_CASE(regionprof_object_and_target_members_at_top_level) {
  trace t = sample_trace();
  t.target = test::target_of("kineto_trace",
                             R"({"deviceProperties": [{"id": 0, "name": "NVIDIA A100-PG509-200", "numSms": 108}],
                                 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 128},
                                 "traceEvents": "reserved: not written"})");
  t.run_wall_times_ns = {1500000, 1499999};
  t.module_types = {{"untuned_module:head", "torch::nn::Linear"}, {"untuned_module:body", "Block"}};
  t.warnings = {{warning_code::dropped_host_records, warning_source::nvtx, "3 host records dropped"}};
  const json::object root = parse(chrome_text(t)).as_object();
  BOOST_TEST(keys(root) == (std::vector<std::string>{"schemaVersion", "deviceProperties", "distributedInfo",
                                                     "displayTimeUnit", "regionprof", "traceEvents"}),
             boost::test_tools::per_element());
  BOOST_TEST(root.at("deviceProperties").at(0).at("numSms").as_int64() == 108);
  BOOST_TEST(root.at("distributedInfo").at("world_size").as_int64() == 128);
  BOOST_TEST(root.at("traceEvents").is_array());

  const json::object& rp = root.at("regionprof").as_object();
  BOOST_TEST(keys(rp) == (std::vector<std::string>{"schema_version", "target_type", "device_tracing",
                                                   "run_wall_times_ns", "module_types", "warnings"}),
             boost::test_tools::per_element());
  BOOST_TEST(rp.at("schema_version").as_int64() == 1);
  BOOST_TEST(str(rp.at("target_type")) == "kineto_trace");
  BOOST_TEST(rp.at("device_tracing").as_bool());
  BOOST_TEST(rp.at("run_wall_times_ns") == (json::array{1500000, 1499999}));
  BOOST_TEST(str(rp.at("module_types").at("untuned_module:head")) == "torch::nn::Linear");
  BOOST_TEST(str(rp.at("module_types").at("untuned_module:body")) == "Block");
  const json::object& w = rp.at("warnings").at(0).as_object();
  BOOST_TEST(keys(w) == (std::vector<std::string>{"code", "source", "message"}), boost::test_tools::per_element());
  BOOST_TEST(str(w.at("code")) == "DROPPED_HOST_RECORDS");
  BOOST_TEST(str(w.at("source")) == "nvtx");
  BOOST_TEST(str(w.at("message")) == "3 host records dropped");
}

BOOST_AUTO_TEST_CASE(odd_names_are_escaped) {
  trace t;
  const thread_index thread = t.add_thread(5, 6, "thread \"quoted\"");
  const std::vector<std::string> raw{"say \"hi\"", "line1\nline2\ttab", "back\\slash", "ctrl\x01\x1f",
                                     "naïve ✓ 日本", "bad \xff\xfe end", "cut \xE2\x82", std::string("nul\0in", 6), "del\x7f"};
  const std::vector<std::string> expected{"say \"hi\"", "line1\nline2\ttab", "back\\slash", "ctrl\x01\x1f",
                                          "naïve ✓ 日本", "bad \xEF\xBF\xBD\xEF\xBF\xBD end", "cut \xEF\xBF\xBD",
                                          std::string("nul\0in", 6), "del\x7f"};
  std::int64_t ts = 0;
  for (const std::string& name : raw) {
    t.intervals.push_back({ts, ts + 10, t.strings.intern(name), thread, 0, 0, interval_kind::range});
    ts += 20;
  }
  t.device_ops.push_back({0, 5, 0, t.strings.intern("kernel<\"T\">\n"), 0, 1, 0, device_op_kind::kernel});
  const std::string text = chrome_text(t);
  BOOST_TEST(text.find(R"("name":"ctrl\u0001\u001f")") != std::string::npos);
  BOOST_TEST(text.find(R"("name":"line1\nline2\ttab")") != std::string::npos);
  BOOST_TEST(text.find(R"("name":"del\u007f")") != std::string::npos);
  BOOST_TEST(text.find('\x7f') == std::string::npos);  // no raw control byte anywhere
  BOOST_TEST(text.find("\"name\":\"naïve ✓ 日本\"") != std::string::npos);  // non-ASCII passed through
  const json::array events = parse(text).at("traceEvents").as_array();  // boost::json checks UTF-8
  const auto complete = events_with(events, "X");
  BOOST_TEST_REQUIRE(complete.size() == raw.size() + 1);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    BOOST_TEST_INFO("name " << i);
    BOOST_TEST(str(complete[i].at("name")) == expected[i]);
  }
  BOOST_TEST(str(complete.back().at("name")) == "kernel<\"T\">\n");
  BOOST_TEST(str(events_with(events, "M").at(0).at("args").at("name")) == "thread \"quoted\"");
}

BOOST_AUTO_TEST_CASE(empty_trace_is_valid_json) {
  const std::string text = chrome_text(trace{});
  const json::object root = parse(text).as_object();
  BOOST_TEST(root.at("traceEvents").as_array().empty());
  BOOST_TEST(str(root.at("displayTimeUnit")) == "ns");
  BOOST_TEST(str(root.at("regionprof").at("target_type")) == "callable");
  BOOST_TEST(!root.at("regionprof").at("device_tracing").as_bool());
  BOOST_TEST(root.at("regionprof").at("run_wall_times_ns").as_array().empty());
  BOOST_TEST(root.at("regionprof").at("module_types").as_object().empty());
  BOOST_TEST(root.at("regionprof").at("warnings").as_array().empty());
  BOOST_TEST(text.back() == '\n');
}

BOOST_AUTO_TEST_CASE(large_trace_is_streamed_in_chunks) {
  // 25 000 launches: 100 000 events with the flows (> 8 MiB of text): the writer hands the stream bounded chunks as it goes.
  trace t;
  const thread_index thread = t.add_thread(1, 2, "main");
  const name_id launch = t.strings.intern("cudaLaunchKernel");
  const name_id kernel = t.strings.intern("void gemm_kernel<float, 128>(float const*, float*, int)");
  constexpr std::uint32_t launches = 25000;
  for (std::uint32_t i = 1; i <= launches; ++i) {
    const std::int64_t start = std::int64_t{i} * 10000;
    t.intervals.push_back({start, start + 3000, launch, thread, i, 0, interval_kind::runtime_api});
    t.device_ops.push_back({start + 5000, start + 9000, 0, kernel, i, 7, 0, device_op_kind::kernel});
  }
  recording_buffer buffer;
  std::ostream out(&buffer);
  write_chrome_trace(t, out);
  BOOST_TEST(buffer.text.size() > 8u * 1024 * 1024);
  BOOST_TEST(buffer.writes.size() >= 8u);
  const std::size_t largest = *std::max_element(buffer.writes.begin(), buffer.writes.end());
  BOOST_TEST(largest <= (1u << 20) + 4096);  // one buffer plus at most one event
  const json::value root = parse(buffer.text);
  std::map<std::string, std::size_t> phases;
  for (const json::value& event : root.at("traceEvents").as_array()) ++phases[str(event.at("ph"))];
  BOOST_TEST(phases["X"] == 2u * launches);
  BOOST_TEST(phases["s"] == launches);
  BOOST_TEST(phases["f"] == launches);
}

BOOST_AUTO_TEST_CASE(stream_failure_and_bad_trace_are_errors) {
  full_buffer disk(100);
  std::ostream out(&disk);
  BOOST_CHECK_EXCEPTION(write_chrome_trace(sample_trace(), out), std::runtime_error, [](const std::runtime_error& e) {
    return std::string(e.what()).find("output stream failed") != std::string::npos;
  });

  trace bad = sample_trace();
  bad.intervals[2].thread = 9;
  std::ostringstream untouched;
  BOOST_CHECK_EXCEPTION(write_chrome_trace(bad, untouched), std::invalid_argument, [](const std::invalid_argument& e) {
    return std::string(e.what()).find("interval 2 has thread index 9") != std::string::npos;
  });
  BOOST_TEST(untouched.str().empty());  // checked before anything is written

  trace bad_name = sample_trace();
  bad_name.device_ops[1].name = 12345;
  BOOST_CHECK_THROW(chrome_text(bad_name), std::invalid_argument);
}

namespace {

/// sample_trace() with memory events (rule 21) on main (100, 101), worker (100, 102) and a thread of
/// process 200: on cpu, cuda:0 and cuda:1, every kind, one without a total, two at one instant.
trace memory_trace() {
  trace t = sample_trace();
  const thread_index other = t.add_thread(200, 201, "other");
  const auto add = [&](std::int64_t time, std::int64_t bytes, std::int64_t total, thread_index thread,
                       memory_device device, memory_event_kind kind) {
    t.memory_events.push_back({.time_ns = time, .bytes = bytes, .total_allocated = total, .thread = thread,
                               .device = device, .kind = kind});
  };
  using enum memory_event_kind;
  add(12'500'100, 4'096, 4'096, 0, cpu_memory, allocation);
  add(12'345'150, 1 << 20, 1 << 20, 1, 0, allocation);
  add(13'000'000, -4'096, 0, 0, cpu_memory, free);
  add(12'000'000, 64, 64, other, cpu_memory, allocation);
  add(12'600'050, std::int64_t{1} << 34, 1 << 20, 0, 0, out_of_memory);
  add(12'400'000, 512, memory_event::no_total, 1, 1, allocation);
  add(12'500'100, 8, 4'104, 0, cpu_memory, allocation);
  return t;
}

/// The event lines of `text` whose phase is `ph`, without the separating comma.
std::vector<std::string> event_lines(const std::string& text, std::string_view ph) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  const std::string prefix = "{\"ph\":\"" + std::string(ph) + "\"";
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(prefix)) continue;
    if (line.ends_with(',')) line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

BOOST_AUTO_TEST_CASE(memory_events_as_kineto_instants_and_counter_tracks) {
  const std::string text = chrome_text(memory_trace());
  // Torch's instants, in trace order after the device ops: Device Type 0 with Device Id -1 on the CPU, 1 with
  // the ordinal on CUDA; Total Allocated only where known.
  const std::string instant = R"({"ph":"i","cat":"cpu_instant_event","s":"t",)";
  BOOST_TEST(event_lines(text, "i") ==
                 (std::vector<std::string>{
                     instant + R"("name":"[memory]","pid":100,"tid":101,"ts":12500.100,)"
                               R"("args":{"Device Type":0,"Device Id":-1,"Bytes":4096,"Total Allocated":4096}})",
                     instant + R"("name":"[memory]","pid":100,"tid":102,"ts":12345.150,)"
                               R"("args":{"Device Type":1,"Device Id":0,"Bytes":1048576,"Total Allocated":1048576}})",
                     instant + R"("name":"[memory]","pid":100,"tid":101,"ts":13000.000,)"
                               R"("args":{"Device Type":0,"Device Id":-1,"Bytes":-4096,"Total Allocated":0}})",
                     instant + R"("name":"[memory]","pid":200,"tid":201,"ts":12000.000,)"
                               R"("args":{"Device Type":0,"Device Id":-1,"Bytes":64,"Total Allocated":64}})",
                     instant + R"("name":"[OutOfMemory]","pid":100,"tid":101,"ts":12600.050,)"
                               R"("args":{"Device Type":1,"Device Id":0,"Bytes":17179869184,)"
                               R"("Total Allocated":1048576}})",
                     instant + R"("name":"[memory]","pid":100,"tid":102,"ts":12400.000,)"
                               R"("args":{"Device Type":1,"Device Id":1,"Bytes":512}})",
                     instant + R"("name":"[memory]","pid":100,"tid":101,"ts":12500.100,)"
                               R"("args":{"Device Type":0,"Device Id":-1,"Bytes":8,"Total Allocated":4104}})",
                 }),
             boost::test_tools::per_element());
  // One counter track per process and device, by pid, device (cpu first), then time, ties in trace order;
  // cuda:1 gave no total, so it has no track.
  BOOST_TEST(event_lines(text, "C") ==
                 (std::vector<std::string>{
                     R"({"ph":"C","name":"Memory cpu","pid":100,"ts":12500.100,"args":{"Total Allocated":4096}})",
                     R"({"ph":"C","name":"Memory cpu","pid":100,"ts":12500.100,"args":{"Total Allocated":4104}})",
                     R"({"ph":"C","name":"Memory cpu","pid":100,"ts":13000.000,"args":{"Total Allocated":0}})",
                     R"({"ph":"C","name":"Memory cuda:0","pid":100,"ts":12345.150,"args":{"Total Allocated":1048576}})",
                     R"({"ph":"C","name":"Memory cuda:0","pid":100,"ts":12600.050,"args":{"Total Allocated":1048576}})",
                     R"({"ph":"C","name":"Memory cpu","pid":200,"ts":12000.000,"args":{"Total Allocated":64}})",
                 }),
             boost::test_tools::per_element());
  // Valid JSON; the instants and counters come last, the rest is as without memory events.
  const json::value root = parse(text);
  const json::array& events = root.at("traceEvents").as_array();
  const json::value without = parse(chrome_text(sample_trace()));
  BOOST_TEST(events.size() == without.at("traceEvents").as_array().size() + 1 + 7 + 6);  // + other's thread_name
  BOOST_TEST(str(events.back().at("ph")) == "C");
  BOOST_TEST(event_lines(chrome_text(sample_trace()), "i").empty());
  BOOST_TEST(event_lines(chrome_text(sample_trace()), "C").empty());
}

BOOST_AUTO_TEST_CASE(memory_events_that_break_their_invariants_are_errors) {
  const auto error_of = [](trace t) -> std::string {
    std::ostringstream untouched;
    try {
      write_chrome_trace(t, untouched);
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(untouched.str().empty());  // checked before anything is written
      return e.what();
    }
    return "no error";
  };
  const auto with = [](auto change) {
    trace t = memory_trace();
    change(t.memory_events[2]);
    return t;
  };
  const std::string prefix = "regionprof::write_chrome_trace: memory event 2 has ";
  BOOST_TEST(error_of(with([](memory_event& e) { e.thread = 7; })) ==
             prefix + "thread index 7 but the trace has only 3");
  BOOST_TEST(error_of(with([](memory_event& e) { e.bytes = 4096; })) ==
             prefix + "bytes 4096 for a free (< 0 and > -2^63)");
  BOOST_TEST(error_of(with([](memory_event& e) { e.bytes = std::numeric_limits<std::int64_t>::min(); })) ==
             prefix + "bytes -9223372036854775808 for a free (< 0 and > -2^63)");
  BOOST_TEST(error_of(with([](memory_event& e) { e.kind = memory_event_kind::allocation; })) ==
             prefix + "bytes -4096 for an allocation (> 0)");
  BOOST_TEST(error_of(with([](memory_event& e) { e.kind = memory_event_kind::out_of_memory; })) ==
             prefix + "bytes -4096 for a failed allocation (>= 0)");
  BOOST_TEST(error_of(with([](memory_event& e) { e.device = -2; })) == prefix + "device -2 (cpu is -1, cuda:N is N)");
  BOOST_TEST(error_of(with([](memory_event& e) { e.total_allocated = -5; })) ==
             prefix + "a negative total_allocated -5");
  BOOST_TEST(error_of(with([](memory_event& e) { e.kind = static_cast<memory_event_kind>(9); })) ==
             "regionprof::write_chrome_trace: unknown memory_event_kind 9");
  BOOST_TEST(error_of(memory_trace()) == "no error");
}

BOOST_AUTO_TEST_SUITE_END()
