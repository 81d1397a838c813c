// `regionprof run` leaves the program alone (docs/cli.md, "regionprof run"): every case runs
// safety_child.c directly and under `regionprof run`, both with pipes on stdin, stdout and stderr, and
// compares the bytes and the statuses exactly. With -o, stdout holds only the program's bytes; without
// it (the default mode) they are an exact prefix of stdout, the Markdown report after them. stderr under
// `run` is the program's bytes followed by whole lines that start with `regionprof: `.
#define BOOST_TEST_MODULE regionprof run safety
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

extern char** environ;

#include "cli_runner.hpp"
#include "support/child_process.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

struct outcome {
  int wait_status = 0;  ///< as waitpid gave it
  int status = -1;      ///< as a shell reports it: the exit code, or 128 + signal
  std::string out;
  std::string err;
};

/// How a process is started: its directory, environment and stdin; `drop_stdout` closes the reading end
/// of its stdout pipe before it runs (a reader that went away).
struct launch {
  fs::path dir;
  std::vector<std::string> env;
  std::string input;
  bool drop_stdout = false;
};

std::vector<std::string> inherited_environment() {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  return env;
}

/// `argv` started as `how` says (as from a shell: default dispositions, no mask), with its stdin fed and
/// its stdout and stderr drained together, so that neither pipe fills while the other is read.
outcome spawn(const std::vector<std::string>& argv, const launch& how) {
  regionprof::test::child_result r = regionprof::test::run_child(
      argv, {.dir = how.dir, .env = how.env, .clear_environment = true, .input = how.input, .close_stdout = how.drop_stdout});
  return {r.wait_status, r.status, std::move(r.out), std::move(r.err)};
}

std::vector<std::string> child_command(const std::vector<std::string>& args) {
  std::vector<std::string> command{SAFETY_CHILD};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

outcome direct(const std::vector<std::string>& args, const launch& how) { return spawn(child_command(args), how); }

/// `regionprof run FLAGS... -- safety_child ARGS...`.
outcome under_run(const std::vector<std::string>& flags, const std::vector<std::string>& args, const launch& how) {
  std::vector<std::string> command{REGIONPROF_CLI, "run"};
  command.insert(command.end(), flags.begin(), flags.end());
  command.emplace_back("--");
  const std::vector<std::string> child = child_command(args);
  command.insert(command.end(), child.begin(), child.end());
  const outcome result = spawn(command, how);
  BOOST_TEST_MESSAGE("regionprof run -> " << result.status << "\nstderr tail: "
                                          << result.err.substr(result.err.size() > 2000 ? result.err.size() - 2000 : 0));
  return result;
}

std::string read_file(const fs::path& path) { return cli_test::read_file(path.string()); }

launch in(const cli_test::scratch_dir& dir) { return {dir.path, inherited_environment(), "", false}; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// What follows the program's stderr bytes under `run`: whole lines, each starting `regionprof: `.
std::vector<std::string> regionprof_lines(const outcome& run, const outcome& alone) {
  BOOST_REQUIRE_MESSAGE(run.err.compare(0, alone.err.size(), alone.err) == 0,
                        "the program's stderr is not a prefix of stderr under run");
  const std::string rest = run.err.substr(alone.err.size());
  BOOST_TEST((rest.empty() || rest.back() == '\n'), "regionprof's stderr ends mid-line: " << rest);
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < rest.size();) {
    const std::size_t end = std::min(rest.find('\n', start), rest.size());
    lines.push_back(rest.substr(start, end - start));
    BOOST_TEST(lines.back().rfind("regionprof: ", 0) == 0u, "not a regionprof line: '" << lines.back() << "'");
    start = end + 1;
  }
  return lines;
}

/// The program run directly and under `run`, with -o and in the default mode: the same stdout bytes
/// (a prefix, then the report, in the default mode), the same stderr bytes first, the same status.
struct compared {
  outcome alone;
  outcome with_o;
  outcome by_default;
  std::vector<std::string> lines;  ///< regionprof's stderr lines of the -o run
};

compared compare(const cli_test::scratch_dir& dir, const std::vector<std::string>& args, const launch& how) {
  compared c;
  c.alone = direct(args, how);
  c.with_o = under_run({"-o", "p.json"}, args, how);
  BOOST_TEST(c.with_o.out == c.alone.out, "stdout differs under run -o (" << c.with_o.out.size() << " bytes vs "
                                                                          << c.alone.out.size() << ")");
  BOOST_TEST(c.with_o.status == c.alone.status);
  c.lines = regionprof_lines(c.with_o, c.alone);

  c.by_default = under_run({}, args, how);
  BOOST_TEST(c.by_default.status == c.alone.status);
  BOOST_TEST(c.by_default.out.compare(0, c.alone.out.size(), c.alone.out) == 0,
             "the program's stdout is not a prefix of stdout under run");
  if (fs::exists(dir.path / "profile.json")) {
    BOOST_TEST(c.by_default.out.substr(c.alone.out.size()).rfind("# regionprof report\n", 0) == 0u);
  } else {
    BOOST_TEST(c.by_default.out == c.alone.out);
  }
  regionprof_lines(c.by_default, c.alone);
  return c;
}

json::object load_profile(const fs::path& path) {
  BOOST_REQUIRE_MESSAGE(fs::exists(path), path << " was not written");
  return json::parse(read_file(path)).as_object();
}

bool has_line(const std::vector<std::string>& lines, const std::string& start) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
}

