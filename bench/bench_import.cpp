// Kineto import throughput (docs/design.md, Budgets: >= 500 MB/s of trace JSON) on a generated ~100 MB
// trace in torch.profiler's own layout, plain and gzip, with zlib's inflate alone as the gzip
// baseline, and plain with torch's memory instants (BM_ImportKinetoMemory). Each trace is generated once,
// before timing, into temporary files.
// REGIONPROF_IMPORT_TRACE_MB sets its size (default 100); REGIONPROF_IMPORT_TRACE_KEEP=PATH also
// keeps the plain trace at PATH, e.g. for the memory check of `regionprof analyze` (docs/cli.md).
//
//   build/bin/regionprof_bench --benchmark_filter='Import|Inflate' --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
#include <unistd.h>
#include <zlib.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "regionprof/import/import.hpp"

namespace {

/// Appends one Kineto complete event, formatted as libkineto writes it.
void event(std::string& out, const char* cat, const std::string& name, long long pid, long long tid, long long ts_ns,
           long long dur_ns, const std::string& args) {
  char times[96];
  std::snprintf(times, sizeof times, "\"ts\": %lld.%03lld, \"dur\": %lld.%03lld", ts_ns / 1000, ts_ns % 1000,
                dur_ns / 1000, dur_ns % 1000);
  out += "  {\n    \"ph\": \"X\", \"cat\": \"";
  out += cat;
  out += "\", \"name\": \"" + name + "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) +
         ",\n    " + times + ",\n    \"args\": {\n      " + args + "\n    }\n  },\n";
}

void flow(std::string& out, char phase, long long id, long long pid, long long tid, long long ts_ns) {
  char text[200];
  std::snprintf(text, sizeof text,
                "  {\n    \"ph\": \"%c\", \"id\": %lld, \"pid\": %lld, \"tid\": %lld, \"ts\": %lld.%03lld,\n"
                "    \"cat\": \"ac2g\", \"name\": \"ac2g\"%s\n  },\n",
                phase, id, pid, tid, ts_ns / 1000, ts_ns % 1000, phase == 'f' ? ", \"bp\": \"e\"" : "");
  out += text;
}

/// Appends one torch.profiler memory instant (`[memory]`, profile_memory=True), formatted as libkineto writes
/// it: `device` -1 is the CPU (Device Type 0), else a CUDA ordinal (Device Type 1).
void memory_instant(std::string& out, long long pid, long long tid, long long ts_ns, long long device, long long bytes,
                    long long total) {
  char text[400];
  std::snprintf(text, sizeof text,
                "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n"
                "    \"pid\": %lld, \"tid\": %lld,\n    \"ts\": %lld.%03lld,\n    \"args\": {\n"
                "      \"Total Reserved\": %lld, \"Total Allocated\": %lld, \"Bytes\": %lld, \"Device Id\": %lld, "
                "\"Device Type\": %d, \"Addr\": %lld, \"Ev Idx\": %lld\n    }\n  },\n",
                pid, tid, ts_ns / 1000, ts_ns % 1000, total + (1LL << 30), total, bytes, device, device < 0 ? 0 : 1,
                139926520725504LL + total, ts_ns % 30000);
  out += text;
}

/// A training loop's worth of events (~`target_bytes`): ProfilerStep annotations, module
/// annotations, nested aten ops with shapes, cudaLaunchKernel with flows, kernels with launch
/// parameters, copies and sets, on two CPU threads and two streams. `memory`: each aten op also
/// allocates its output at its start and frees it at its end (`[memory]` instants, CUDA and CPU in turn), as
/// torch.profiler(profile_memory=True) writes them.
std::string kineto_trace(std::size_t target_bytes, bool memory) {
  const std::vector<std::string> ops = {"aten::linear", "aten::addmm", "aten::relu", "aten::layer_norm",
                                        "aten::native_layer_norm", "aten::softmax", "aten::_softmax",
                                        "aten::dropout", "aten::matmul", "aten::bmm", "aten::add", "aten::mul"};
  const std::vector<std::string> kernels = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
      "ampere_sgemm_128x64_tn",
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, "
      "float const*, float const*, float*, float*, float*)",
      "void cunn_SoftMaxForward<4, float, float, float, cunn::SoftMaxForwardEpilogue>(float*, float const*, int)"};
  std::string out;
  out.reserve(target_bytes + (1 << 20));
  out += "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA H100 80GB "
         "HBM3\", \"totalGlobalMem\": 85031714816,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      "
         "\"maxThreadsPerBlock\": 1024, \"numSms\": 132\n    }\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", "
         "\"rank\": 0, \"world_size\": 8},\n  \"traceEvents\": [\n";
  const long long pid = 4037;
  const long long main_tid = 4037;
  const long long backward_tid = 23695;
  long long ts = 1682725898236567123LL;
  long long correlation = 6935929;
  long long external = 41506;
  long long allocated = 0;  // bytes, on the device of the memory instants
  for (int step = 0; out.size() < target_bytes; ++step) {
    const long long step_start = ts;
    ++external;
    event(out, "user_annotation", "ProfilerStep#" + std::to_string(551 + step), pid, main_tid, step_start, 2500000,
          "\"External id\": " + std::to_string(external) + ",\"Ev Idx\": " + std::to_string(external % 30000));
    ts += 1000;
    for (int layer = 0; layer < 24 && out.size() < target_bytes; ++layer) {
      const long long tid = layer % 4 == 3 ? backward_tid : main_tid;
      const long long layer_ns = 6 * 14000 + (layer % 8 == 0 ? 4000 : 0) + 1000;  // covers what it holds
      event(out, "user_annotation", "## layer_" + std::to_string(layer) + " ##", pid, tid, ts, layer_ns,
            "\"External id\": " + std::to_string(external++));
      for (int k = 0; k < 6; ++k) {
        const std::string& op = ops[(layer * 7 + k) % ops.size()];
        ++external;
        event(out, "cpu_op", op, pid, tid, ts + 500, 12345,
              "\"External id\": " + std::to_string(external) + ",\"Ev Idx\": " + std::to_string(external % 30000) +
                  ", \"Input Dims\": [[2048, 1024], [1024, 4096], []], \"Input type\": [\"float\", \"float\", "
                  "\"Scalar\"], \"Fwd thread id\": 0, \"Sequence number\": " +
                  std::to_string(1096588 + step * 100 + layer));
        const long long device = k % 2 == 0 ? 0 : -1;
        const long long bytes = 4096LL << (k % 8);
        if (memory) {
          allocated += bytes;
          memory_instant(out, pid, tid, ts + 1000, device, bytes, allocated);
        }
        event(out, "cuda_runtime", "cudaLaunchKernel", pid, tid, ts + 2000, 4567,
              "\"External id\": " + std::to_string(external) + ", \"cbid\": 211, \"correlation\": " +
                  std::to_string(correlation));
        flow(out, 's', correlation, pid, tid, ts + 2000);
        const std::string& kernel = kernels[(layer + k) % kernels.size()];
        const long long stream = k % 3 == 2 ? 23 : 7;
        event(out, "kernel", kernel, 0, stream, ts + 9000, 25600,
              "\"External id\": " + std::to_string(external) + ", \"queued\": 0, \"device\": 0, \"context\": 1, "
              "\"stream\": " + std::to_string(stream) + ", \"correlation\": " + std::to_string(correlation) +
                  ", \"registers per thread\": 40, \"shared memory\": 0, \"blocks per SM\": 22.222221, \"warps per "
                  "SM\": 177.77777, \"grid\": [2400, 1, 1], \"block\": [256, 1, 1], \"est. achieved occupancy %\": 100");
        flow(out, 'f', correlation, 0, stream, ts + 9000);
        if (memory) {
          allocated -= bytes;
          memory_instant(out, pid, tid, ts + 12000, device, -bytes, allocated);
        }
        ++correlation;
        ts += 14000;
      }
      if (layer % 8 == 0) {
        event(out, "cuda_runtime", "cudaMemcpyAsync", pid, tid, ts, 3000,
              "\"External id\": " + std::to_string(external) + ", \"cbid\": 41, \"correlation\": " +
                  std::to_string(correlation));
        event(out, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 0, 23, ts + 1500, 2000,
              "\"External id\": " + std::to_string(external) + ", \"device\": 0, \"context\": 1, \"stream\": 23, "
              "\"correlation\": " + std::to_string(correlation) + ", \"bytes\": 1048576, \"memory bandwidth (GB/s)\": "
              "524.288");
        ++correlation;
        event(out, "cuda_runtime", "cudaMemsetAsync", pid, tid, ts + 3000, 800,
              "\"External id\": " + std::to_string(external) + ", \"cbid\": 51, \"correlation\": " +
                  std::to_string(correlation));
        event(out, "gpu_memset", "Memset (Device)", 0, 7, ts + 3500, 500,
              "\"External id\": " + std::to_string(external) + ", \"device\": 0, \"context\": 1, \"stream\": 7, "
              "\"correlation\": " + std::to_string(correlation) + ", \"bytes\": 8, \"memory bandwidth (GB/s)\": 0.0043");
        ++correlation;
        ts += 4000;
      }
      ts += 1000;
    }
    ts = step_start + 2600000;
  }
  out.resize(out.size() - 2);  // the last ",\n"
  out += "\n  ],\n  \"traceName\": \"bench_import\"\n}\n";
  return out;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// The generated trace, written once to temporary files and removed at exit.
struct trace_files {
  std::filesystem::path plain;
  std::filesystem::path gz;
  std::size_t json_bytes = 0;
  std::size_t gz_bytes = 0;

