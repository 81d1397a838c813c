// Process identity from the launchers' variables and output path placeholders (regionprof/trace/process_identity.hpp).
#include <map>
#include <optional>
#include <string>

#include <boost/test/unit_test.hpp>

#include "regionprof/trace/process_identity.hpp"

using namespace regionprof;

namespace {

process_identity identity_of(const std::map<std::string, std::string>& variables) {
  return identity_from(
      [&variables](std::string_view name) -> std::optional<std::string> {
        const auto found = variables.find(std::string(name));
        if (found == variables.end()) return std::nullopt;
        return found->second;
      },
      "node7", 4242);
}

std::string error_of(std::string_view pattern, const process_identity& identity) {
  try {
    expand_output_path(pattern, identity);
  } catch (const process_identity_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(process_identity_tests)

BOOST_AUTO_TEST_CASE(first_launcher_variable_wins) {
  const process_identity torchrun =
      identity_of({{"RANK", "3"}, {"OMPI_COMM_WORLD_RANK", "9"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}});
  BOOST_TEST(torchrun.rank.value_or(999) == 3u);
  BOOST_TEST(torchrun.local_rank.value_or(999) == 1u);
  BOOST_TEST(torchrun.world_size.value_or(999) == 8u);
  BOOST_TEST(torchrun.host == "node7");
  BOOST_TEST(torchrun.pid == 4242);

  const process_identity mpi = identity_of(
      {{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "6"}, {"SLURM_PROCID", "0"}});
  BOOST_TEST(mpi.rank.value_or(999) == 5u);
  BOOST_TEST(mpi.local_rank.value_or(999) == 2u);
  BOOST_TEST(mpi.world_size.value_or(999) == 6u);

  const process_identity hydra = identity_of({{"PMI_RANK", "4"}, {"MPI_LOCALRANKID", "0"}, {"PMI_SIZE", "5"}});
  BOOST_TEST(hydra.rank.value_or(999) == 4u);
  BOOST_TEST(hydra.world_size.value_or(999) == 5u);

  const process_identity slurm = identity_of({{"SLURM_PROCID", "7"}, {"SLURM_LOCALID", "3"}, {"SLURM_NTASKS", "16"}});
  BOOST_TEST(slurm.rank.value_or(999) == 7u);
  BOOST_TEST(slurm.local_rank.value_or(999) == 3u);
  BOOST_TEST(slurm.world_size.value_or(999) == 16u);

  const process_identity alone = identity_of({});
  BOOST_TEST(!alone.rank.has_value());
  BOOST_TEST(!alone.world_size.has_value());
}

BOOST_AUTO_TEST_CASE(a_rank_that_is_not_a_number_names_the_variable) {
  try {
    identity_of({{"RANK", "two"}});
    BOOST_FAIL("no error");
  } catch (const process_identity_error& e) {
    BOOST_TEST(std::string(e.what()) == "RANK='two' is not a whole number");
  }
  BOOST_CHECK_THROW(identity_of({{"WORLD_SIZE", "-1"}}), process_identity_error);
  BOOST_CHECK_THROW(identity_of({{"LOCAL_RANK", "1x"}}), process_identity_error);
}

BOOST_AUTO_TEST_CASE(placeholders_expand) {
  const process_identity id{2, 1, 4, "node7", 4242, std::nullopt, std::nullopt, std::nullopt};
  BOOST_TEST(expand_output_path("prof-%r.json", id) == "prof-2.json");
  BOOST_TEST(expand_output_path("%h/%l/%p-100%%.json", id) == "node7/1/4242-100%.json");
  BOOST_TEST(expand_output_path("r%r_l%l_%h_%p", id) == "r2_l1_node7_4242");
  const process_identity alone{std::nullopt, std::nullopt, std::nullopt, "h", 9, std::nullopt, std::nullopt, std::nullopt};
  BOOST_TEST(expand_output_path("profile.json", alone) == "profile.json");
  BOOST_TEST(expand_output_path("p%r-%l.json", alone) == "p0-0.json");  // no launcher: rank 0
}

BOOST_AUTO_TEST_CASE(all_but_the_pid_expand_to_the_same_path) {
  const process_identity id{2, 1, 4, "node%7", 4242, std::nullopt, std::nullopt, std::nullopt};
  const std::string pattern = "%h-%r-%p-%%.json";
  const std::string kept = expand_output_path_but_pid(pattern, id);
  BOOST_TEST(kept == "node%%7-2-%p-%%.json");
  BOOST_TEST(expand_output_path(kept, id) == expand_output_path(pattern, id));
  BOOST_TEST(expand_output_path(kept, id) == "node%7-2-4242-%.json");
  BOOST_TEST(escape_output_path("/a%b/") == "/a%%b/");
}

BOOST_AUTO_TEST_CASE(bad_patterns_are_errors_that_say_what_to_do) {
  const process_identity id{2, 1, 4, "node7", 4242, std::nullopt, std::nullopt, std::nullopt};
  BOOST_TEST(error_of("prof-%x.json", id) ==
             "output path 'prof-%x.json': unknown placeholder '%x' (known: %r rank, %l local rank, %h host, %p pid, "
             "%n process index, %w window index, %% a '%')");
  BOOST_TEST(error_of("prof-%", id) == "output path 'prof-%': a lone '%' at the end (write '%%' for a '%')");
  BOOST_TEST(error_of("prof-%l.json", id) ==
             "output path 'prof-%l.json': the job has 4 processes and all of them would write this one file; add "
             "%r (the rank) or %p (the pid) to the path, e.g. 'profile-%r.json'");
  BOOST_TEST(error_of("prof-%p.json", id).empty());
  const process_identity one{0, 0, 1, "node7", 1, std::nullopt, std::nullopt, std::nullopt};
  BOOST_TEST(error_of("prof.json", one).empty());  // a world of one writes one file
}

BOOST_AUTO_TEST_CASE(the_process_index_of_run_processes) {
  process_identity id{std::nullopt, std::nullopt, std::nullopt, "node7", 4242, std::nullopt, std::nullopt, std::nullopt};
  BOOST_TEST(expand_output_path("a/prof-%n.json", id) == "a/prof-0.json");  // no index: 0
  id.process_index = 2;
  id.process_count = 3;
  BOOST_TEST(expand_output_path("a/prof-%n.json", id) == "a/prof-2.json");
  BOOST_TEST(expand_output_path_but_pid("a/%n-%p.json", id) == "a/2-%p.json");
  BOOST_TEST(expand_output_path("a/%p.json", id) == "a/4242.json");  // the pid differs per process too
  BOOST_TEST(error_of("a/prof.json", id) ==
             "output path 'a/prof.json': 3 processes would all write this one file; add %n (the process index) to "
             "the path, e.g. 'prof-%n.json'");
  // Only %n, for `run`, which knows the index the injected library does not; the rest stays as written
  // and expands later to the same path.
  BOOST_TEST(expand_process_index("r%r-%h-%n-%p-100%%.json", id) == "r%r-%h-2-%p-100%%.json");
  BOOST_TEST(expand_output_path(expand_process_index("%h/%n-%p.json", id), id) == expand_output_path("%h/%n-%p.json", id));
}

// `run --window-runs N`: %w is the window's index, kept by the parent's expansions (the library knows
// the window), and a path without it, with windows on, is refused: the windows would write one file.
BOOST_AUTO_TEST_CASE(the_window_index_of_run_window_runs) {
  process_identity id{std::nullopt, std::nullopt, std::nullopt, "node7", 4242, std::nullopt, std::nullopt,
                      std::nullopt};
  BOOST_TEST(expand_output_path("a/prof-%w.json", id) == "a/prof-0.json");  // no windows: 0
  id.window_index = 0;
  BOOST_TEST(expand_output_path("a/prof-%w.json", id) == "a/prof-0.json");
  id.window_index = 12;
  BOOST_TEST(expand_output_path("a/prof-%w.json", id) == "a/prof-12.json");
  id.process_index = 2;
  id.process_count = 3;
  BOOST_TEST(expand_output_path("a/%n-%w.json", id) == "a/2-12.json");  // %n is still the process index
  BOOST_TEST(expand_output_path_but_pid("a/%n-%w-%p.json", id) == "a/2-%w-%p.json");
  BOOST_TEST(expand_process_index("a/%n-%w.json", id) == "a/2-%w.json");
  BOOST_TEST(error_of("a/prof-%n.json", id) ==
             "output path 'a/prof-%n.json': with windows a profile is written per window, and every "
             "window would write this one file; add %w (the window index) to the path, e.g. 'prof-%w.json'");
  BOOST_TEST(error_of("a/prof-%p-%n.json", id) ==  // %p does not tell windows apart: they share the pid
             "output path 'a/prof-%p-%n.json': with windows a profile is written per window, and "
             "every window would write this one file; add %w (the window index) to the path, e.g. 'prof-%w.json'");
}

// Without a process index (no --processes), %n names the window as %w does: issue 22's `--window-runs N
// -o 'w/prof-%n.json'`. Kept by the parent's %n-only expansion for the library to expand per window.
BOOST_AUTO_TEST_CASE(without_a_process_index_n_is_the_window_index) {
  process_identity id{std::nullopt, std::nullopt, std::nullopt, "node7", 4242, std::nullopt, std::nullopt,
                      std::nullopt};
  BOOST_TEST(expand_output_path("w/prof-%n.json", id) == "w/prof-0.json");  // no windows: the index 0
  id.window_index = 7;
  BOOST_TEST(expand_output_path("w/prof-%n.json", id) == "w/prof-7.json");  // names the window: accepted
  BOOST_TEST(expand_output_path("w/%n-%w.json", id) == "w/7-7.json");
  BOOST_TEST(expand_process_index("w/prof-%n.json", id) == "w/prof-%n.json");  // for the library, per window
  BOOST_TEST(expand_output_path_but_pid("w/prof-%n-%p.json", id) == "w/prof-%n-%p.json");
  id.process_index = 1;  // with --processes, %n is the process again, and the window needs %w
  id.process_count = 3;
  BOOST_TEST(expand_output_path("w/p%n-w%w.json", id) == "w/p1-w7.json");
  BOOST_TEST(error_of("w/prof-%n.json", id).find("add %w (the window index)") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