void check_exit(int code) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const compared c = compare(dir, {"exit", std::to_string(code)}, in(dir));
  BOOST_TEST(c.alone.out == "out\n");
  BOOST_TEST(c.alone.err == "err\n");
  BOOST_TEST((WIFEXITED(c.alone.wait_status) && WEXITSTATUS(c.alone.wait_status) == code));
  BOOST_TEST(c.with_o.status == code);
  BOOST_TEST(c.lines.size() == 1u);
  BOOST_TEST(has_line(c.lines, "regionprof: wrote p.json (1 runs, 0 regions"));
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 1u);
}

/// Core dumps on, as far as the hard limit allows, so that `(core dumped)` can be compared.
struct core_dumps_on {
  rlimit saved{};
  core_dumps_on() {
    getrlimit(RLIMIT_CORE, &saved);
    rlimit on = saved;
    on.rlim_cur = on.rlim_max;
    setrlimit(RLIMIT_CORE, &on);
  }
  ~core_dumps_on() { setrlimit(RLIMIT_CORE, &saved); }
};

/// Dies of `signal_number` directly and under `run`: `run` exits 128 + N and names the signal (and the
/// core dump when there was one, exactly when the direct run dumped core); the library's re-raise leaves
/// the profile of the runs before it, marked `ended_by_signal`, except for SIGKILL, which leaves nothing.
void check_signal(const std::string& mode, int signal_number, const std::string& name) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const core_dumps_on cores;
  launch how = in(dir);
  // Under ASan a fault would be ASan's report and exit(1): let the fault reach the program as a signal.
  // The inherited ASAN_OPTIONS entry is replaced, not followed by a second one (getenv takes the first).
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::erase_if(how.env, [](const std::string& entry) { return entry.starts_with("ASAN_OPTIONS="); });
  how.env.push_back(std::string("ASAN_OPTIONS=") + (asan != nullptr ? std::string(asan) + ":" : "") + "handle_segv=0");
  const compared c = compare(dir, {mode}, how);
  BOOST_TEST(c.alone.out == "before\n");
  BOOST_TEST(c.alone.err == "before\n");
  BOOST_REQUIRE(WIFSIGNALED(c.alone.wait_status));
  BOOST_TEST(WTERMSIG(c.alone.wait_status) == signal_number);
  BOOST_TEST(c.with_o.status == 128 + signal_number);
  const std::string killed = "regionprof: the program was killed by signal " + std::to_string(signal_number) + " (" +
                             name + ")" + (WCOREDUMP(c.alone.wait_status) ? " (core dumped)" : "");
  BOOST_TEST((std::find(c.lines.begin(), c.lines.end(), killed) != c.lines.end()), "missing: " << killed);
  if (signal_number == SIGKILL) {
    BOOST_TEST(c.lines.size() == 2u);
    BOOST_TEST(has_line(c.lines, "regionprof: no profile was written"));
    BOOST_TEST(!fs::exists(dir.path / "p.json"));
    return;
  }
  BOOST_TEST(c.lines.size() == 3u);
  BOOST_TEST(has_line(c.lines, "regionprof: the program got signal " + std::to_string(signal_number) + ";"));
  BOOST_TEST(load_profile(dir.path / "p.json").at("target").at("ended_by_signal").as_string() == name);
}

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> words;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\0', start);
    words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::map<std::string, std::string> environment_of(const std::string& text) {
  std::map<std::string, std::string> env;
  for (const std::string& entry : split_nul(text)) {
    const std::size_t equals = entry.find('=');
    env[entry.substr(0, equals)] = equals == std::string::npos ? "" : entry.substr(equals + 1);
  }
  return env;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_safety)

