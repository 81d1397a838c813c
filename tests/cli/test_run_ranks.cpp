// `regionprof run` under launchers: one profile per rank through the path placeholders, rank, world
// size, host and pid in `target`, the usage errors that keep two processes from writing one file, and
// `regionprof merge` joining the ranks. Launchers: a plain fork launcher here (torchrun's variables) and
// Open MPI's mpirun (skipped, exit 77, when it is not installed).
#define BOOST_TEST_MODULE regionprof run under launchers
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "cli_runner.hpp"
#include "support/child_process.hpp"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string read_file(const fs::path& path) { return cli_test::read_file(path.string()); }

/// A started process (the launcher's child).
using started = std::unique_ptr<regionprof::test::child_process>;

struct outcome {
  int status = -1;
  std::string out;
  std::string err;
};

/// Starts `args` in `dir` with the caller's environment plus `extra` (replacing variables of the same name).
started start(const fs::path& dir, const std::vector<std::string>& args, const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return std::make_unique<regionprof::test::child_process>(args, regionprof::test::child_options{.dir = dir, .env = env});
}

outcome finish(const started& s) {
  regionprof::test::child_result r = s->wait();
  outcome o{r.status, std::move(r.out), std::move(r.err)};
  BOOST_TEST_MESSAGE("exit " << o.status << "\nstderr: " << o.err);
  return o;
}

std::vector<std::string> run_args(const std::string& output) {
  return {REGIONPROF_CLI, "run", "--run-marker", "step", "--region", "layer_(.*)=layer", "-o", output, "--", NVTX_APP};
}

json::object load(const fs::path& path) {
  BOOST_REQUIRE_MESSAGE(fs::exists(path), path << " was not written");
  return json::parse(read_file(path)).as_object();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

/// `regionprof merge` of the two rank profiles in `dir`; checks the job and returns its Markdown.
std::string merge_two(const fs::path& dir) {
  const outcome merged = finish(start(dir,
                                      {REGIONPROF_CLI, "merge", "prof-1.json", "prof-0.json", "-o", "job.json",
                                       "--markdown", "job.md", "--trace", "job_trace.json"},
                                      {}));
  BOOST_TEST(merged.status == 0);
  BOOST_TEST(merged.out.empty());
  const json::object job = load(dir / "job.json");
  BOOST_TEST(job.at("kind").as_string() == "regionprof_job");
  BOOST_TEST_REQUIRE(job.at("ranks").as_array().size() == 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    const json::object& rank = job.at("ranks").at(r).as_object();
    BOOST_TEST(rank.at("rank").to_number<int>() == static_cast<int>(r));  // by target.rank, not argument order
    BOOST_TEST(rank.at("file").as_string() == "prof-" + std::to_string(r) + ".json");
    BOOST_TEST(rank.at("profile") == json::value(load(dir / ("prof-" + std::to_string(r) + ".json"))));
  }
  const json::array& runs = job.at("cross_rank").at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 5u);  // nvtx_app: 5 steps
  // Each run's and region's slowest rank is the one with the larger figure in its own profile.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto cpu_of = [&](int rank) {
      return load(dir / ("prof-" + std::to_string(rank) + ".json")).at("runs").at(i).at("timing").at("cpu_time_us").as_double();
    };
    const double c0 = cpu_of(0);
    const double c1 = cpu_of(1);
    const json::object& cpu = runs[i].at("timing").at("cpu_time_us").as_object();
    BOOST_TEST(cpu.at("slowest_rank").to_number<int>() == (c1 > c0 ? 1 : 0));
    BOOST_TEST(cpu.at("max").as_double() == std::max(c0, c1));
    BOOST_TEST(cpu.at("median").as_double() == (c0 + c1) / 2, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(runs[i].at("regions").as_array().size() == 4u);  // layer:0 .. layer:3
  }
  BOOST_TEST(job.at("warnings").as_array().empty());
  const std::string md = read_file(dir / "job.md");
  BOOST_TEST(md.starts_with("# regionprof job report\n"));
  BOOST_TEST(contains(md, "## Stragglers"));
  const json::value trace = json::parse(read_file(dir / "job_trace.json"));
  BOOST_TEST(trace.at("traceEvents").as_array().size() > 10u);
  return md;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_under_launchers)

// A plain fork launcher with torchrun's variables: two ranks, two files, then one job.
BOOST_AUTO_TEST_CASE(fork_launcher_writes_one_profile_per_rank) {
  cli_test::scratch_dir dir{"regionprof-ranks"};
  std::vector<started> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(start(dir.path, run_args("prof-%r.json"),
                          {{"RANK", std::to_string(r)}, {"LOCAL_RANK", std::to_string(r)}, {"WORLD_SIZE", "2"}}));
  }
  std::vector<pid_t> launcher_pids;
  for (const started& s : ranks) {
    launcher_pids.push_back(s->pid());
    const outcome o = finish(s);
    BOOST_TEST(o.status == 0);
  }
  for (int r = 0; r < 2; ++r) {
    const json::object target = load(dir.path / ("prof-" + std::to_string(r) + ".json")).at("target").as_object();
    BOOST_TEST(target.at("rank").to_number<int>() == r);
    BOOST_TEST(target.at("local_rank").to_number<int>() == r);
    BOOST_TEST(target.at("world_size").to_number<int>() == 2);
    BOOST_TEST(target.at("host").as_string() == host_name());
    const auto pid = target.at("pid").to_number<pid_t>();
    BOOST_TEST(pid > 0);
    BOOST_TEST(pid != launcher_pids[static_cast<std::size_t>(r)]);  // the program's pid, not regionprof's
  }
  const std::string md = merge_two(dir.path);
  std::printf("straggler table of the fork-launcher test:\n%s\n", md.c_str());
}