  explicit trace_files(bool memory) {
    const char* mb = std::getenv("REGIONPROF_IMPORT_TRACE_MB");
    const std::string text = kineto_trace((mb != nullptr ? std::stoul(mb) : 100) << 20, memory);
    if (const char* keep = std::getenv("REGIONPROF_IMPORT_TRACE_KEEP"); keep != nullptr && !memory) {
      std::ofstream(keep, std::ios::binary) << text;
    }
    const auto dir = std::filesystem::temp_directory_path();
    const std::string stem = std::string(memory ? "regionprof_bench_import_memory_" : "regionprof_bench_import_") +
                             std::to_string(::getpid());
    plain = dir / (stem + ".json");
    gz = dir / (stem + ".json.gz");
    std::ofstream(plain, std::ios::binary) << text;
    const std::string compressed = gzip(text);
    std::ofstream(gz, std::ios::binary) << compressed;
    json_bytes = text.size();
    gz_bytes = compressed.size();
  }
  trace_files(const trace_files&) = delete;
  trace_files& operator=(const trace_files&) = delete;
  ~trace_files() {
    std::error_code ignored;
    std::filesystem::remove(plain, ignored);
    std::filesystem::remove(gz, ignored);
  }

  /// The trace without (`memory` false) or with torch's memory instants.
  static const trace_files& get(bool memory = false) {
    if (memory) {
      static const trace_files with_memory(true);
      return with_memory;
    }
    static const trace_files files(false);
    return files;
  }
};

void report(benchmark::State& state, std::size_t events, bool memory = false) {
  const auto& files = trace_files::get(memory);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(files.json_bytes));
  state.counters["events"] = static_cast<double>(events);
  state.counters["json_MB"] = static_cast<double>(files.json_bytes) / 1e6;
  state.counters["gz_MB"] = static_cast<double>(files.gz_bytes) / 1e6;
}

