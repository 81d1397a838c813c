// regionprof::write_file_atomically and write_outputs in process: replacement, modes, errors that name
// the target, nothing left beside it, placeholders, and a failure that does not stop the other outputs.
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "regionprof/output/output.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const regionprof::output_error& e) {
    return e.what();
  }
  return "no error";
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

BOOST_AUTO_TEST_SUITE(output_writer)

BOOST_AUTO_TEST_CASE(a_file_is_replaced_whole_and_keeps_its_mode) {
  cli_test::scratch_dir dir{"regionprof-outputs"};
  const fs::path target = dir.path / "notes.txt";
  write_text(target, "old\n");
  ::chmod(target.c_str(), 0640);
  regionprof::write_file_atomically(target.string(), "notes", [](std::ostream& out) { out << "new\n"; });
  BOOST_TEST(cli_test::read_file(target.string()) == "new\n");
  struct stat st {};
  BOOST_REQUIRE(::stat(target.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0640u);
  BOOST_TEST((names_in(dir.path) == std::vector<std::string>{"notes.txt"}));
}

BOOST_AUTO_TEST_CASE(a_new_file_gets_0666_less_the_umask) {
  cli_test::scratch_dir dir{"regionprof-outputs"};
  const fs::path target = dir.path / "new.txt";
  const mode_t old_mask = ::umask(022);
  regionprof::write_file_atomically(target.string(), "", [](std::ostream& out) { out << "x"; });
  ::umask(old_mask);
  struct stat st {};
  BOOST_REQUIRE(::stat(target.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0644u);
}

BOOST_AUTO_TEST_CASE(a_writer_that_fails_leaves_the_old_file_and_no_temporary) {
  cli_test::scratch_dir dir{"regionprof-outputs"};
  const fs::path target = dir.path / "r.json";
  write_text(target, "{\"old\": 1}\n");
  const std::string message = error_of([&] {
    regionprof::write_file_atomically(target.string(), "JSON report", [](std::ostream& out) {
      out << std::string(1 << 20, 'x');  // more than the buffer: part of it reached the temporary
      throw std::runtime_error("boom");
    });
  });
  BOOST_TEST(message == "cannot write the JSON report to '" + target.string() + "': boom");
  BOOST_TEST(cli_test::read_file(target.string()) == "{\"old\": 1}\n");
  BOOST_TEST((names_in(dir.path) == std::vector<std::string>{"r.json"}));
}

BOOST_AUTO_TEST_CASE(a_missing_directory_and_a_directory_target_are_named) {
  cli_test::scratch_dir dir{"regionprof-outputs"};
  const std::string missing = (dir.path / "missing" / "r.json").string();
  const auto nothing = [](std::ostream&) {};
  BOOST_TEST(error_of([&] { regionprof::write_file_atomically(missing, "JSON report", nothing); }) ==
             "cannot write the JSON report to '" + missing + "': directory '" + (dir.path / "missing").string() +
                 "' does not exist");
  BOOST_TEST(error_of([&] { regionprof::write_file_atomically(dir.path.string(), "JSON report", nothing); }) ==
             "cannot write the JSON report to '" + dir.path.string() + "': it is a directory");
  BOOST_TEST(names_in(dir.path).empty());
}

BOOST_AUTO_TEST_CASE(write_outputs_expands_placeholders_and_writes_stdout_last) {
  cli_test::scratch_dir dir{"regionprof-outputs"};
  regionprof::output_set outputs;
  outputs.add(regionprof::output_format::json, (dir.path / "p-%p.json").string());
  outputs.add(regionprof::output_format::chrome_trace, (dir.path / "100%%.json").string());
  outputs.to_stdout = regionprof::output_format::markdown;
  regionprof::output_writers writers;
  std::vector<std::string> order;
  writers.json = [&order](std::ostream& out) { order.push_back("json"); out << "{}\n"; };
  writers.chrome_trace = [&order](std::ostream& out) { order.push_back("trace"); out << "[]\n"; };
  writers.markdown = [&order](std::ostream& out) { order.push_back("markdown"); out << "# md\n"; };
  std::ostringstream out;
  regionprof::write_outputs(outputs, writers, out);
  BOOST_TEST((order == std::vector<std::string>{"json", "trace", "markdown"}));
  BOOST_TEST(out.str() == "# md\n");
  BOOST_TEST(cli_test::read_file((dir.path / ("p-" + std::to_string(::getpid()) + ".json")).string()) == "{}\n");
  BOOST_TEST(cli_test::read_file((dir.path / "100%.json").string()) == "[]\n");
}

BOOST_AUTO_TEST_CASE(with_a_failure_handler_the_other_outputs_are_still_written) {
  cli_test::scratch_dir dir{"regionprof-outputs"};
  regionprof::output_set outputs;
  const std::string missing = (dir.path / "gone" / "p.json").string();
  outputs.add(regionprof::output_format::json, missing);
  outputs.add(regionprof::output_format::markdown, (dir.path / "p.md").string());
  regionprof::output_writers writers;
  writers.noun = "job report";
  writers.json = [](std::ostream& out) { out << "{}"; };
  writers.markdown = [](std::ostream& out) { out << "md"; };
  std::vector<std::string> failures;
  std::ostringstream out;
  regionprof::write_outputs(outputs, writers, out,
                            [&failures](const regionprof::output_file& file, const regionprof::output_error& e) {
                              failures.push_back(file.path + " | " + e.reason());
                            });
  BOOST_TEST((failures == std::vector<std::string>{missing + " | directory '" + (dir.path / "gone").string() +
                                                   "' does not exist"}));
  BOOST_TEST(cli_test::read_file((dir.path / "p.md").string()) == "md");
  // Without a handler the first failure throws, and names the output as the noun says.
  BOOST_TEST(error_of([&] { regionprof::write_outputs(outputs, writers, out); }).starts_with(
      "cannot write the JSON job report to '" + missing + "'"));
}

BOOST_AUTO_TEST_CASE(a_failing_standard_output_is_an_error) {
  regionprof::output_set outputs;
  outputs.to_stdout = regionprof::output_format::markdown;
  regionprof::output_writers writers;
  writers.markdown = [](std::ostream& out) { out << "md"; };
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  BOOST_TEST(error_of([&] { regionprof::write_outputs(outputs, writers, out); }) ==
             "cannot write the Markdown report to standard output: the stream failed");
}

BOOST_AUTO_TEST_SUITE_END()