BOOST_AUTO_TEST_CASE(pid_placeholder_names_the_profiled_program) {
  cli_test::scratch_dir dir{"regionprof-ranks"};
  const outcome o = finish(start(dir.path, run_args("prof-%h-%p.json"), {{"RANK", "1"}, {"WORLD_SIZE", "2"}}));
  BOOST_TEST(o.status == 0);
  std::vector<fs::path> written;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    if (entry.path().filename().string().starts_with("prof-")) written.push_back(entry.path());
  }
  BOOST_TEST_REQUIRE(written.size() == 1u);
  const json::object target = load(written[0]).at("target").as_object();
  BOOST_TEST(written[0].filename().string() ==
             "prof-" + host_name() + "-" + std::to_string(target.at("pid").to_number<long>()) + ".json");
  BOOST_TEST(contains(o.err, "regionprof: wrote " + written[0].filename().string() + " ("));
}

BOOST_AUTO_TEST_CASE(one_file_for_every_rank_is_a_usage_error) {
  cli_test::scratch_dir dir{"regionprof-ranks"};
  const outcome plain = finish(start(dir.path, run_args("prof.json"), {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  BOOST_TEST(plain.status == 2);
  BOOST_TEST(contains(plain.err, "regionprof run: option -o: output path 'prof.json': the job has 4 processes and all "
                                 "of them would write this one file; add %r (the rank) or %p (the pid)"));
  BOOST_TEST(!fs::exists(dir.path / "prof.json"));  // nothing ran
  const outcome by_default = finish(start(dir.path, {REGIONPROF_CLI, "run", "--", NVTX_APP}, {{"WORLD_SIZE", "2"}}));
  BOOST_TEST(by_default.status == 2);
  BOOST_TEST(contains(by_default.err, "output path 'profile.json'"));
  std::vector<std::string> markdown = run_args("p-%r.json");
  markdown.insert(markdown.begin() + 2, {"--markdown", "same.md"});
  const outcome md = finish(start(dir.path, markdown, {{"WORLD_SIZE", "2"}}));
  BOOST_TEST(md.status == 2);
  BOOST_TEST(contains(md.err, "option --markdown: output path 'same.md'"));
  const outcome help = finish(start(dir.path, {REGIONPROF_CLI, "run", "--help"}, {}));
  BOOST_TEST(contains(help.out, "%r (rank), %l (local rank),\n%h (host), %p (pid of the profiled program)"));
  const outcome unknown = finish(start(dir.path, run_args("prof-%x.json"), {}));
  BOOST_TEST(unknown.status == 2);
  BOOST_TEST(contains(unknown.err, "unknown placeholder '%x'"));
  const outcome bad_rank = finish(start(dir.path, run_args("prof-%r.json"), {{"RANK", "zero"}}));
  BOOST_TEST(bad_rank.status == 2);
  BOOST_TEST(contains(bad_rank.err, "RANK='zero' is not a whole number"));
  // Without a placeholder the variable does not matter: the profile just names no rank.
  const outcome no_placeholder = finish(start(dir.path, run_args("plain.json"), {{"RANK", "zero"}}));
  BOOST_TEST(no_placeholder.status == 0);
  BOOST_TEST(!load(dir.path / "plain.json").at("target").as_object().contains("rank"));
}

// docs/cli.md's launcher example: mpirun -np 2 regionprof run -o 'prof-%r.json' -- build/bin/nvtx_app.
BOOST_AUTO_TEST_CASE(mpirun_writes_one_profile_per_rank) {
  const char* path = std::getenv("PATH");
  bool found = false;
  std::string mpirun;
  for (std::string_view rest = path != nullptr ? path : ""; !found;) {
    const std::size_t colon = rest.find(':');
    const fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / "mpirun";
    if (access(candidate.c_str(), X_OK) == 0) {
      found = true;
      mpirun = candidate.string();
    }
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (!found) {
    std::printf("skipped: mpirun is not installed (Debian openmpi-bin; scripts/setup installs it)\n");
    std::fflush(stdout);
    std::exit(77);
  }
  cli_test::scratch_dir dir{"regionprof-ranks"};
  std::vector<std::string> args{mpirun, "--oversubscribe", "-np", "2"};
  if (geteuid() == 0) args.insert(args.begin() + 1, "--allow-run-as-root");
  for (const std::string& a : run_args("prof-%r.json")) args.push_back(a);
  const outcome o = finish(start(dir.path, args, {}));
  BOOST_TEST(o.status == 0);
  for (int r = 0; r < 2; ++r) {
    const json::object target = load(dir.path / ("prof-" + std::to_string(r) + ".json")).at("target").as_object();
    BOOST_TEST(target.at("rank").to_number<int>() == r);
    BOOST_TEST(target.at("world_size").to_number<int>() == 2);
    BOOST_TEST(target.at("local_rank").to_number<int>() == r);  // one host
  }
  const std::string md = merge_two(dir.path);
  std::printf("straggler table of the mpirun test:\n%s\n", md.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
