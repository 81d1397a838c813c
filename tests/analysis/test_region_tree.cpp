// Rule 14 (docs/design.md): the region tree of every run, on hand-built traces (every expected figure
// computed by hand in the comments) and on random traces against the naive reference
// (tests/support/reference_attribution.hpp) and the invariants (tests/support/tree_checks.hpp).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/random_trace.hpp"
#include "support/reference_attribution.hpp"
#include "support/trace_builder.hpp"
#include "support/tree_checks.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

/// The nodes of a run's tree by path text (`a/b/c`), and their order.
struct tree_view {
  std::map<std::string, const tree_node*> by_path;
  std::vector<std::string> order;
};

tree_view view(const analysis_result& result, const run_result& run) {
  tree_view v;
  for (std::size_t i = 0; i < run.tree.size(); ++i) {
    const std::string path = path_text(result, run, i);
    v.by_path[path] = &run.tree[i];
    v.order.push_back(path);
  }
  return v;
}

void check_invariants(const analysis_result& result) {
  for (const std::string& line : tree_violations(result)) BOOST_ERROR(line);
}

// thread 1:
//   marker [0, 1000]
//     A [100, 700]
//       X (cpu op) [150, 650]          other CPU intervals do not break the nesting
//         B [200, 400]  launch corr 1 -> kernel [300, 700]   400 ns
//         B [420, 480]
//         A [500, 600]  launch corr 2 -> kernel [800, 850]    50 ns   recursion: node A/A
//       launch [660, 670] corr 3 -> kernel [900, 1000]         100 ns   A's own
//     C [750, 900]  launch corr 4 -> kernel [1000, 1010]        10 ns
trace nested_trace() {
  return trace_builder()
      .thread(1)
      .marker(0, 1000)
      .range("aot_module:A", 100, 700)
      .cpu_op("X", 150, 650)
      .range("aot_module:B", 200, 400)
      .launch(250, 260, 1)
      .range("aot_module:B", 420, 480)
      .range("aot_module:A", 500, 600)
      .launch(510, 520, 2)
      .launch(660, 670, 3)
      .range("untuned_module:C", 750, 900)
      .launch(760, 770, 4)
      .kernel("k1", 300, 700, 1)
      .kernel("k2", 800, 850, 2)
      .kernel("k3", 900, 1000, 3)
      .kernel("k4", 1000, 1010, 4)
      .build();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(region_tree)

BOOST_AUTO_TEST_CASE(nested_regions_recursion_and_self_time) {
  const analysis_result r = analyze(nested_trace(), analysis_options{});
  BOOST_TEST(r.has_region_tree);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  // regions[] is unchanged by the tree: only the topmost A and C own time.
  BOOST_TEST(region_ids(r) == (std::vector<std::string>{"aot_module:A", "untuned_module:C"}));
  // tree_regions: regions first, then B, seen only nested.
  BOOST_TEST_REQUIRE(r.tree_regions.size() == 3u);
  BOOST_TEST(r.tree_regions[2].id == "aot_module:B");
  const tree_view v = view(r, r.runs[0]);
  // Depth-first, children by first appearance: A, A/B (200), A/A (500), then C.
  BOOST_TEST(v.order == (std::vector<std::string>{"aot_module:A", "aot_module:A/aot_module:B",
                                                  "aot_module:A/aot_module:A", "untuned_module:C"}));
  const tree_node& a = *v.by_path.at("aot_module:A");
  BOOST_TEST(a.depth == 0u);
  BOOST_TEST(a.calls == 1u);
  BOOST_TEST(a.cpu_time_ns == 600);             // [100, 700]
  BOOST_TEST(a.self_cpu_time_ns == 240);        // 600 - (200 + 60) - 100
  BOOST_TEST(*a.device_time_ns == 550);         // 400 + 50 + 100
  BOOST_TEST(*a.self_device_time_ns == 100);    // corr 3 only
  const tree_node& ab = *v.by_path.at("aot_module:A/aot_module:B");
  BOOST_TEST(ab.depth == 1u);
  BOOST_TEST(ab.calls == 2u);                   // two instances, one node
  BOOST_TEST(ab.cpu_time_ns == 260);            // 200 + 60
  BOOST_TEST(ab.self_cpu_time_ns == 260);
  BOOST_TEST(*ab.device_time_ns == 400);
  BOOST_TEST(*ab.self_device_time_ns == 400);
  const tree_node& aa = *v.by_path.at("aot_module:A/aot_module:A");
  BOOST_TEST(aa.calls == 1u);                   // recursion is a deeper node, not a merge
  BOOST_TEST(aa.cpu_time_ns == 100);
  BOOST_TEST(*aa.device_time_ns == 50);
  const tree_node& c = *v.by_path.at("untuned_module:C");
  BOOST_TEST(c.cpu_time_ns == 150);
  BOOST_TEST(c.self_cpu_time_ns == 150);
  BOOST_TEST(*c.device_time_ns == 10);
  // The topmost nodes are the run's regions.
  const region_aggregate* region_a = find_region(r, r.runs[0], "aot_module:A");
  BOOST_TEST_REQUIRE(region_a != nullptr);
  BOOST_TEST(region_a->cpu_time_ns == a.cpu_time_ns);
  BOOST_TEST(*region_a->device_time_ns == *a.device_time_ns);
  BOOST_TEST(tree_path(r.runs[0].tree, 2) == (std::vector<std::uint32_t>{0, 0}));  // A/A
  check_invariants(r);
  BOOST_TEST(r.warnings.empty());
}

BOOST_AUTO_TEST_CASE(without_device_data_the_device_fields_are_absent) {
  const trace t = trace_builder()
                      .thread(1)
                      .marker(0, 100)
                      .range("aot_module:A", 10, 90)
                      .range("aot_module:B", 20, 30)
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  BOOST_TEST_REQUIRE(r.runs[0].tree.size() == 2u);
  for (const tree_node& node : r.runs[0].tree) {
    BOOST_TEST(!node.device_time_ns);
    BOOST_TEST(!node.self_device_time_ns);
  }
  BOOST_TEST(r.runs[0].tree[0].self_cpu_time_ns == 70);  // 80 - 10
  check_invariants(r);
}

BOOST_AUTO_TEST_CASE(turning_the_tree_off_changes_no_other_figure) {
  analysis_options off;
  off.region_tree = false;
  const trace t = nested_trace();
  const analysis_result with = analyze(t, analysis_options{});
  const analysis_result without = analyze(t, off);
  BOOST_TEST(!without.has_region_tree);
  BOOST_TEST(without.tree_regions.empty());
  BOOST_TEST_REQUIRE(without.runs.size() == with.runs.size());
  BOOST_TEST(without.runs[0].tree.empty());
  BOOST_TEST(region_ids(without) == region_ids(with));
  BOOST_TEST(row_keys(without.cpu_time_total) == row_keys(with.cpu_time_total));
}

// thread 1: marker [0, 1000], A [100, 600] holding B [200, 400].
// thread 2 (no marker; rule 9):
//   launch [300, 310] corr 1 -> kernel 100 ns: outside its thread's regions, B is open at 300 -> A/B
//   launch [450, 460] corr 3 -> kernel  30 ns: B closed at 400, A open -> A
//   W [700, 800] holding launch [710, 720] corr 2 -> kernel 20 ns: W's own (an off-thread region)
BOOST_AUTO_TEST_CASE(cross_thread_device_time_goes_to_the_node_open_at_the_launch) {
  const trace t = trace_builder()
                      .thread(1)
                      .marker(0, 1000)
                      .range("aot_module:A", 100, 600)
                      .range("aot_module:B", 200, 400)
                      .thread(2)
                      .launch(300, 310, 1)
                      .launch(450, 460, 3)
                      .range("aot_module:W", 700, 800)
                      .launch(710, 720, 2)
                      .kernel("k1", 400, 500, 1)
                      .kernel("k2", 800, 820, 2)
                      .kernel("k3", 500, 530, 3)
                      .build();
  analysis_options options;
  options.cross_thread = true;
  const analysis_result r = analyze(t, options);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  const tree_view v = view(r, r.runs[0]);
  BOOST_TEST(v.order ==
             (std::vector<std::string>{"aot_module:A", "aot_module:A/aot_module:B", "aot_module:W"}));
  const tree_node& a = *v.by_path.at("aot_module:A");
  BOOST_TEST(a.cpu_time_ns == 500);
  BOOST_TEST(a.self_cpu_time_ns == 300);
  BOOST_TEST(*a.device_time_ns == 130);       // 100 (through B) + 30
  BOOST_TEST(*a.self_device_time_ns == 30);
  const tree_node& ab = *v.by_path.at("aot_module:A/aot_module:B");
  BOOST_TEST(*ab.self_device_time_ns == 100);
  const tree_node& w = *v.by_path.at("aot_module:W");
  BOOST_TEST(w.calls == 0u);                  // seen only off-thread: no calls, no CPU time (rule 9)
  BOOST_TEST(w.cpu_time_ns == 0);
  BOOST_TEST(*w.device_time_ns == 20);
  check_invariants(r);

  // cross_thread off: the other thread's launches are nobody's.
  const analysis_result off = analyze(t, analysis_options{});
  const tree_view v_off = view(off, off.runs[0]);
  BOOST_TEST(v_off.order == (std::vector<std::string>{"aot_module:A", "aot_module:A/aot_module:B"}));
  BOOST_TEST(*v_off.by_path.at("aot_module:A")->device_time_ns == 0);
  check_invariants(off);
}

BOOST_AUTO_TEST_CASE(the_node_cap_folds_into_the_parent_and_warns) {
  analysis_options options;
  options.region_tree_max_nodes = 2;  // A and A/B fit; A/A is folded into A; C is topmost (never refused)
  const analysis_result r = analyze(nested_trace(), options);
  const tree_view v = view(r, r.runs[0]);
  BOOST_TEST(v.order == (std::vector<std::string>{"aot_module:A", "aot_module:A/aot_module:B", "untuned_module:C"}));
  const tree_node& a = *v.by_path.at("aot_module:A");
  BOOST_TEST(a.cpu_time_ns == 600);
  BOOST_TEST(a.self_cpu_time_ns == 340);      // 600 - 260: A/A's 100 is A's own now
  BOOST_TEST(*a.self_device_time_ns == 150);  // 100 + A/A's 50
  BOOST_TEST(*a.device_time_ns == 550);
  const warning* w = find_warning(r, warning_code::region_tree_truncated);
  BOOST_TEST_REQUIRE(w != nullptr);
  BOOST_TEST(leading_count(w->message) == 1);
  BOOST_TEST(w->source == warning_source::core);
  check_invariants(r);
  // Without a cap problem, no warning.
  BOOST_TEST(!find_warning(analyze(nested_trace(), analysis_options{}), warning_code::region_tree_truncated));
}

BOOST_AUTO_TEST_CASE(every_run_has_its_own_tree) {
  const trace t = trace_builder()
                      .thread(1)
                      .marker(0, 100)
                      .range("aot_module:A", 10, 90)
                      .range("aot_module:B", 20, 30)
                      .marker(200, 300)
                      .range("aot_module:A", 210, 290)
                      .range("aot_module:C", 220, 260)
                      .range("aot_module:B", 230, 240)
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.size() == 2u);
  BOOST_TEST(view(r, r.runs[0]).order == (std::vector<std::string>{"aot_module:A", "aot_module:A/aot_module:B"}));
  BOOST_TEST(view(r, r.runs[1]).order == (std::vector<std::string>{"aot_module:A", "aot_module:A/aot_module:C",
                                                                    "aot_module:A/aot_module:C/aot_module:B"}));
  check_invariants(r);
}

