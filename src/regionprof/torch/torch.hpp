// LibTorch adapter: every module of a model (or the ones you choose) becomes a region.
//
// Discovery follows the reference module: modules the user tuned are `aot_module:<name>`, the topmost
// other modules are `untuned_module:<path>`, and subtrees holding a tuned module are descended into.
// Containers without a forward of their own (ModuleList, ModuleDict) are looked through: their
// elements take their place. `instrument_options::every_level` marks every module at every depth;
// the analysis's topmost-owner rule keeps the nested ones from counting twice.
//
// How the regions are emitted:
// - TorchScript (`torch::jit::Module`): the handle owns an instrumented clone of the module (new class
//   types, the same parameter and buffer tensors). Two ops, registered as having side effects so graph
//   optimisation keeps them, open and close the region at the start of each marked module's forward
//   graph and before its return; they survive inlining with optimisation on. Run `handle.module()`.
// - Eager C++ (`torch::nn::Module`), in place: a Sequential's marked children are wrapped (the region
//   is open around each call); any marked custom module whose forward starts with
//   REGIONPROF_MODULE_REGION() opens its region there. A built-in module called directly from custom
//   code is seen when called through regionprof::torch::call(module, args...). A Sequential called
//   from custom code cannot be seen itself: its children take its place (they are wrapped).
// - AOTInductor package (`.pt2`): no module runs, only kernels. The package made by
//   regionprof.torch.aoti_compile_and_package names each kernel's module; one RecordFunction callback opens
//   the module's region around each kernel's RecordFunction (instrument_package).
//
// A module called while its own region is open on the same thread (re-entrancy) opens no second span.
// Regions are per thread: calls from several threads each get their own spans. This header includes
// no torch header.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/regions/regions.hpp"
#include "regionprof/trace/warnings.hpp"

