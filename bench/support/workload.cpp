#include "support/workload.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace regionprof::bench {

namespace {

class generator {
 public:
  explicit generator(const workload_options& options) : options_(options), random_(options.seed | 1) {}

  trace run() {
    const std::size_t workers = options_.threads > 0 ? options_.threads - 1 : 0;
    // Events per run: main = marker, model, sync + 6 intervals and 4 ops per layer; a worker task =
    // 3 intervals + 2 ops, plus a region every 4th task.
    const std::size_t main_intervals = 3 + 6 * options_.layers;
    const std::size_t main_ops = 4 * options_.layers;
    const std::size_t worker_intervals = workers * (3 * options_.worker_tasks + (options_.worker_tasks + 3) / 4);
    const std::size_t worker_ops = workers * 2 * options_.worker_tasks;
    const std::size_t per_run = main_intervals + main_ops + worker_intervals + worker_ops;
    const std::size_t runs = std::max<std::size_t>(1, (options_.events + per_run - 1) / per_run);
    out_.intervals.reserve(runs * (main_intervals + worker_intervals));
    out_.device_ops.reserve(runs * (main_ops + worker_ops));

    names();
    main_ = out_.add_thread(4242, 4242, "python3");
    for (std::size_t w = 0; w < workers; ++w) {
      worker_threads_.push_back(out_.add_thread(4242, 4300 + static_cast<std::int64_t>(w), "pt_autograd_" + std::to_string(w)));
    }
    stream_free_.assign(1 + workers, 0);
    std::int64_t cursor = 1'700'000'000'000'000'000;  // ns since the epoch, as CUPTI reports them
    for (std::size_t r = 0; r < runs; ++r) cursor = one_run(cursor) + jitter(20'000, 50'000);
    out_.device_tracing = true;
    if (!options_.capture_order) {
      std::sort(out_.device_ops.begin(), out_.device_ops.end(),
                [](const device_op& a, const device_op& b) { return a.start_ns < b.start_ns; });
    }
    return std::move(out_);
  }

 private:
  void names() {
    marker_ = out_.strings.intern("regionprof.profiled_run");
    marker_domain_ = out_.domain("regionprof");
    model_ = out_.strings.intern("untuned_module:model");
    for (std::size_t k = 0; k < options_.layers; ++k) layer_.push_back(out_.strings.intern("aot_module:layer_" + std::to_string(k)));
    for (std::size_t k = 0; k < 8; ++k) backward_.push_back(out_.strings.intern("aot_module:backward_" + std::to_string(k)));
    linear_ = out_.strings.intern("aten::linear");
    addmm_ = out_.strings.intern("aten::addmm");
    relu_ = out_.strings.intern("aten::relu");
    launch_ = out_.strings.intern("cudaLaunchKernel");
    sync_ = out_.strings.intern("cudaDeviceSynchronize");
    evaluate_ = out_.strings.intern("autograd::engine::evaluate_function: MmBackward0");
    mm_ = out_.strings.intern("aten::mm");
    gemm_ = out_.strings.intern("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1");
    bias_ = out_.strings.intern("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>");
    relu_kernel_ = out_.strings.intern("void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min_scalar_kernel>");
    memset_ = out_.strings.intern("Memset (Device)");
    gemm_bwd_ = out_.strings.intern("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x128x32");
    reduce_ = out_.strings.intern("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>");
  }

  std::int64_t jitter(std::int64_t low, std::int64_t high) {  // deterministic, inclusive
    random_ = random_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return low + static_cast<std::int64_t>((random_ >> 33) % static_cast<std::uint64_t>(high - low + 1));
  }

  /// Opens an interval: in start order its slot is taken now, in capture order when it closes.
  std::size_t open(thread_index thread, name_id name, interval_kind kind, std::int64_t start,
                   domain_index domain = 0, std::uint32_t correlation = 0) {
    cpu_interval interval;
    interval.start_ns = start;
    interval.name = name;
    interval.thread = thread;
    interval.kind = kind;
    interval.domain = domain;
    interval.correlation_id = correlation;
    if (options_.capture_order) {
      pending_.push_back(interval);
      return pending_.size() - 1;
    }
    out_.intervals.push_back(interval);
    return out_.intervals.size() - 1;
  }
  void close(std::size_t slot, std::int64_t end) {
    if (options_.capture_order) {
      pending_[slot].end_ns = end;
      out_.intervals.push_back(pending_[slot]);  // closes are innermost first: slot is the last one
      pending_.pop_back();
      return;
    }
    out_.intervals[slot].end_ns = end;
  }