BOOST_AUTO_TEST_CASE(success_passes_through) { check_exit(0); }
BOOST_AUTO_TEST_CASE(failure_passes_through) { check_exit(1); }
BOOST_AUTO_TEST_CASE(exit_3_passes_through) { check_exit(3); }

BOOST_AUTO_TEST_CASE(death_by_sigsegv_is_reported_as_a_shell_does) { check_signal("segv", SIGSEGV, "SIGSEGV"); }
BOOST_AUTO_TEST_CASE(death_by_sigabrt_is_reported_as_a_shell_does) { check_signal("abort", SIGABRT, "SIGABRT"); }
BOOST_AUTO_TEST_CASE(death_by_sigterm_is_reported_as_a_shell_does) { check_signal("term", SIGTERM, "SIGTERM"); }
BOOST_AUTO_TEST_CASE(death_by_sigkill_is_reported_as_a_shell_does) { check_signal("kill", SIGKILL, "SIGKILL"); }

BOOST_AUTO_TEST_CASE(ten_mib_of_every_byte_value_pass_through) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const compared c = compare(dir, {"binary", "10"}, in(dir));
  BOOST_TEST(c.alone.status == 0);
  BOOST_REQUIRE_EQUAL(c.alone.out.size(), 10u << 20);
  for (std::size_t i = 0; i < c.alone.out.size(); i += 4099) {
    BOOST_REQUIRE_EQUAL(static_cast<unsigned char>(c.alone.out[i]), i % 256);
  }
  BOOST_TEST(c.lines.size() == 1u);
}

BOOST_AUTO_TEST_CASE(interleaved_stdout_and_stderr_without_a_final_newline_pass_through) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const compared c = compare(dir, {"interleave"}, in(dir));
  BOOST_TEST(c.alone.status == 0);
  BOOST_TEST(c.alone.out.size() > 100000u);
  BOOST_TEST(c.alone.err.size() > 200000u);
  BOOST_TEST(c.alone.out.back() != '\n');
  BOOST_TEST(c.alone.err.back() != '\n');
  BOOST_TEST(c.lines.size() == 1u);
}

BOOST_AUTO_TEST_CASE(stdin_is_passed_through) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  launch how = in(dir);
  for (int i = 0; i < (1 << 20); ++i) how.input.push_back(static_cast<char>(i * 7));
  const compared c = compare(dir, {"cat"}, how);
  BOOST_TEST(c.alone.status == 0);
  BOOST_TEST(c.alone.out == how.input);
  BOOST_TEST(c.alone.err == "eof\n");
}

BOOST_AUTO_TEST_CASE(a_program_that_closes_its_stdout) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const compared c = compare(dir, {"close_stdout"}, in(dir));
  BOOST_TEST(c.alone.status == 0);
  BOOST_TEST(c.alone.out.empty());
  BOOST_TEST(c.alone.err == "closed\n");
  BOOST_TEST(c.lines.size() == 1u);
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 1u);
}

// The report goes to stdout after the program; a reader that went away costs the report, not the status.
BOOST_AUTO_TEST_CASE(a_stdout_nobody_reads_keeps_the_programs_status) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  launch how = in(dir);
  how.drop_stdout = true;
  const outcome alone = direct({"close_stdout"}, how);
  const outcome run = under_run({}, {"close_stdout"}, how);
  BOOST_TEST(alone.status == 0);
  BOOST_TEST(run.status == 0);
  const std::vector<std::string> lines = regionprof_lines(run, alone);
  BOOST_TEST(has_line(lines, "regionprof: cannot write the Markdown report to standard output: Broken pipe"));
}

