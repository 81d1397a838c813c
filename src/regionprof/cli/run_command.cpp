// `regionprof run`: profiles an unmodified program from outside. Starts it with regionprof's injection
// library named by NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH (see src/regionprof/inject/inject.cpp), waits,
// passes its exit status through, and reports.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "regionprof/analysis/window.hpp"
#include "regionprof/cli/commands.hpp"
#include "regionprof/cli/option_flags.hpp"
#include "regionprof/options/environment.hpp"
#include "regionprof/trace/process_identity.hpp"

#ifndef REGIONPROF_INSTALL_LIBDIR
#define REGIONPROF_INSTALL_LIBDIR "/usr/local/lib"
#endif

namespace regionprof::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* library_name = "libregionprof_inject.so";

/// The injection library: REGIONPROF_INJECT_PATH, else next to this executable, else the installed one.
std::string find_injection_library() {
  if (const char* path = std::getenv("REGIONPROF_INJECT_PATH"); path != nullptr && path[0] != '\0') {
    if (!fs::exists(path)) {
      throw std::runtime_error(std::string("REGIONPROF_INJECT_PATH=") + path + " does not exist");
    }
    return fs::absolute(path).string();
  }
  std::vector<fs::path> tried;
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) tried.push_back(self.parent_path().parent_path() / "lib" / library_name);
  tried.push_back(fs::path(REGIONPROF_INSTALL_LIBDIR) / library_name);
  std::string looked;
  for (const fs::path& candidate : tried) {
    if (fs::exists(candidate)) return fs::canonical(candidate).string();
    looked += (looked.empty() ? "" : ", ") + candidate.string();
  }
  throw std::runtime_error(std::string("cannot find ") + library_name + " (looked at " + looked +
                           "); build it (target regionprof_inject) or set REGIONPROF_INJECT_PATH");
}

/// Where the injected library writes before the file is moved into place: the same directory (so the
/// move is a rename), a name no other run uses. An old report stays until a new one exists.
std::string partial_path(const std::string& final_path) {
  return final_path + ".regionprof-" + std::to_string(getpid()) + ".partial";
}

/// An output path, absolute: not a directory, in a directory that exists and where files can be created
/// (checked before the program runs by creating and removing the partial file, not after). `path` is
/// the path with its placeholders expanded; messages name `shown`, as the user gave it.
std::string output_path(const std::string& shown, const std::string& path, const char* what) {
  const auto refuse = [&](const std::string& why) {
    return std::runtime_error("cannot write the " + std::string(what) + " to '" + shown + "': " + why);
  };
  const fs::path absolute = fs::absolute(path);
  const fs::path directory = absolute.parent_path();
  std::error_code error;
  if (!absolute.has_filename() || fs::is_directory(absolute, error)) throw refuse("it is a directory");
  if (!fs::is_directory(directory, error)) throw refuse("directory '" + directory.string() + "' does not exist");
  const std::string probe = partial_path(absolute.string());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw refuse("cannot create files in directory '" + directory.string() + "': " + std::strerror(errno));
  }
  close(fd);
  unlink(probe.c_str());
  return absolute.string();
}

/// One report `run` asks the library for, and where it goes.
struct output {
  const char* kind;        ///< the library's name for it in the claim file: json, markdown, trace
  const char* what;        ///< for messages
  std::string shown;       ///< as the user gave it (or "standard output")
  std::string final_path;  ///< absolute; the library writes partial_path(final_path)
  bool to_stdout = false;  ///< the Markdown report printed after the program exited
  std::string pattern;     ///< absolute, placeholders (%r, %p, ...) unexpanded: final_path expands it
};

/// `path` (placeholders unexpanded) made absolute against the current directory, whose own `%`s are
/// escaped, so that expanding the result gives the absolute expanded path.
std::string absolute_pattern(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  return escape_output_path(fs::current_path().string()) + "/" + path;
}

/// The pid of the process that claimed the profile (the claim file's first line), if any.
std::optional<std::int64_t> claimed_pid(const std::string& claim_path) {
  std::ifstream file(claim_path);
  std::int64_t pid = 0;
  if (file >> pid && pid > 0) return pid;
  return std::nullopt;
}

/// The claim file (REGIONPROF_CLAIM) in a directory of its own, so that it outlives whatever the program
/// does to the output directories; next to the JSON profile when no temporary directory can be made.
struct claim_file {
  std::optional<fs::path> directory;
  std::string path;