// Random traces: the engine's tree equals the naive reference's, node by node, and the invariants hold,
// with cross_thread on and off, with skip_runs, and under a tight node cap (invariants only).
BOOST_AUTO_TEST_CASE(matches_the_naive_reference_on_random_traces) {
  random_trace_options shape;
  std::size_t nested_nodes = 0;  // the random traces do nest regions (and recurse)
  std::size_t recursive_nodes = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    shape.threads = 1 + seed % 4;
    shape.overlap_probability = static_cast<double>(seed % 5) * 0.05;
    const trace t = random_trace(seed * 104729, shape);
    for (bool cross_thread : {false, true}) {
      BOOST_TEST_CONTEXT("seed " << seed << " cross_thread " << cross_thread) {
        analysis_options options;
        options.cross_thread = cross_thread;
        options.skip_runs = seed % 3;
        const analysis_result got = analyze(t, options);
        check_invariants(got);
        reference::rules rules = reference::default_rules();
        rules.cross_thread = cross_thread;
        rules.skip_runs = options.skip_runs;
        const reference::result want = reference::attribute(t, rules);
        BOOST_TEST_REQUIRE(got.runs.size() == want.runs.size());
        for (std::size_t r = 0; r < got.runs.size(); ++r) {
          const run_result& run = got.runs[r];
          BOOST_TEST(run.tree.size() == want.runs[r].tree.size());
          for (std::size_t i = 0; i < run.tree.size(); ++i) {
            std::vector<std::string> path;
            for (std::uint32_t region : tree_path(run.tree, i)) path.push_back(got.tree_regions.at(region).id);
            nested_nodes += path.size() > 1 ? 1 : 0;
            recursive_nodes += path.size() > 1 && path[path.size() - 2] == path.back() ? 1 : 0;
            BOOST_TEST_CONTEXT("run " << r << " " << path_text(got, run, i)) {
              auto found = want.runs[r].tree.find(path);
              BOOST_TEST_REQUIRE((found != want.runs[r].tree.end()));
              const tree_node& node = run.tree[i];
              BOOST_TEST(node.calls == found->second.calls);
              BOOST_TEST(node.cpu_time_ns == found->second.cpu_ns);
              BOOST_TEST(node.self_cpu_time_ns == found->second.self_cpu_ns);
              BOOST_TEST(node.device_time_ns.value_or(0) == found->second.device_ns);
              BOOST_TEST(node.self_device_time_ns.value_or(0) == found->second.self_device_ns);
            }
          }
        }
        // The tree changes nothing else.
        analysis_options off = options;
        off.region_tree = false;
        const analysis_result without = analyze(t, off);
        BOOST_TEST_REQUIRE(without.runs.size() == got.runs.size());
        for (std::size_t r = 0; r < got.runs.size(); ++r) {
          BOOST_TEST(without.runs[r].residual_cpu_ns == got.runs[r].residual_cpu_ns);
          BOOST_TEST((without.runs[r].residual_device_ns == got.runs[r].residual_device_ns));
          BOOST_TEST((without.runs[r].device_busy_ns == got.runs[r].device_busy_ns));
          BOOST_TEST_REQUIRE(without.runs[r].regions.size() == got.runs[r].regions.size());
          for (std::size_t k = 0; k < got.runs[r].regions.size(); ++k) {
            const region_aggregate& a = got.runs[r].regions[k];
            const region_aggregate& b = without.runs[r].regions[k];
            BOOST_TEST(a.region == b.region);
            BOOST_TEST(a.calls == b.calls);
            BOOST_TEST(a.cpu_time_ns == b.cpu_time_ns);
            BOOST_TEST((a.device_time_ns == b.device_time_ns));
            BOOST_TEST((a.off_thread_cpu_time_ns == b.off_thread_cpu_time_ns));
          }
        }
        BOOST_TEST(region_ids(without) == region_ids(got));
        BOOST_TEST(without.warnings.size() == got.warnings.size());

        analysis_options capped = options;
        capped.region_tree_max_nodes = seed % 7;
        check_invariants(analyze(t, capped));
      }
    }
  }
  BOOST_TEST_MESSAGE(nested_nodes << " nested nodes, " << recursive_nodes << " of them recursive");
  BOOST_TEST(nested_nodes > 500u);
  BOOST_TEST(recursive_nodes > 50u);
}

BOOST_AUTO_TEST_SUITE_END()
