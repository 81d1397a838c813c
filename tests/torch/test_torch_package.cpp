// regionprof::torch::instrument_package over packages that hold only regionprof's record (written here
// with LibTorch's own archive writer), the kernels emulated by RecordFunctions of their names run in the
// order the package's generated code runs them. The record is the one python/tests/test_torch_aoti.py
// gets from inductor for the two-block model (b(a(x)) * 2, a block relu(n(l(x)))), where a real package runs.
#include <ATen/record_function.h>
#include <caffe2/serialize/inline_container.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "adapter_test_support.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/torch/torch.hpp"

namespace {

namespace rt = regionprof::torch;

constexpr const char* two_block_record = R"({"format": "regionprof kernel modules", "version": 1, "models": {"model": {
  "modules": [{"path": "", "type": "__main__.Net"}, {"path": "a", "type": "__main__.LinearNormBlock"},
              {"path": "a.l", "type": "torch.nn.modules.linear.Linear"},
              {"path": "a.n", "type": "torch.nn.modules.normalization.LayerNorm"},
              {"path": "b", "type": "__main__.LinearNormBlock"},
              {"path": "b.l", "type": "torch.nn.modules.linear.Linear"},
              {"path": "b.n", "type": "torch.nn.modules.normalization.LayerNorm"}],
  "kernels": [{"name": "aoti_torch_cpu_addmm_out", "module": "a.l"},
              {"name": "graph_0_cpp_fused_native_layer_norm_relu_0", "module": "a"},
              {"name": "aoti_torch_cpu_addmm_out", "module": "b.l"},
              {"name": "graph_0_cpp_fused_mul_native_layer_norm_relu_1", "module": ""}],
  "unrecorded": []}}})";

/// A `.pt2` archive in the temporary directory holding `record` as regionprof's record.
std::string package_with(const std::string& stem, std::string_view record) {
  const std::string path = (std::filesystem::temp_directory_path() / (stem + ".pt2")).string();
  caffe2::serialize::PyTorchStreamWriter writer(path);
  writer.writeRecord("extra/regionprof_kernel_modules.json", record.data(), record.size());
  writer.writeEndOfFile();
  return path;
}

/// One RecordFunction, as the package's generated code opens one around a kernel (or a run).
void record_function(at::RecordScope scope, std::string_view name, const std::function<void()>& inside = {}) {
  at::RecordFunction guard(scope);
  if (guard.isActive()) guard.before(name);
  if (inside) inside();
}

/// The generated code's run of the two-block model: its four kernels in call order, inside the runner's
/// RecordFunction. `kernels` < 4 stops early, as a run that throws does.
void run_two_blocks(std::size_t kernels = 4) {
  record_function(at::RecordScope::USER_SCOPE, "AOTIModelContainerRunner::run", [&] {
    constexpr std::string_view order[] = {"aoti_torch_cpu_addmm_out", "graph_0_cpp_fused_native_layer_norm_relu_0",
                                          "aoti_torch_cpu_addmm_out", "graph_0_cpp_fused_mul_native_layer_norm_relu_1"};
    for (std::size_t k = 0; k < kernels; ++k) record_function(at::RecordScope::FUNCTION, order[k]);
  });
}

using adapter_test::calls_per_run;
using adapter_test::range_counts;
using adapter_test::region_ids;