  explicit claim_file(const std::string& json_final) {
    std::error_code error;
    std::string pattern = (fs::temp_directory_path(error) / "regionprof-run-XXXXXX").string();
    if (!error && mkdtemp(pattern.data()) != nullptr) {
      directory = pattern;
      path = (*directory / "claim").string();
    } else {
      path = partial_path(json_final) + ".claim";
    }
  }
  claim_file(const claim_file&) = delete;
  claim_file& operator=(const claim_file&) = delete;
  ~claim_file() {
    std::error_code ignored;
    fs::remove(path, ignored);
    if (directory) fs::remove(*directory, ignored);
  }

  /// The library's `KIND<TAB>REASON` lines (after the pid it claimed with): why an output is missing.
  std::vector<std::pair<std::string, std::string>> unwritten() const {
    std::vector<std::pair<std::string, std::string>> reasons;
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) {
      if (const std::size_t tab = line.find('\t'); tab != std::string::npos) {
        reasons.emplace_back(line.substr(0, tab), line.substr(tab + 1));
      }
    }
    return reasons;
  }
};

pid_t running_child = -1;

void forward_signal(int signal_number) {
  if (running_child > 0) kill(running_child, signal_number);
}

const char* signal_name(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? name : "?";
}

/// The library's variables `run` owns: the caller's values never reach the program, so only the flags of
/// this command configure the profile. The others (REGIONPROF_DEVICE_BUFFER_MB, REGIONPROF_SYNC_RECORDS,
/// REGIONPROF_CUPTI_PATH) pass through from the caller.
std::vector<std::string_view> owned_variables() {
  std::vector<std::string_view> owned = options::owned_variables();
  for (const char* variable : {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", options::claim_variable}) {
    owned.push_back(variable);
  }
  return owned;
}

/// The program's environment: the caller's, less the owned variables, plus `settings` (appended).
std::vector<std::string> program_environment(const std::vector<std::pair<std::string, std::string>>& settings) {
  const std::vector<std::string_view> owned_names = owned_variables();
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const std::string_view name = text.substr(0, text.find('='));
    const bool owned = std::find(owned_names.begin(), owned_names.end(), name) != owned_names.end();
    if (!owned) env.emplace_back(text);
  }
  for (const auto& [name, value] : settings) env.push_back(name + "=" + value);
  return env;
}

/// Starts the program with the environment; returns its pid, or -errno when it could not be executed.
/// Everything exec needs is built before fork: the child only execs (or reports why it could not).
pid_t start_program(const std::vector<std::string>& program, const std::vector<std::string>& env) {
  std::vector<char*> argv;
  for (const std::string& word : program) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(report[0]);
    close(report[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (child == 0) {
    close(report[0]);
    execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    [[maybe_unused]] const ssize_t written = write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(report[1]);
  int error = 0;
  ssize_t got = 0;
  do {
    got = read(report[0], &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof error)) {
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return -error;
  }
  return child;
}

/// Waits for the program with Ctrl-C left to it (as a shell does) and SIGTERM/SIGHUP forwarded to it.
/// Returns its status as a shell reports it: the exit code, or 128 + N when signal N killed it.
int wait_for(pid_t child) {
  running_child = child;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction forward {};
  forward.sa_handler = forward_signal;
  struct sigaction old_int {}, old_quit {}, old_term {}, old_hup {};
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  running_child = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    const int signal_number = WTERMSIG(status);
    std::cerr << "regionprof: the program was killed by signal " << signal_number << " (SIG" << signal_name(signal_number)
              << ")" << (WCOREDUMP(status) ? " (core dumped)" : "") << "\n";
    return 128 + signal_number;
  }
  return 1;
}

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

/// "5 runs, 4 regions; warnings: NO_RUN_MARKERS" from a written profile.
std::string summary_of(const std::string& json_path) {
  const std::string text = read_text(json_path);
  boost::system::error_code error;
  const boost::json::value profile = boost::json::parse(text, error);
  if (error || !profile.is_object()) return "unreadable JSON";
  const boost::json::object& root = profile.as_object();
  std::ostringstream out;
  const auto count = [&root](const char* key) {
    const boost::json::value* value = root.if_contains(key);
    return value != nullptr && value->is_array() ? value->as_array().size() : std::size_t{0};
  };
  out << count("runs") << " runs, " << count("regions") << " regions";
  if (const boost::json::value* warnings = root.if_contains("warnings"); warnings != nullptr && warnings->is_array()) {
    std::string codes;
    for (const boost::json::value& w : warnings->as_array()) {
      if (const boost::json::value* code = w.is_object() ? w.as_object().if_contains("code") : nullptr;
          code != nullptr && code->is_string()) {
        codes += (codes.empty() ? "" : ", ") + std::string(code->as_string());
      }
    }
    if (!codes.empty()) out << "; warnings: " << codes;
  }
  return out.str();
}

/// Every byte of `text` to stdout. SIGPIPE is ignored first: a reader that went away costs the report,
/// never the program's exit status. Returns 0, or the errno of the failed write.
int write_stdout(const std::string& text) {
  ::signal(SIGPIPE, SIG_IGN);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t written = write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return written < 0 ? errno : EIO;
    done += static_cast<std::size_t>(written);
  }
  return 0;
}

/// Why `out` is missing after the program ended: the library's reason (its partial path replaced by the
/// user's), else what became of the directory; empty when nothing says.
std::string reason_unwritten(const output& out, const std::vector<std::pair<std::string, std::string>>& reasons) {
  const fs::path directory = fs::path(out.final_path).parent_path();
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    return "directory '" + directory.string() + "' no longer exists (it was removed while the program ran)";
  }
  for (const auto& [kind, reason] : reasons) {
    if (kind != out.kind) continue;
    std::string text = reason;
    const std::string partial = partial_path(out.final_path);
    for (std::size_t at = text.find(partial); at != std::string::npos; at = text.find(partial, at)) {
      text.replace(at, partial.size(), out.final_path);
      at += out.final_path.size();
    }
    return text;
  }
  return "";
}

