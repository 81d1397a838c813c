// Profile: the analysis and the three writers together, and file errors that name the path.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include "regionprof/output/output.hpp"
#include "support/report_fixtures.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

/// One run of 1 000 000 ns on the main thread holding region `aot_module:encoder` (400 000 ns) that
/// launches one kernel of 50 000 ns.
trace one_run_trace() {
  trace t;
  const thread_index main = t.add_thread(7, 7, "main");
  const domain_index rp = t.domain("regionprof");
  t.intervals.push_back({1000000, 2000000, t.strings.intern("regionprof.profiled_run"), main, 0, rp,
                         interval_kind::range});
  t.intervals.push_back({1100000, 1500000, t.strings.intern("aot_module:encoder"), main, 0, 0, interval_kind::range});
  t.intervals.push_back({1200000, 1210000, t.strings.intern("cudaLaunchKernel"), main, 42, 0,
                         interval_kind::runtime_api});
  t.device_ops.push_back({1300000, 1350000, 0, t.strings.intern("gemm"), 42, 7, 0, device_op_kind::kernel});
  t.device_tracing = true;
  return t;
}

/// A Profile of `source`, or exit 77 (skipped) while the analysis engine is not there yet.
Profile profile_or_skip(trace source) {
  try {
    return Profile(std::move(source), analysis_options{}, fixed_context());
  } catch (const std::logic_error& error) {
    if (std::string(error.what()).find("not implemented") == std::string::npos) throw;
    std::cout << "skipped: regionprof::analyze is not implemented on this branch yet (" << error.what() << ")"
              << std::endl;
    std::exit(77);
  }
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(profile)

BOOST_AUTO_TEST_CASE(unwritable_path_error_names_the_path) {
  const Profile profile = profile_or_skip(one_run_trace());
  const std::string path = "/nonexistent-regionprof-dir/sub/profile.json";
  const auto names_path = [&](const std::runtime_error& e) {
    BOOST_TEST_MESSAGE(e.what());
    return std::string(e.what()).find(path) != std::string::npos;
  };
  BOOST_CHECK_EXCEPTION(write_json(profile, path), std::runtime_error, names_path);
  BOOST_CHECK_EXCEPTION(write_markdown(profile, path), std::runtime_error, names_path);
  BOOST_CHECK_EXCEPTION(write_trace(profile, path), std::runtime_error, names_path);
}

BOOST_AUTO_TEST_CASE(end_to_end_reports_of_one_run) {
  const Profile profile = profile_or_skip(one_run_trace());
  const json::object report = parse(to_json(profile)).as_object();
  const json::object& run = report.at("runs").at(0).as_object();
  BOOST_TEST(report.at("runs").as_array().size() == 1u);
  BOOST_TEST(num(run.at("timing").at("cpu_time_us")) == 1000.0);
  BOOST_TEST(num(run.at("timing").at("device_time_us")) == 50.0);
  const json::object& region = run.at("regions").at(0).as_object();
  BOOST_TEST(str(region.at("region_id")) == "aot_module:encoder");
  BOOST_TEST(region.at("calls").as_int64() == 1);
  BOOST_TEST(num(region.at("cpu_time_us")) == 400.0);
  BOOST_TEST(num(region.at("cpu_time_fraction")) == 0.4);
  BOOST_TEST(num(region.at("device_time_us")) == 50.0);
  BOOST_TEST(num(run.at("residual").at("cpu_time_us")) == 600.0);
  BOOST_TEST(num(run.at("residual").at("device_time_us")) == 0.0);
  BOOST_TEST(to_markdown(profile).find("| (residual)") != std::string::npos);

  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("regionprof_report_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  write_json(profile, (dir / "profile.json").string());
  write_markdown(profile, (dir / "profile.md").string());
  write_trace(profile, (dir / "trace.json").string());
  BOOST_TEST(read_file(dir / "profile.json") == to_json(profile));
  BOOST_TEST(read_file(dir / "profile.md") == to_markdown(profile));
  const std::string trace_text = read_file(dir / "trace.json");
  BOOST_TEST(trace_text == to_chrome_trace(profile));
  // 3 metadata (thread main, GPU 0, stream 7), 4 complete events, 1 flow start and 1 flow end.
  BOOST_TEST(parse(trace_text).at("traceEvents").as_array().size() == 9u);
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(atomic_file)

// A device, FIFO or socket is written in place: renaming a temporary over it would replace the node
// itself (`-o /dev/null` as root turned /dev/null into a regular file for the whole machine).
BOOST_AUTO_TEST_CASE(a_fifo_or_a_device_is_written_in_place_never_replaced) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("regionprof-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "pipe").string();
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  write_file_atomically(fifo, "JSON report", [](std::ostream& out) { out << "{\"report\": 1}\n"; });
  reader.join();
  BOOST_TEST(received == "{\"report\": 1}\n");
  struct stat after {};
  BOOST_REQUIRE(::stat(fifo.c_str(), &after) == 0);
  BOOST_TEST(S_ISFIFO(after.st_mode));
  BOOST_TEST(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);

  struct stat null_before {};
  BOOST_REQUIRE(::stat("/dev/null", &null_before) == 0);
  write_file_atomically("/dev/null", "Chrome trace", [](std::ostream& out) { out << "[]\n"; });
  struct stat null_after {};
  BOOST_REQUIRE(::stat("/dev/null", &null_after) == 0);
  BOOST_TEST((S_ISCHR(null_after.st_mode) && null_after.st_rdev == null_before.st_rdev));
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