namespace torch::jit {
struct Module;
}  // namespace torch::jit
namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace regionprof::torch {

/// A module the user tuned: its region is `aot_module:<name>` (name defaults to the path).
struct tuned_module {
  std::string path;  ///< dotted path from the root, e.g. `encoder.layers.0`; "" is the root itself
  std::string name;  ///< region name; empty: the path
};

/// What to instrument.
struct instrument_options {
  std::vector<tuned_module> tuned{};  ///< each path must exist in the model (else std::invalid_argument)
  bool every_level = false;         ///< mark every module at every depth, not only the topmost
  /// Also record each aten operator and autograd function as a range named as torch names it
  /// (`aten::linear`, `AddmmBackward0`; a RecordFunction callback, removed with the instrumentation):
  /// the ops of each module's region (docs/design.md, rule 20). Costs about a RecordFunction callback
  /// and an NVTX range per op.
  bool ops = false;
  /// Also record what torch's allocators allocate and free (CPU, CUDA) as memory events of each region
  /// (docs/design.md, rule 21): a c10 memory reporter installed as the torch profiler state of the thread
  /// that calls instrument() (torch carries it to autograd's and at::launch's threads), removed with the
  /// instrumentation (on that thread; elsewhere it goes quiet). Events are recorded only while the
  /// capture linked into this program records (regionprof::profile, step_profiler). Costs the allocators'
  /// own bookkeeping (a lock and a hash map per allocation and free on the CPU) and a capture record per
  /// event. While it is installed torch.profiler cannot start on that thread, and instrument() throws
  /// std::logic_error when the thread already has a profiler state (torch.profiler running).
  bool memory = false;
  /// Also make each marked module's backward a region, `<kind>_backward:<name>` (e.g.
  /// `untuned_module_backward:encoder`; docs/design.md, rule 19): the autograd nodes made while the
  /// module was the topmost open one, found by the sequence number torch gives each node and carries
  /// into its backward RecordFunction, on whichever thread autograd runs them. Costs a RecordFunction
  /// callback per autograd node in backward and a lock per topmost module call in forward.
  bool backward = false;
};

/// One marked module.
struct module_region {
  std::string path;         ///< dotted path from the root
  std::string region_id;    ///< `aot_module:<name>` or `untuned_module:<path>`
  std::string module_type;  ///< the module's type name, e.g. `Linear`
  region_kind kind = region_kind::untuned_module;
};

/// The instrumentation of one model. Destroying it (or calling remove()) removes every region it
/// added: a TorchScript clone is dropped, eager Sequentials get their children back and the macro goes
/// quiet for these modules. Move-only.
///
/// ```
/// auto handle = regionprof::torch::instrument(scripted);   // torch::jit::Module
/// auto out = handle.module().forward({input});             // regions: untuned_module:<path>
/// ```
class instrumentation {
 public:
  instrumentation(instrumentation&&) noexcept;
  instrumentation& operator=(instrumentation&&) noexcept;
  instrumentation(const instrumentation&) = delete;
  instrumentation& operator=(const instrumentation&) = delete;
  ~instrumentation();

  /// TorchScript: the instrumented module to run (shares the original's tensors). Throws
  /// std::logic_error for an eager instrumentation (eager modules are instrumented in place) or after
  /// remove().
  ::torch::jit::Module& module();

  /// The marked modules in discovery order (parents before children).
  const std::vector<module_region>& regions() const noexcept;

  /// Region id -> module type name, for the report's `regions[].module_type` (trace::module_types).
  std::map<std::string, std::string> module_types() const;

  /// What the instrumentation could not attribute, for the report (profile_options::warnings): for a
  /// package, kernels traced to no module or run without a RecordFunction (`COMPILED_MODULES`).
  std::vector<warning> warnings() const;

  /// Removes the instrumentation now; idempotent. Not concurrently with a forward of the model.
  void remove() noexcept;

  struct state;

 private:
  friend instrumentation instrument(const ::torch::jit::Module&, instrument_options);
  friend instrumentation instrument(::torch::nn::Module&, instrument_options);
  friend instrumentation instrument_package(const std::string&, instrument_options, const std::string&);
  explicit instrumentation(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

/// Instruments a TorchScript module: returns a handle owning an instrumented clone (new class types,
/// the original's tensors). Works with graph optimisation on (the default); the original module is
/// left as it is. Throws std::invalid_argument for a module without submodules (a frozen module has
/// none left: instrument before torch::jit::freeze) or a tuned path that does not exist.
///
/// ```
/// torch::jit::Module model = torch::jit::load("model.pt");
/// auto handle = regionprof::torch::instrument(model, {.tuned = {{"encoder", "encoder_trt"}}});
/// auto profile = regionprof::profile([&] { handle.module().forward({x}); }, options);
/// ```
instrumentation instrument(const ::torch::jit::Module& module, instrument_options options = {});

/// Instruments an eager module in place (see the header comment for what can be seen). The handle
/// keeps the marked modules alive. Not concurrently with a forward of the model.
///
/// ```
/// auto handle = regionprof::torch::instrument(*model);   // model: a torch::nn::ModuleHolder
/// model->forward(x);
/// ```
instrumentation instrument(::torch::nn::Module& module, instrument_options options = {});

/// Instruments an AOTInductor package made by `regionprof.torch.aoti_compile_and_package` (Python): the
/// modules of its model become regions made of the kernels traced to them (docs/design.md, rule 22; the
/// package's `extra/regionprof_kernel_modules.json`), each kernel call one instance of its module's region
/// and of its marked ancestors'. Discovery and `tuned`, `every_level`, `ops` (each kernel an op range too)
/// and `memory` are as for a module; `backward` is refused. Run the package through its own
/// `torch::inductor::AOTIModelPackageLoader`, on any thread. One package at a time (std::logic_error
/// otherwise: kernel names repeat between packages). A package torch made (no record) gets no regions, its
/// kernels only ops with `ops` (compiled with `cpp.enable_kernel_profile`), and a `COMPILED_MODULES`
/// warning in warnings(). Throws std::invalid_argument naming the file when it is not a package, its
/// record is malformed, or it holds no model of that name.
///
/// ```
/// torch::inductor::AOTIModelPackageLoader loader("model.pt2");
/// auto handle = regionprof::torch::instrument_package("model.pt2", {.ops = true});
/// options.warnings = handle.warnings();
/// auto profile = regionprof::profile([&] { loader.run({x}); }, options);
/// ```
instrumentation instrument_package(const std::string& package_path, instrument_options options = {},
                                   const std::string& model_name = "model");

/// The region of an eager module, open for the scope when the module is instrumented (else a no-op
/// costing one thread-local lookup). Use REGIONPROF_MODULE_REGION() in the module's forward.
class module_scope {
 public:
  explicit module_scope(const ::torch::nn::Module& module) noexcept;
  ~module_scope();
  module_scope(const module_scope&) = delete;
  module_scope& operator=(const module_scope&) = delete;
  static void* operator new(std::size_t) = delete;

 private:
  std::int64_t slot_;
};

/// Calls `module->forward(arguments...)` inside the module's region when it is instrumented. For
/// built-in modules (Linear, Embedding, ...) called directly from custom code: their forward cannot
/// carry REGIONPROF_MODULE_REGION(). `module` is a ModuleHolder or a shared_ptr to the module.
///
/// ```
/// torch::Tensor x = regionprof::torch::call(embedding, ids);   // embedding: torch::nn::Embedding
/// ```
template <class Holder, class... Arguments>
decltype(auto) call(Holder& module, Arguments&&... arguments) {
#ifndef REGIONPROF_DISABLE
  const module_scope scope{static_cast<const ::torch::nn::Module&>(*module)};
#endif
  return module->forward(std::forward<Arguments>(arguments)...);
}

}  // namespace regionprof::torch

/// One line at the start of a custom eager module's forward: the module's region is open for the rest
/// of the forward whenever the module is instrumented.
///
/// ```
/// torch::Tensor BlockImpl::forward(torch::Tensor x) {
///   REGIONPROF_MODULE_REGION();
///   return norm(torch::gelu(linear(x)));
/// }
/// ```
#ifndef REGIONPROF_DISABLE
#define REGIONPROF_MODULE_REGION()                                                                    \
  const ::regionprof::torch::module_scope REGIONPROF_CONCAT(regionprof_module_scope_, __LINE__) {     \
    static_cast<const ::torch::nn::Module&>(*this)                                                    \
  }
#else
#define REGIONPROF_MODULE_REGION() static_assert(true, "")
#endif