/// `outputs` as the library wrote them for each window, 0, 1, ... while window k left a file (`%w` = k;
/// `identity` has the profiled program's pid); window 0's when none did.
std::vector<output> window_outputs(const std::vector<output>& outputs, const process_identity& identity) {
  std::vector<output> windows;
  for (std::uint64_t k = 0;; ++k) {
    std::vector<output> window = outputs;
    bool any = false;
    for (output& out : window) {
      out.final_path = window_output_path(out.pattern, identity, k);
      if (!out.to_stdout) out.shown = window_output_path(out.shown, identity, k);
      std::error_code error;
      any = any || fs::exists(partial_path(out.final_path), error);
    }
    if (!any && k > 0) return windows;
    windows.insert(windows.end(), window.begin(), window.end());
    if (!any) return windows;
  }
}

/// One run of the program, process `index` of `count` (both absent without --processes); with windows, a
/// profile for every window (`%w`).
int run_program(const profile_options& options, const std::vector<std::string>& program,
                std::optional<std::uint64_t> index, std::optional<std::uint64_t> count) {
  const std::string library = find_injection_library();
  const bool windows = writes_windows(options);
  const bool markdown_to_stdout = !options.json_output && !options.markdown_output;
  // Placeholders expand with this process's identity (the program inherits its environment), %p with
  // this pid until the profiled process is known (the claim file says which it was). %n is expanded
  // here: the library does not know the index.
  process_identity identity = this_process_host_and_pid();
  try {
    identity = this_process_identity();
  } catch (const process_identity_error&) {
    // checked by execute(): no path has a placeholder
  }
  process_identity indexed = identity;  // %n only; the paths it gives are this process's own
  indexed.process_index = index;
  indexed.process_count = count;
  if (windows) indexed.window_index = 0;  // without --processes %n is the window's: left to the library
  const auto add_output = [&](std::vector<output>& to, const char* kind, const char* what, const std::string& given) {
    const std::string shown = expand_process_index(given, indexed);
    const std::string pattern = absolute_pattern(shown);
    to.push_back({kind, what, shown, output_path(shown, expand_output_path(pattern, identity), what), false, pattern});
  };
  std::vector<output> outputs;
  const std::string json_shown = options.json_output.value_or("profile.json");
  add_output(outputs, "json", "JSON profile", json_shown);
  const std::string json_final = outputs.front().final_path;
  if (options.markdown_output) {
    add_output(outputs, "markdown", "Markdown report", *options.markdown_output);
  } else if (markdown_to_stdout) {
    outputs.push_back({"markdown", "Markdown report", "standard output", json_final + ".md", true,
                       outputs.front().pattern + ".md"});
  }
  if (options.trace_file) add_output(outputs, "trace", "Chrome trace", *options.trace_file);
  const claim_file claim(json_final);

  // What the library is told: the flags' options, the claim file and where to write (the partial paths).
  profile_options handed = options;
  for (const output& out : outputs) {
    const std::string partial = partial_path(out.pattern);
    const std::string_view kind = out.kind;
    (kind == "json" ? handed.json_output : kind == "markdown" ? handed.markdown_output : handed.trace_file) = partial;
  }
  std::vector<std::pair<std::string, std::string>> settings = {
      {"NVTX_INJECTION64_PATH", library},
      {"CUDA_INJECTION64_PATH", library},
      {options::claim_variable, claim.path},
  };
  for (auto& variable : options::to_environment(handed)) settings.push_back(std::move(variable));
  for (const char* variable : {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"}) {
    if (const char* old = std::getenv(variable); old != nullptr && library != old) {
      std::cerr << "regionprof: " << variable << " was '" << old << "'; regionprof's library replaces it for this run\n";
    }
  }

  std::cout.flush();
  const pid_t child = start_program(program, program_environment(settings));
  if (child < 0) {
    const int error = -child;
    std::cerr << "regionprof run: cannot run '" << program.front() << "': " << std::strerror(error) << "\n";
    return error == ENOENT ? 127 : 126;
  }
  const int status = wait_for(child);
  if (const std::optional<std::int64_t> pid = claimed_pid(claim.path)) identity.pid = *pid;
  if (windows) {
    outputs = window_outputs(outputs, identity);
  } else {
    for (output& out : outputs) {
      out.final_path = expand_output_path(out.pattern, identity);
      if (!out.to_stdout) out.shown = expand_output_path(out.shown, identity);
    }
  }

  // Move what the program wrote into place; one stderr line for each report that is missing.
  const std::vector<std::pair<std::string, std::string>> reasons = claim.unwritten();
  std::vector<const output*> written;
  bool explained = false;  // one line said that no profile was written: the other reports need none
  for (const output& out : outputs) {
    const std::string partial = partial_path(out.final_path);
    std::error_code error;
    if (fs::exists(partial, error)) {
      if (out.to_stdout) {
        const std::string markdown = read_text(partial);
        fs::remove(partial, error);
        if (const int failed = write_stdout(markdown); failed != 0) {
          std::cerr << "regionprof: cannot write the Markdown report to standard output: " << std::strerror(failed)
                    << "\n";
        }
        continue;
      }
      fs::rename(partial, out.final_path, error);
      if (error) {
        std::cerr << "regionprof: cannot write the " << out.what << " to '" << out.shown << "': cannot move '"
                  << partial << "' into place: " << error.message() << "\n";
      } else {
        written.push_back(&out);
      }
      continue;
    }
    if (explained || (out.to_stdout && written.empty())) continue;  // the JSON profile's line says why
    const std::string reason = reason_unwritten(out, reasons);
    if (!reason.empty()) {
      std::cerr << "regionprof: cannot write the " << out.what << " to '" << out.shown << "': " << reason << "\n";
    } else if (&out == &outputs.front()) {
      std::cerr << "regionprof: no profile was written: regionprof was never loaded into the program (it made no "
                   "NVTX call and CUDA never initialised: no CUDA call, or no driver), or it ended through _exit() "
                   "or SIGKILL\n";
      explained = true;
    } else {
      std::cerr << "regionprof: the " << out.what << " '" << out.shown << "' was not written\n";
    }
  }
  if (!written.empty()) {
    std::cerr << "regionprof: wrote " << written.front()->shown;
    if (written.front() == &outputs.front()) {
      // The library's own count when it left one (reading a profile of 200,000 runs back costs seconds).
      const auto given = std::find_if(reasons.begin(), reasons.end(), [](const auto& r) { return r.first == "summary"; });
      std::cerr << " (" << (given != reasons.end() ? given->second : summary_of(outputs.front().final_path)) << ")";
    }
    for (std::size_t i = 1; i < written.size(); ++i) std::cerr << ", " << written[i]->shown;
    std::cerr << "\n";
  }
  return status;
}

/// `--processes N`: the program N times, one after another, process i writing its own profile (%n = i);
/// stops at the first that exits non-zero, with its status.
int run_processes(const profile_options& options, const std::vector<std::string>& program) {
  const std::uint64_t count = options.processes;
  for (std::uint64_t i = 0; i < count; ++i) {
    const int status = run_program(options, program, i, count);
    if (status != 0) {
      if (count > 1) std::cerr << "regionprof run: process " << i << " of " << count << " exited with " << status << "\n";
      return status;
    }
  }
  return 0;
}


class run_command final : public command {
 public:
  void declare(command_line& line) override {
    declare_option_flags(line, options_, options::cli_run);
    line.command("PROGRAM", "[ARGS...]", "PROGRAM to run", program_);
  }

  std::string_view description() const override {
    return R"(Runs PROGRAM (searched in PATH) with regionprof loaded into it and reports, for every run, the
CPU time and device time each region owned and the residual no region owned. The program needs no
change: its NVTX ranges are the runs and regions (NVTX_INJECTION64_PATH), and with a GPU its kernels,
copies and memsets are traced through CUPTI from its first CUDA call (CUDA_INJECTION64_PATH).

Runs are the ranges matching --run-marker; the first N of them (--warmup-runs) are discarded. A
program without run markers is one run, and a NO_RUN_MARKERS warning says so. Without a GPU, a CUDA
driver or CUPTI the profile is CPU-only and a DEVICE_TRACING_UNAVAILABLE warning says why.
Everything after PROGRAM is the program's own command line, options included.

)";
  }

  std::string_view epilog() const override {
    return R"(
Outputs: the JSON profile is always written (-o, default profile.json). When neither -o nor
--markdown is given, the Markdown report is printed to standard output after the program has
exited, so the program's own output comes first and stays intact. A one-line summary goes to
standard error. Paths are relative to the directory regionprof was started in.

--processes N runs the program N times, one after another, each its own profile: 'regionprof run
--processes 3 -o a/prof-%n.json -- PROGRAM' writes a/prof-0.json ... a/prof-2.json, a side for
'regionprof diff a b'. It stops at the first process that exits non-zero, with its status.

Under a launcher (mpirun, srun, torchrun) every output path may hold %r (rank), %l (local rank),
%h (host), %p (pid of the profiled program), %n (process index), %w (window index) and %% (a %): 'mpirun -np 4 regionprof run -o
prof-%r.json -- PROGRAM' writes prof-0.json ... prof-3.json, which 'regionprof merge' joins. With a
world size above 1, a path without %r or %p is a usage error (the processes would write one file).

The program's standard output, standard error and exit status are its own: regionprof exits with
the program's status (128 + N when it was killed by signal N). A program that crashes leaves what was
recorded until then (runs completed before the crash). Ctrl-C reaches the program, which ends as it
would have; its profile so far is written. One process is profiled: the first to make an NVTX or CUDA
call (PROGRAM may be a wrapper script that starts the real program); its children are not.

Exit status: the program's; 127 when PROGRAM cannot be found, 126 when it cannot be run; 1 when
regionprof cannot prepare the run (its injection library is missing, an output path is a directory or
its directory does not exist or is not writable); 2 for a usage error (nothing is run). A report that
cannot be written after the program ended gets one line on standard error naming its path.

Environment: REGIONPROF_INJECT_PATH names the injection library (default ../lib/libregionprof_inject.so
next to this executable, then the installed one); REGIONPROF_DEVICE_BUFFER_MB caps CUPTI's activity
buffers (default 256); REGIONPROF_SYNC_RECORDS=1 also records CUDA synchronization; REGIONPROF_CUPTI_PATH
names libcupti.

Examples:
  regionprof run --run-marker step --region 'layer_(.*)=layer' -- build/bin/nvtx_app
  regionprof run --run-marker step --region '(upload|compute|graph|late_kernel)=stage' \
      --warmup-runs 1 -o pipeline.json --markdown pipeline.md -- build/bin/cuda_pipeline
)";
  }

  int execute() override {
    // The regions travel to the injection library one per line.
    for (const name_rule& region : options_.analysis.region_rules) {
      if (region.pattern.find('\n') != std::string::npos) throw usage_error("option --region: REGEX must be one line");
    }
    // Placeholders are checked before anything runs: an unknown one, or a path every process of a
    // job would write (world size above 1, neither %r nor %p), is a usage error.
    // A launcher variable that is not a number is an error only for paths with placeholders.
    process_identity identity;
    try {
      identity = this_process_identity();
    } catch (const process_identity_error& e) {
      for (const auto& path : {options_.json_output, options_.markdown_output, options_.trace_file}) {
        if (path && path->find('%') != std::string::npos) throw usage_error(e.what());
      }
      identity = this_process_host_and_pid();
    }
    const auto check = [&identity](const char* flag, const std::optional<std::string>& path) {
      try {
        if (path) expand_output_path(*path, identity);
      } catch (const process_identity_error& e) {
        throw usage_error("option " + std::string(flag) + ": " + e.what());
      }
    };
    const bool processes = options_.processes > 1;
    if (processes) {
      identity.process_index = 0;
      identity.process_count = options_.processes;
    }
    if (writes_windows(options_)) identity.window_index = 0;
    check("-o", options_.json_output.value_or("profile.json"));
    check("--markdown", options_.markdown_output);
    check("--trace", options_.trace_file);
    if (!processes) return run_program(options_, program_, std::nullopt, std::nullopt);
    return run_processes(options_, program_);
  }

 private:
  profile_options options_ = options::command_defaults();
  std::vector<std::string> program_;
};

}  // namespace

std::unique_ptr<command> make_run_command() { return std::make_unique<run_command>(); }

}  // namespace regionprof::cli