/// Plain JSON from a file (mapped; the page cache is warm after the first iteration).
void BM_ImportKineto(benchmark::State& state) {
  const auto& files = trace_files::get();
  std::size_t events = 0;
  for (auto _ : state) {
    const regionprof::trace t = regionprof::import_kineto_trace(files.plain.string());
    events = t.event_count();
    benchmark::DoNotOptimize(events);
  }
  report(state, events);
}
BENCHMARK(BM_ImportKineto)->Unit(benchmark::kMillisecond);

/// The same training loop with torch's memory instants (profile_memory=True: an allocation and a free per
/// aten op, about a fifth of the events): the budget holds on a trace with memory events (issue 29).
void BM_ImportKinetoMemory(benchmark::State& state) {
  const auto& files = trace_files::get(true);
  std::size_t events = 0;
  for (auto _ : state) {
    const regionprof::trace t = regionprof::import_kineto_trace(files.plain.string());
    events = t.event_count();
    benchmark::DoNotOptimize(events);
  }
  report(state, events, true);
}
BENCHMARK(BM_ImportKinetoMemory)->Unit(benchmark::kMillisecond);

/// The same trace gzipped: bytes_per_second counts the decompressed JSON, so it compares with
/// BM_GzipInflate (zlib alone) and BM_ImportKineto. Inflating runs on a thread of its own, ahead of
/// the parse: the CPU column (and bytes_per_second) counts both threads, the Time column shows the
/// overlap (about max(inflate, parse) on an idle machine).
void BM_ImportKinetoGz(benchmark::State& state) {
  const auto& files = trace_files::get();
  std::size_t events = 0;
  for (auto _ : state) {
    const regionprof::trace t = regionprof::import_kineto_trace(files.gz.string());
    events = t.event_count();
    benchmark::DoNotOptimize(events);
  }
  report(state, events);
}
BENCHMARK(BM_ImportKinetoGz)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

/// zlib's inflate of the same .gz into a reused 1 MiB buffer: the floor for BM_ImportKinetoGz.
void BM_GzipInflate(benchmark::State& state) {
  const auto& files = trace_files::get();
  std::vector<char> chunk(std::size_t{1} << 20);
  for (auto _ : state) {
    gzFile file = gzopen(files.gz.c_str(), "rb");
    if (file == nullptr) throw std::runtime_error("gzopen failed");
    gzbuffer(file, 1 << 18);
    std::size_t total = 0;
    int got = 0;
    while ((got = gzread(file, chunk.data(), static_cast<unsigned>(chunk.size()))) > 0) total += static_cast<std::size_t>(got);
    gzclose(file);
    benchmark::DoNotOptimize(total);
  }
  report(state, 0);
}
BENCHMARK(BM_GzipInflate)->Unit(benchmark::kMillisecond);

}  // namespace