  /// A launch at `start` with two device ops on `stream`; returns the launch's end.
  std::int64_t launch(thread_index thread, std::size_t stream, std::int64_t start, name_id first, name_id second,
                      device_op_kind second_kind) {
    const std::uint32_t correlation = next_correlation_++;
    const std::size_t call = open(thread, launch_, interval_kind::runtime_api, start, 0, correlation);
    const std::int64_t end = start + jitter(3'000, 6'000);
    close(call, end);
    std::int64_t at = std::max(stream_free_[stream], start + jitter(2'000, 4'000));
    at = device(first, device_op_kind::kernel, at, jitter(8'000, 40'000), correlation, stream);
    stream_free_[stream] = device(second, second_kind, at + 500, jitter(1'000, 4'000), correlation, stream);
    return end;
  }
  std::int64_t device(name_id name, device_op_kind kind, std::int64_t start, std::int64_t length,
                      std::uint32_t correlation, std::size_t stream) {
    device_op op;
    op.start_ns = start;
    op.end_ns = start + length;
    op.name = name;
    op.correlation_id = correlation;
    op.stream = static_cast<std::uint32_t>(7 + stream);
    op.kind = kind;
    if (kind != device_op_kind::kernel) op.bytes = 4096;
    out_.device_ops.push_back(op);
    return op.end_ns;
  }

  std::int64_t one_run(std::int64_t start) {
    const std::size_t marker = open(main_, marker_, interval_kind::range, start, marker_domain_);
    const std::int64_t model_start = start + jitter(1'000, 2'000);
    const std::size_t model = open(main_, model_, interval_kind::range, model_start);
    std::int64_t t = model_start + jitter(500, 1'000);
    for (std::size_t k = 0; k < options_.layers; ++k) {
      const std::size_t layer = open(main_, layer_[k], interval_kind::range, t);
      const std::size_t linear = open(main_, linear_, interval_kind::cpu_op, t + jitter(200, 400));
      const std::size_t addmm = open(main_, addmm_, interval_kind::cpu_op, out_start(linear) + jitter(100, 300));
      std::int64_t end = launch(main_, 0, out_start(addmm) + jitter(300, 800), gemm_, bias_, device_op_kind::kernel);
      close(addmm, end + jitter(200, 400));
      close(linear, end + jitter(500, 800));
      const std::int64_t relu_start = end + jitter(900, 1'500);
      const std::size_t relu = open(main_, relu_, interval_kind::cpu_op, relu_start);
      end = launch(main_, 0, relu_start + jitter(200, 400), relu_kernel_, memset_, device_op_kind::memset);
      close(relu, end + jitter(200, 400));
      t = end + jitter(600, 1'000);
      close(layer, t);
      t += jitter(300, 600);
    }
    close(model, t);
    const std::int64_t cpu_end = t;
    // Workers: tasks spread over the run's CPU window, each on its own stream.
    const std::int64_t window = std::max<std::int64_t>(1, cpu_end - start);
    for (std::size_t w = 0; w < worker_threads_.size(); ++w) {
      const thread_index thread = worker_threads_[w];
      const std::int64_t step = window / static_cast<std::int64_t>(options_.worker_tasks + 1);
      std::int64_t at = start + jitter(1'000, 5'000);
      for (std::size_t task = 0; task < options_.worker_tasks; ++task) {
        const bool in_region = task % 4 == 0;
        const std::size_t region = in_region ? open(thread, backward_[(task / 4) % backward_.size()],
                                                    interval_kind::range, at)
                                             : 0;
        const std::size_t evaluate = open(thread, evaluate_, interval_kind::cpu_op, at + jitter(100, 300));
        const std::size_t mm = open(thread, mm_, interval_kind::cpu_op, at + jitter(400, 600));
        const std::int64_t end = launch(thread, 1 + w, at + jitter(700, 1'000), gemm_bwd_, reduce_, device_op_kind::kernel);
        close(mm, end + jitter(100, 300));
        close(evaluate, end + jitter(400, 600));
        if (in_region) close(region, end + jitter(700, 900));
        at = std::max(at + step, end + jitter(1'000, 2'000));
      }
    }
    // The run ends when the device is done.
    std::int64_t device_end = cpu_end;
    for (std::int64_t free : stream_free_) device_end = std::max(device_end, free);
    const std::size_t sync = open(main_, sync_, interval_kind::runtime_api, cpu_end, 0, next_correlation_++);
    close(sync, device_end + jitter(1'000, 3'000));
    const std::int64_t end = device_end + jitter(4'000, 6'000);
    close(marker, end);
    return end;
  }

  std::int64_t out_start(std::size_t slot) const {
    return options_.capture_order ? pending_[slot].start_ns : out_.intervals[slot].start_ns;
  }

  workload_options options_;
  std::uint64_t random_;
  trace out_;
  std::vector<cpu_interval> pending_;  // capture order: open intervals, innermost last
  thread_index main_ = 0;
  std::vector<thread_index> worker_threads_;
  std::vector<std::int64_t> stream_free_;  // per stream: when its last device op ends
  std::uint32_t next_correlation_ = 1;
  name_id marker_ = 0, model_ = 0, linear_ = 0, addmm_ = 0, relu_ = 0, launch_ = 0, sync_ = 0, evaluate_ = 0, mm_ = 0;
  name_id gemm_ = 0, bias_ = 0, relu_kernel_ = 0, memset_ = 0, gemm_bwd_ = 0, reduce_ = 0;
  domain_index marker_domain_ = 0;
  std::vector<name_id> layer_;
  std::vector<name_id> backward_;
};

}  // namespace

trace generate_workload(const workload_options& options) { return generator(options).run(); }

analysis_options workload_analysis_options() {
  analysis_options options;
  options.cross_thread = true;
  return options;
}

}  // namespace regionprof::bench