// A program that closed stderr and opened a file of its own at fd 2 never finds regionprof's lines in it.
BOOST_AUTO_TEST_CASE(a_file_the_program_put_at_fd_2_is_left_alone) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const launch how = in(dir);
  const outcome alone = direct({"reuse_stderr", (dir.path / "alone.txt").string()}, how);
  const outcome run = under_run({"-o", "p.json"}, {"reuse_stderr", (dir.path / "run.txt").string()}, how);
  BOOST_TEST(alone.status == 128 + SIGTERM);
  BOOST_TEST(run.status == 128 + SIGTERM);
  BOOST_TEST(read_file(dir.path / "alone.txt") == "program data\n");
  BOOST_TEST(read_file(dir.path / "run.txt") == "program data\n");
  BOOST_TEST(load_profile(dir.path / "p.json").at("target").at("ended_by_signal").as_string() == "SIGTERM");
}

BOOST_AUTO_TEST_CASE(a_missing_output_directory_is_refused_before_the_program_runs) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const outcome run = under_run({"-o", "/nonexistent-dir/p.json"}, {"exit", "3"}, in(dir));
  BOOST_TEST(run.status == 1);
  BOOST_TEST(run.out.empty());  // the program never ran
  BOOST_TEST(run.err ==
             "regionprof run: cannot write the JSON profile to '/nonexistent-dir/p.json': directory "
             "'/nonexistent-dir' does not exist\n");
}

BOOST_AUTO_TEST_CASE(an_unwritable_output_directory_is_refused_before_the_program_runs) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  // root writes through mode bits: /sys is a directory where even root cannot create files.
  fs::path read_only = dir.path / "ro";
  if (geteuid() == 0) {
    read_only = "/sys";
  } else {
    fs::create_directory(read_only);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
  }
  const std::string path = (read_only / "p.json").string();
  const outcome run = under_run({"-o", path}, {"exit", "3"}, in(dir));
  BOOST_TEST(run.status == 1);
  BOOST_TEST(run.out.empty());
  BOOST_TEST(run.err == "regionprof run: cannot write the JSON profile to '" + path + "': cannot create files in directory '" +
                            read_only.string() + "': Permission denied\n");
  const outcome markdown = under_run({"-o", "p.json", "--markdown", path}, {"exit", "3"}, in(dir));
  BOOST_TEST(markdown.status == 1);
  BOOST_TEST(markdown.out.empty());
  BOOST_TEST(contains(markdown.err, "cannot write the Markdown report to '" + path + "'"));
  BOOST_TEST(!fs::exists(dir.path / "p.json"));
}

BOOST_AUTO_TEST_CASE(a_directory_as_an_output_path_is_refused_before_the_program_runs) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  fs::create_directory(dir.path / "sub");
  const outcome run = under_run({"-o", "p.json", "--markdown", "sub"}, {"exit", "3"}, in(dir));
  BOOST_TEST(run.status == 1);
  BOOST_TEST(run.out.empty());
  BOOST_TEST(run.err == "regionprof run: cannot write the Markdown report to 'sub': it is a directory\n");
  const outcome slash = under_run({"-o", "new/"}, {"exit", "3"}, in(dir));
  BOOST_TEST(slash.status == 1);
  BOOST_TEST(slash.err == "regionprof run: cannot write the JSON profile to 'new/': it is a directory\n");
  BOOST_TEST(fs::is_empty(dir.path / "sub"));
}

// Checked before the program starts, the directory can still go away while it runs: the program's
// status and output stay its own, and one line names the report that could not be written.
BOOST_AUTO_TEST_CASE(an_output_directory_removed_during_the_run) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  fs::create_directory(dir.path / "sub");
  const outcome run = under_run({"-o", "sub/p.json"}, {"remove_dir", (dir.path / "sub").string()}, in(dir));
  BOOST_TEST(run.status == 3);
  BOOST_TEST(run.out == "removed\n");
  BOOST_TEST(run.err == "regionprof: cannot write the JSON profile to 'sub/p.json': directory '" +
                            (dir.path / "sub").string() + "' no longer exists (it was removed while the program ran)\n");
}