/// The module regions' names in the order they start (all threads, all runs).
std::vector<std::string> region_order(const regionprof::trace& t) {
  std::vector<std::pair<std::int64_t, std::string>> found;
  for (const auto& interval : t.intervals) {
    const std::string name(t.strings.view(interval.name));
    if (name.rfind("untuned_module:", 0) == 0) found.emplace_back(interval.start_ns, name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& [start, name] : found) names.push_back(std::move(name));
  return names;
}

regionprof::profile_options options_of(const rt::instrumentation& handle, std::size_t runs) {
  regionprof::profile_options options;
  options.warmup_runs = 1;
  options.measured_runs = runs;
  options.module_types = handle.module_types();
  options.warnings = handle.warnings();
  return options;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(torch_package)

BOOST_AUTO_TEST_CASE(each_kernel_is_an_instance_of_its_modules_region) {
  auto handle = rt::instrument_package(package_with("regionprof_two_blocks", two_block_record));
  BOOST_TEST(region_ids(handle) == (std::vector<std::string>{"untuned_module:a", "untuned_module:b"}),
             boost::test_tools::per_element());
  BOOST_TEST(handle.module_types().at("untuned_module:a") == "LinearNormBlock");
  BOOST_TEST(handle.warnings().empty());
  const regionprof::Profile profile = regionprof::profile([] { run_two_blocks(); }, options_of(handle, 3));
  // a: its linear's addmm and its fused layer norm + relu; b: its linear's addmm (b's fused kernel holds
  // the root's `* 2`: the residual's).
  const std::map<std::string, std::uint64_t> expected{{"untuned_module:a", 2}, {"untuned_module:b", 1}};
  const auto runs = calls_per_run(profile);
  BOOST_REQUIRE_EQUAL(runs.size(), 3u);
  for (const auto& calls : runs) BOOST_TEST(calls == expected);
  // Warm-up and measured runs: a's two kernels, then b's addmm, in every run.
  std::vector<std::string> order;
  for (int run = 0; run < 4; ++run) {
    order.insert(order.end(), {"untuned_module:a", "untuned_module:a", "untuned_module:b"});
  }
  BOOST_TEST(region_order(profile.source()) == order, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(places_start_again_at_each_run) {
  auto handle = rt::instrument_package(package_with("regionprof_two_blocks", two_block_record));
  run_two_blocks(1);  // a run that stopped after a.l's addmm: the next run's first addmm is a.l's again
  const regionprof::Profile profile = regionprof::profile([] { run_two_blocks(); }, options_of(handle, 1));
  const std::vector<std::string> order{"untuned_module:a", "untuned_module:a", "untuned_module:b",
                                       "untuned_module:a", "untuned_module:a", "untuned_module:b"};
  BOOST_TEST(region_order(profile.source()) == order, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(places_are_counted_per_thread) {
  auto handle = rt::instrument_package(package_with("regionprof_two_blocks", two_block_record));
  // Another thread runs the whole model between this run's two addmm calls: with places shared between
  // threads this run's second addmm would be counted as the other run's third, a.l's again.
  const auto run = [] {
    record_function(at::RecordScope::USER_SCOPE, "AOTIModelContainerRunner::run", [] {
      record_function(at::RecordScope::FUNCTION, "aoti_torch_cpu_addmm_out");
      std::thread([] { run_two_blocks(); }).join();
      record_function(at::RecordScope::FUNCTION, "graph_0_cpp_fused_native_layer_norm_relu_0");
      record_function(at::RecordScope::FUNCTION, "aoti_torch_cpu_addmm_out");
      record_function(at::RecordScope::FUNCTION, "graph_0_cpp_fused_mul_native_layer_norm_relu_1");
    });
  };
  const regionprof::Profile profile = regionprof::profile(run, options_of(handle, 2));
  // Each run's own thread (cross-thread attribution is off: the other thread's regions are not the run's).
  const std::map<std::string, std::uint64_t> expected{{"untuned_module:a", 2}, {"untuned_module:b", 1}};
  for (const auto& calls : calls_per_run(profile)) BOOST_TEST(calls == expected);
}

BOOST_AUTO_TEST_CASE(every_level_nests_each_kernel_in_its_module_and_ancestors) {
  auto handle =
      rt::instrument_package(package_with("regionprof_two_blocks", two_block_record), {.every_level = true});
  const std::vector<std::string> ids{"untuned_module:a", "untuned_module:a.l", "untuned_module:a.n",
                                     "untuned_module:b", "untuned_module:b.l", "untuned_module:b.n"};
  BOOST_TEST(region_ids(handle) == ids, boost::test_tools::per_element());
  const regionprof::Profile profile = regionprof::profile([] { run_two_blocks(); }, options_of(handle, 2));
  // The analysis counts the topmost regions (the nested ones are the region tree's).
  for (const auto& calls : calls_per_run(profile)) {
    BOOST_TEST(calls == (std::map<std::string, std::uint64_t>{{"untuned_module:a", 2}, {"untuned_module:b", 1}}));
  }
  // Three runs (one warm-up): per run a.l's addmm inside a, a's fused kernel in a alone, b.l's addmm
  // inside b; a.n has no kernel of its own (its layer norm is fused with a's relu).
  std::map<std::string, int> ranges;
  for (const std::string& name : region_order(profile.source())) ++ranges[name];
  BOOST_TEST(ranges == (std::map<std::string, int>{{"untuned_module:a", 6},
                                                   {"untuned_module:a.l", 3},
                                                   {"untuned_module:b", 3},
                                                   {"untuned_module:b.l", 3}}));
}

BOOST_AUTO_TEST_CASE(containers_the_record_does_not_list_are_looked_through) {
  // `blocks` (a ModuleList) never runs, so nn_module_stack never names it: its elements are the regions.
  const std::string record = R"({"format": "regionprof kernel modules", "version": 1, "models": {"model": {
    "modules": [{"path": "", "type": "Net"}, {"path": "blocks.0", "type": "Block"},
                {"path": "blocks.1", "type": "Block"}],
    "kernels": [{"name": "aoti_torch_cpu_addmm_out", "module": "blocks.0"},
                {"name": "aoti_torch_cpu_addmm_out", "module": "blocks.1"},
                {"name": "graph_0_cpp_fused_relu_0", "module": null}]}}})";
  auto handle = rt::instrument_package(package_with("regionprof_blocks", record));
  BOOST_TEST(region_ids(handle) == (std::vector<std::string>{"untuned_module:blocks.0", "untuned_module:blocks.1"}),
             boost::test_tools::per_element());
  const std::vector<regionprof::warning> warnings = handle.warnings();
  BOOST_REQUIRE_EQUAL(warnings.size(), 1u);
  BOOST_TEST(regionprof::to_string(warnings[0].code) == "COMPILED_MODULES");
  BOOST_TEST(warnings[0].message.find("1 kernel call(s) of the package '") == 0u, warnings[0].message);
  BOOST_TEST(warnings[0].message.find("(graph_0_cpp_fused_relu_0)") != std::string::npos, warnings[0].message);
}

BOOST_AUTO_TEST_CASE(one_package_at_a_time_and_removal_frees_the_place) {
  const std::string path = package_with("regionprof_two_blocks", two_block_record);
  auto first = rt::instrument_package(path);
  BOOST_CHECK_THROW(rt::instrument_package(path), std::logic_error);
  first.remove();
  auto second = rt::instrument_package(path);
  BOOST_TEST(second.regions().size() == 2u);
  second.remove();
  // Removed: the kernels open no region.
  const regionprof::Profile profile = regionprof::profile([] { run_two_blocks(); }, options_of(second, 1));
  BOOST_TEST(region_order(profile.source()).empty());
}

BOOST_AUTO_TEST_CASE(a_package_without_the_record_has_its_kernels_as_ops_only) {
  const std::string path = (std::filesystem::temp_directory_path() / "regionprof_torch_made.pt2").string();
  {
    caffe2::serialize::PyTorchStreamWriter writer(path);  // what torch's packaging writes besides the model
    writer.writeRecord("archive_format", "pt2", 3);
    writer.writeEndOfFile();
  }
  auto handle = rt::instrument_package(path, {.ops = true});
  BOOST_TEST(handle.regions().empty());
  const std::vector<regionprof::warning> warnings = handle.warnings();
  BOOST_REQUIRE_EQUAL(warnings.size(), 1u);
  BOOST_TEST(regionprof::to_string(warnings[0].code) == "COMPILED_MODULES");
  BOOST_TEST(warnings[0].message.find("has no extra/regionprof_kernel_modules.json") != std::string::npos);
  const regionprof::Profile profile = regionprof::profile([] { run_two_blocks(); }, options_of(handle, 2));
  BOOST_TEST(region_order(profile.source()).empty());
  const auto ranges = range_counts(profile.source());
  BOOST_TEST(ranges.at("aoti_torch_cpu_addmm_out") == 6u);  // two a run, three runs (one warm-up)
  BOOST_TEST(ranges.at("graph_0_cpp_fused_native_layer_norm_relu_0") == 3u);
  const auto with_record = package_with("regionprof_two_blocks", two_block_record);
  BOOST_CHECK_NO_THROW(rt::instrument_package(with_record).remove());  // no package table was taken
}

BOOST_AUTO_TEST_CASE(bad_packages_and_options_are_refused_naming_the_file) {
  const auto message = [](const auto& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "no error";
  };
  const std::string missing = (std::filesystem::temp_directory_path() / "regionprof_no_such_package.pt2").string();
  BOOST_TEST(message([&] { rt::instrument_package(missing); })
                 .find("'" + missing + "' cannot be read as a .pt2 package") != std::string::npos);
  const std::string two_blocks = package_with("regionprof_two_blocks", two_block_record);
  BOOST_TEST(message([&] { rt::instrument_package(two_blocks, {}, "decoder"); })
                 .find("no model 'decoder' (models: model)") != std::string::npos);
  BOOST_TEST(message([&] { rt::instrument_package(two_blocks, {.backward = true}); })
                 .find("backward = true, but an AOTInductor package runs inference only") != std::string::npos);
  BOOST_TEST(message([&] { rt::instrument_package(two_blocks, {.tuned = {{"c", ""}}}); }).find("'c' not found") !=
             std::string::npos);
  const std::string no_format = package_with("regionprof_no_format", R"({"version": 1})");
  BOOST_TEST(message([&] { rt::instrument_package(no_format); }).find("no \"format\": \"regionprof kernel modules\"") !=
             std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
