// Job report merge: N rank profiles of 10 runs x 50 regions (with device data and key averages, as
// to_json writes them) read back, merged and written as the job JSON and Markdown, the work of
// `regionprof merge`. REGIONPROF_MERGE_KEEP_DIR=DIR also writes the profiles there (rank-0.json, ...),
// for timing `regionprof merge DIR/*.json` under /usr/bin/time -v.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "regionprof/trace/trace.hpp"

namespace {

constexpr int runs_per_rank = 10;
constexpr int regions_per_run = 50;

/// One rank's trace: 10 `step` markers, each holding 50 `layer_K` ranges that each launch one kernel.
/// Rank r's layer K lasts 1000 + 13 * K + 37 * ((r * 7 + K) % 11) ns, so ranks differ.
regionprof::trace rank_trace(int rank) {
  using namespace regionprof;
  trace t;
  const thread_index thread = t.add_thread(1000 + rank, 1000 + rank, "main");
  const name_id step = t.strings.intern("step");
  const name_id launch = t.strings.intern("cudaLaunchKernel");
  const name_id kernel = t.strings.intern("ampere_sgemm_128x64_tn");
  std::vector<name_id> layers;
  for (int k = 0; k < regions_per_run; ++k) layers.push_back(t.strings.intern("layer_" + std::to_string(k)));
  std::int64_t clock = 1'000'000;
  std::uint32_t correlation = 1;
  for (int run = 0; run < runs_per_rank; ++run) {
    const std::size_t marker = t.intervals.size();
    t.intervals.push_back({clock, 0, step, thread, 0, 0, interval_kind::range});
    clock += 100;
    for (int k = 0; k < regions_per_run; ++k) {
      const std::int64_t length = 1000 + 13 * k + 37 * ((rank * 7 + k) % 11);
      t.intervals.push_back({clock, clock + length, layers[static_cast<std::size_t>(k)], thread, 0, 0, interval_kind::range});
      t.intervals.push_back({clock + 10, clock + 60, launch, thread, correlation, 0, interval_kind::runtime_api});
      t.device_ops.push_back({clock + 100, clock + 100 + length / 2, 0, kernel, correlation, 7, 0, device_op_kind::kernel});
      ++correlation;
      clock += length + 20;
    }
    t.intervals[marker].end_ns = clock + 100;
    clock += 1000;
  }
  t.device_tracing = true;
  t.target.type = "process";
  t.target.rank = static_cast<std::uint64_t>(rank);
  t.target.host = "node" + std::to_string(rank / 8);
  t.target.pid = 4000 + rank;
  return t;
}

std::vector<std::string> rank_profiles(int ranks) {
  regionprof::analysis_options options;
  options.run_marker = {regionprof::match_kind::regex, "step", "region", ""};
  options.region_rules = {regionprof::parse_region_arg("layer_(.*)=layer")};
  std::vector<std::string> texts;
  const char* keep = std::getenv("REGIONPROF_MERGE_KEEP_DIR");
  for (int r = 0; r < ranks; ++r) {
    const regionprof::trace t = rank_trace(r);
    texts.push_back(regionprof::to_json(regionprof::Profile(t, options, {}, regionprof::analyze(t, options))));
    if (keep != nullptr && *keep != '\0') {
      std::ofstream(std::string(keep) + "/rank-" + std::to_string(r) + ".json", std::ios::binary) << texts.back();
    }
  }
  return texts;
}

void BM_MergeRanks(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const std::vector<std::string> texts = rank_profiles(ranks);
  std::uint64_t input_bytes = 0;
  for (const std::string& text : texts) input_bytes += text.size();
  std::uint64_t output_bytes = 0;
  for (auto _ : state) {
    std::vector<regionprof::named_profile> profiles;
    profiles.reserve(texts.size());
    for (std::size_t r = 0; r < texts.size(); ++r) {
      const std::string name = "rank-" + std::to_string(r) + ".json";
      profiles.push_back({name, regionprof::read_profile_text(texts[r], name)});
    }
    const regionprof::job_report job = regionprof::merge_ranks(std::move(profiles));
    const std::string json = regionprof::job_to_json(job);
    const std::string markdown = regionprof::job_to_markdown(job);
    output_bytes = json.size() + markdown.size();
    benchmark::DoNotOptimize(json.data());
  }
  state.counters["input_MB"] = static_cast<double>(input_bytes) / 1e6;
  state.counters["output_MB"] = static_cast<double>(output_bytes) / 1e6;
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(input_bytes));
}
BENCHMARK(BM_MergeRanks)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