BOOST_AUTO_TEST_CASE(a_markdown_directory_removed_during_the_run_leaves_the_other_reports) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  fs::create_directory(dir.path / "sub");
  const outcome run = under_run({"-o", "p.json", "--markdown", "sub/p.md", "--trace", "t.json"},
                                {"remove_dir", (dir.path / "sub").string()}, in(dir));
  BOOST_TEST(run.status == 3);
  BOOST_TEST(run.out == "removed\n");
  // The machine's warnings (MACHINE_LOADED on a busy machine, ...) depend on where the test runs: the
  // profile says which it has, after the device's and before the analysis's.
  std::string machine_codes;
  const json::object profile = load_profile(dir.path / "p.json");
  for (const json::value& w : profile.at("warnings").as_array()) {
    const std::string code(w.at("code").as_string());
    if (code == "MACHINE_LOADED" || code == "CPU_SCALING_ENABLED" || code == "GPU_THROTTLED") machine_codes += code + ", ";
  }
  BOOST_TEST(run.err == "regionprof: cannot write the Markdown report to 'sub/p.md': directory '" +
                            (dir.path / "sub").string() +
                            "' no longer exists (it was removed while the program ran)\n"
                            "regionprof: wrote p.json (1 runs, 0 regions; warnings: DEVICE_TRACING_UNAVAILABLE, " +
                            machine_codes + "NO_RUN_MARKERS), t.json\n");
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 1u);
  BOOST_TEST(json::parse(read_file(dir.path / "t.json")).as_object().contains("traceEvents"));
}

BOOST_AUTO_TEST_CASE(an_output_directory_made_read_only_during_the_run) {
  if (geteuid() == 0) {
    std::cout << "skipped: root writes into a read-only directory\n";
    std::exit(77);
  }
  cli_test::scratch_dir dir{"regionprof-safety"};
  fs::create_directory(dir.path / "sub");
  const outcome run = under_run({"-o", "sub/p.json"}, {"chmod_dir", (dir.path / "sub").string()}, in(dir));
  BOOST_TEST(run.status == 3);
  BOOST_TEST(run.out == "read-only\n");
  BOOST_TEST(run.err == "regionprof: cannot write the JSON profile to 'sub/p.json': cannot open '" +
                            (dir.path / "sub" / "p.json").string() +
                            "' for writing: Permission denied (check that the directory exists and is writable)\n");
}

// The caller's environment plus only variables docs/cli.md lists, each as the flags ask.
BOOST_AUTO_TEST_CASE(the_program_sees_the_callers_environment_plus_documented_variables) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  launch how = in(dir);
  how.env.emplace_back("REGIONPROF_SAFETY_PROBE=a b\tc=d");
  how.env.emplace_back("REGIONPROF_SAFETY_EMPTY=");
  const outcome alone = direct({"env"}, how);
  const outcome run = under_run({"-o", "p.json", "--markdown", "p.md", "--trace", "t.json", "--run-marker", "step",
                                 "--region", "work=w", "--row-limit", "5", "--cross-thread", "--warmup-runs", "1"},
                                {"env"}, how);
  BOOST_TEST(run.status == 0);
  const std::map<std::string, std::string> before = environment_of(alone.out);
  const std::map<std::string, std::string> after = environment_of(run.out);
  BOOST_TEST(before.at("REGIONPROF_SAFETY_PROBE") == "a b\tc=d");
  std::set<std::string> added;
  for (const auto& [name, value] : after) {
    if (!before.contains(name)) added.insert(name);
  }
  for (const auto& [name, value] : before) {
    BOOST_TEST((after.contains(name) && after.at(name) == value), name << " changed under run");
  }
  const std::set<std::string> documented{
      "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "REGIONPROF_OUTPUT",        "REGIONPROF_MARKDOWN",
      "REGIONPROF_TRACE",      "REGIONPROF_RUN_MARKER", "REGIONPROF_REGIONS",       "REGIONPROF_CROSS_THREAD",
      "REGIONPROF_ROW_LIMIT",  "REGIONPROF_WARMUP_RUNS", "REGIONPROF_CLAIM"};
  BOOST_TEST(added == documented);
  BOOST_TEST(after.at("REGIONPROF_RUN_MARKER") == "step");
  BOOST_TEST(after.at("REGIONPROF_REGIONS") == "work=w\n");
  BOOST_TEST(after.at("REGIONPROF_ROW_LIMIT") == "5");
  BOOST_TEST(after.at("REGIONPROF_CROSS_THREAD") == "1");
  BOOST_TEST(after.at("REGIONPROF_WARMUP_RUNS") == "1");
  const outcome plain = under_run({"-o", "p.json"}, {"env"}, how);
  std::set<std::string> plain_added;
  for (const auto& [name, value] : environment_of(plain.out)) {
    if (!before.contains(name)) plain_added.insert(name);
  }
  // Only what differs from the command's defaults travels (the library decodes against the same defaults).
  BOOST_TEST((plain_added ==
              std::set<std::string>{"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "REGIONPROF_OUTPUT", "REGIONPROF_CLAIM"}));
}

// The library's variables that `run` owns come from its flags only: a caller's stray REGIONPROF_TRACE
// or REGIONPROF_MARKDOWN neither reaches the program nor writes anything; the tuning ones pass through.
BOOST_AUTO_TEST_CASE(the_callers_library_variables_do_not_configure_the_run) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  launch how = in(dir);
  how.env.push_back("REGIONPROF_TRACE=" + (dir.path / "stray-trace.json").string());
  how.env.push_back("REGIONPROF_MARKDOWN=" + (dir.path / "stray.md").string());
  how.env.push_back("REGIONPROF_OUTPUT=" + (dir.path / "stray.json").string());
  how.env.emplace_back("REGIONPROF_RUN_MARKER=no-such-marker");
  how.env.emplace_back("REGIONPROF_SYNC_RECORDS=0");
  how.env.emplace_back("REGIONPROF_DEVICE_BUFFER_MB=64");
  const outcome run = under_run({"-o", "p.json", "--run-marker", "step"}, {"env"}, how);
  BOOST_TEST(run.status == 0);
  const std::map<std::string, std::string> env = environment_of(run.out);
  BOOST_TEST(!env.contains("REGIONPROF_TRACE"));
  BOOST_TEST(!env.contains("REGIONPROF_MARKDOWN"));
  BOOST_TEST(env.at("REGIONPROF_OUTPUT") != (dir.path / "stray.json").string());
  BOOST_TEST(env.at("REGIONPROF_RUN_MARKER") == "step");
  BOOST_TEST(env.at("REGIONPROF_SYNC_RECORDS") == "0");
  BOOST_TEST(env.at("REGIONPROF_DEVICE_BUFFER_MB") == "64");
  BOOST_TEST(load_profile(dir.path / "p.json").at("runs").as_array().size() == 2u);  // the 2 `step` ranges
  for (const char* stray : {"stray-trace.json", "stray.md", "stray.json"}) {
    BOOST_TEST(!fs::exists(dir.path / stray), stray << " was written");
  }
}

BOOST_AUTO_TEST_CASE(argv_is_passed_exactly) {
  cli_test::scratch_dir dir{"regionprof-safety"};
  const std::vector<std::string> args{"argv", "with space", "", "-x", "--", "--region", "-o", "a\tb\nc", "--help", ""};
  const outcome alone = direct(args, in(dir));
  const std::vector<std::string> expected{std::to_string(args.size() + 1), "argv", "with space", "", "-x", "--", "--region",
                                          "-o", "a\tb\nc", "--help", ""};
  BOOST_TEST(split_nul(alone.out) == expected);
  const outcome run = under_run({"-o", "p.json"}, args, in(dir));
  BOOST_TEST(run.status == 0);
  BOOST_TEST(run.out == alone.out);
  // Without `--`: PROGRAM is the first argument that is no option, and everything after it is its own.
  std::vector<std::string> command{REGIONPROF_CLI, "run", "-o", "p.json", SAFETY_CHILD};
  command.insert(command.end(), args.begin(), args.end());
  const outcome bare = spawn(command, in(dir));
  BOOST_TEST(bare.status == 0);
  BOOST_TEST(bare.out == alone.out);
  const json::object profile = load_profile(dir.path / "p.json");
  const json::array& recorded = profile.at("target").at("command").as_array();
  BOOST_REQUIRE_EQUAL(recorded.size(), args.size() + 1);
  for (std::size_t i = 0; i < args.size(); ++i) BOOST_TEST(recorded[i + 1].as_string() == args[i]);
}

BOOST_AUTO_TEST_SUITE_END()
