// The LibTorch adapter's one torch translation unit: discovery, TorchScript graph instrumentation,
// eager Sequential wrapping, AOTInductor packages' kernel regions, and the handle that undoes them.
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/parameterdict.h>
#include <torch/nn/modules/container/parameterlist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/script.h>

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "regionprof/capture/capture.hpp"
#include "regionprof/torch/memory_reporting.hpp"
#include "regionprof/torch/op_ranges.hpp"
#include "regionprof/torch/region_stack.hpp"
#include "regionprof/torch/torch.hpp"

namespace regionprof::torch {
namespace {

namespace jit = ::torch::jit;
namespace nn = ::torch::nn;

// ---- TorchScript ops -----------------------------------------------------------------------------
//
// `regionprof::module_enter(int slot) -> ()` and `regionprof::module_exit(int slot) -> ()` are
// JIT-only operators (the interpreter calls them directly, no dispatcher) with CONSERVATIVE alias
// analysis: they count as side effects, so dead-code elimination keeps them and optimisation passes
// keep their order with the module's ops. An op registered plainly from its schema would be removed
// as dead code when optimisation is on. A negative slot marks no region (an instance of an
// instrumented type that is not itself marked).

constexpr const char* enter_op = "regionprof::module_enter";
constexpr const char* exit_op = "regionprof::module_exit";
constexpr const char* slot_attribute = "_regionprof_region";

void run_enter(jit::Stack& stack) {
  const std::int64_t slot = jit::pop(stack).toInt();
  if (slot >= 0) detail::enter(static_cast<detail::slot_id>(slot));
}

void run_exit(jit::Stack& stack) {
  const std::int64_t slot = jit::pop(stack).toInt();
  if (slot >= 0) detail::exit(static_cast<detail::slot_id>(slot));
}

const jit::RegisterOperators region_operators({
    jit::Operator("regionprof::module_enter(int slot) -> ()", run_enter,
                  c10::AliasAnalysisKind::CONSERVATIVE),
    jit::Operator("regionprof::module_exit(int slot) -> ()", run_exit,
                  c10::AliasAnalysisKind::CONSERVATIVE),
});

// A TorchScript forward that throws skips the exits of the modules it was inside. TorchScript cannot
// catch, so the exception always leaves through the top-level method call, which runs under a
// TORCHSCRIPT_FUNCTION RecordFunction whose end callback runs during unwinding: it closes whatever the
// call left open. One global callback while any TorchScript instrumentation is alive.
struct depth_at_start : at::ObserverContext {
  explicit depth_at_start(std::size_t d) : depth(d) {}
  std::size_t depth;
};

std::unique_ptr<at::ObserverContext> on_function_start(const at::RecordFunction&) {
  return std::make_unique<depth_at_start>(detail::open_depth());
}

void on_function_end(const at::RecordFunction&, at::ObserverContext* context) {
  if (context == nullptr) return;
  const std::size_t depth = static_cast<depth_at_start*>(context)->depth;
  if (detail::open_depth() > depth) detail::unwind_to(depth);
}

/// A global RecordFunction callback, registered while at least one instrumentation uses it; `activate`
/// (when given) is told true after it is registered and false after it is removed.
class shared_callback {
 public:
  explicit constexpr shared_callback(at::RecordFunctionCallback (*make)(), void (*activate)(bool) noexcept = nullptr)
      : make_(make), activate_(activate) {}

  void acquire() {
    std::lock_guard lock(mutex_);
    if (users_++ == 0) {
      handle_ = at::addGlobalCallback(make_());
      if (activate_ != nullptr) activate_(true);
    }
  }

  void release() noexcept {
    try {
      std::lock_guard lock(mutex_);
      if (--users_ == 0) {
        at::removeCallback(handle_);
        if (activate_ != nullptr) activate_(false);
      }
    } catch (...) {
      // Removing a callback cannot fail in practice; the destructor path must not throw.
    }
  }

 private:
  at::RecordFunctionCallback (*make_)();
  void (*activate_)(bool) noexcept;
  std::mutex mutex_;
  std::size_t users_ = 0;          // guarded by mutex_
  at::CallbackHandle handle_ = 0;  // guarded by mutex_
};

shared_callback unwind_callback{[] {
  return at::RecordFunctionCallback(&on_function_start, &on_function_end)
      .scopes({at::RecordScope::TORCHSCRIPT_FUNCTION});
}};

// ---- AOTInductor packages at run time (instrument_package) ----------------------------------------
//
// Each kernel of an instrumented package runs under a RecordFunction named in the package's record; its
// module's regions open inside that RecordFunction's start and close before its end. A name can stand for
// several places (every Linear runs `aoti_torch_cpu_addmm_out`): places are counted per thread, from 0 at
// each run of a loaded package (`AOTIModelContainerRunner::run` and `::boxed_run` are RecordFunctions
// around every run). torch calls end callbacks in the order of the start callbacks, so two callbacks
// cannot nest their ranges: while op ranges are recorded (instrument_options::ops) the op-range callback
// opens the regions around each kernel's op range; otherwise package_callback does.
namespace package_kernels {

using chain = std::vector<detail::slot_id>;  // regions to open around a kernel, outermost first

struct kernel {
  std::size_t index = 0;      // into thread_places::next
  std::vector<chain> places;  // by place in a run
};

struct table {
  std::map<std::string, kernel, std::less<>> kernels;  // by RecordFunction name
};

// The instrumented package's table, or nullptr. Tables are never freed: a callback that began before
// remove() may still read one (as slots, they live for the process).
std::atomic<const table*> current{nullptr};
// Whether the op-range callback is registered (it then opens the regions, package_callback stands back).
std::atomic<bool> op_ranges_on{false};

struct open_kernel {
  const at::RecordFunction* function;  // opened by package_callback for this RecordFunction, or
  std::size_t op_depth;                // (function nullptr) by the op-range callback at this op depth
  const chain* regions;
};

struct thread_places {
  const table* of = nullptr;
  std::vector<std::uint32_t> next;  // per kernel: its next place in this run
  std::vector<open_kernel> open;    // kernels whose regions are open, innermost last
  std::size_t op_depth = 0;         // op ranges open on this thread
};

thread_local thread_places places;

bool is_run(std::string_view name) {
  return name == "AOTIModelContainerRunner::run" || name == "AOTIModelContainerRunner::boxed_run";
}

/// At a RecordFunction's start: a run resets the places, a kernel opens its regions (tagged `opened`).
void start(std::string_view name, open_kernel opened) noexcept {
  const table* kernels = current.load(std::memory_order_acquire);
  if (kernels == nullptr) return;
  thread_places& here = places;
  try {
    if (here.of != kernels) {
      here.of = kernels;
      here.next.assign(kernels->kernels.size(), 0);
    }
    if (is_run(name)) {
      std::fill(here.next.begin(), here.next.end(), 0);
      return;
    }
    const auto found = kernels->kernels.find(name);
    if (found == kernels->kernels.end()) return;
    const kernel& k = found->second;
    std::uint32_t& next = here.next[k.index];
    opened.regions = &k.places[next % k.places.size()];
    ++next;
    if (opened.regions->empty()) return;
    here.open.push_back(opened);
  } catch (...) {
    return;  // std::bad_alloc growing this thread's vectors: this kernel goes without its regions
  }
  for (const detail::slot_id slot : *opened.regions) detail::enter(slot);
}

/// At a RecordFunction's end: closes the regions its start opened (`opened`'s tag), if any.
void end(const at::RecordFunction* function, std::size_t op_depth) noexcept {
  thread_places& here = places;
  if (here.open.empty() || here.open.back().function != function || here.open.back().op_depth != op_depth) return;
  const chain& regions = *here.open.back().regions;
  for (auto slot = regions.rbegin(); slot != regions.rend(); ++slot) detail::exit(*slot);
  here.open.pop_back();
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& function) {
  if (!op_ranges_on.load(std::memory_order_relaxed)) start(function.name(), {&function, 0, nullptr});
  return nullptr;
}

void on_end(const at::RecordFunction& function, at::ObserverContext*) { end(&function, 0); }

}  // namespace package_kernels

shared_callback package_callback{[] {
  return at::RecordFunctionCallback(&package_kernels::on_start, &package_kernels::on_end)
      .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE});
}};

// ---- Op ranges (instrument_options::ops) ---------------------------------------------------------
//
// Each aten operator and autograd function an NVTX range in the default domain (op_ranges.hpp): what
// torch's emit_nvtx gives, less its per-call suffix (`, seq = N, op_id = M`), and what rule 20 keys the
// ops per region by.
// An instrumented package's kernel opens its module's regions around its op range (package_kernels), as
// a module's region is around its ops.
int push_op_range(const char* name) {
  package_kernels::start(name, {nullptr, ++package_kernels::places.op_depth, nullptr});
  return nvtxRangePushA(name);
}

int pop_op_range() {
  const int depth = nvtxRangePop();
  package_kernels::end(nullptr, package_kernels::places.op_depth--);
  return depth;
}

shared_callback op_range_callback{[] { return op_ranges::callback<&push_op_range, &pop_op_range>(); },
                                  [](bool on) noexcept { package_kernels::op_ranges_on.store(on); }};

// ---- Memory events (instrument_options::memory) ----------------------------------------------------
//
// c10's allocators report to a memory_reporting::reporter on the instrumenting thread; each report is a
// memory event of the capture linked into this program (docs/design.md, rule 21).
static_assert(memory_reporting::allocation == static_cast<std::uint8_t>(memory_event_kind::allocation));
static_assert(memory_reporting::freed == static_cast<std::uint8_t>(memory_event_kind::free));
static_assert(memory_reporting::out_of_memory == static_cast<std::uint8_t>(memory_event_kind::out_of_memory));
static_assert(memory_reporting::cpu == cpu_memory);

int record_memory(std::int64_t bytes, std::int64_t total_allocated, std::int16_t device, std::uint8_t kind) {
  return record_memory_event(bytes, total_allocated, device, static_cast<memory_event_kind>(kind));
}

// ---- Backward regions (instrument_options::backward; docs/design.md, rule 19) ----------------------
//
// Forward: a thread's autograd sequence numbers only grow, and each node takes the next one when it is
// created, so the thread keeps (the next sequence number, its topmost module slot) each time that slot
// changes (region_stack's outermost listener): a node of sequence number n was made under the slot of
// the last entry at or before n. Backward: each node's RecordFunction carries its sequence number and
// its forward thread (node.h), so it belongs to that slot's backward region. One instance per run of
// nodes of one slot on an autograd thread: it opens at the first such node, goes on through nodes with no
// forward op (AccumulateGrad), and ends at a node of another slot, at a node made outside every module,
// or when the backward pass ends (an engine final callback).
namespace backward_tracking {

constexpr std::int64_t unknown = -2;  // a node whose forward thread or sequence number was not seen
constexpr std::size_t max_entries = std::size_t{1} << 16;  // per forward thread; the older half is dropped

std::mutex entries_mutex;
/// Forward thread (RecordFunction::currentThreadId) -> (first sequence number, slot), ascending.
std::unordered_map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>>& entries() {
  static auto* map = new std::unordered_map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>>;
  return *map;  // guarded by entries_mutex; never destroyed (callbacks may run during exit)
}

void on_outermost(std::int64_t slot) noexcept {
  try {
    const auto next = static_cast<std::int64_t>(at::sequence_number::peek());
    std::lock_guard lock(entries_mutex);
    auto& list = entries()[at::RecordFunction::currentThreadId()];
    if (!list.empty() && list.back().first == next) {
      list.back().second = slot;  // the entry before made no node
      return;
    }
    if (list.size() == max_entries) list.erase(list.begin(), list.begin() + max_entries / 2);
    list.emplace_back(next, slot);
  } catch (...) {
    // Out of memory: the nodes of this stretch find the slot before it, or none.
  }
}

std::int64_t slot_of(std::uint64_t forward_thread, std::int64_t sequence_nr) {
  std::lock_guard lock(entries_mutex);
  const auto found = entries().find(forward_thread);
  if (found == entries().end()) return unknown;
  const auto& list = found->second;
  const auto after = std::upper_bound(list.begin(), list.end(), sequence_nr,
                                      [](std::int64_t n, const auto& entry) { return n < entry.first; });
  return after == list.begin() ? unknown : std::prev(after)->second;
}

/// An autograd thread's open instance. Each instance queues a final callback on its backward pass, which
/// ends whatever the thread has open once every node has run (from whichever thread runs final callbacks;
/// a pass that fails runs none, and its last instance ends at the next pass's first node of a module).
/// Two backward passes running at once on one device thread are not told apart: one's final callback
/// may end the other's instance early.
struct open_instance {
  std::int64_t slot = detail::no_slot;
  nvtxRangeId_t range = 0;

  void end() noexcept {
    if (range != 0) nvtxDomainRangeEnd(regionprof::detail::domain(), range);
    range = 0;
    slot = detail::no_slot;
  }
};
thread_local open_instance this_thread_instance;

std::unique_ptr<at::ObserverContext> on_node(const at::RecordFunction& fn) {
  const std::int64_t sequence_nr = fn.seqNr();
  if (sequence_nr < 0) return nullptr;  // no forward op (AccumulateGrad): the open instance goes on
  open_instance& open = this_thread_instance;
  try {
    const std::int64_t slot = slot_of(fn.forwardThreadId(), sequence_nr);
    if (slot == unknown || slot == open.slot) return nullptr;
    open.end();
    if (slot == detail::no_slot) return nullptr;
    const nvtxEventAttributes_t attributes = regionprof::detail::registered_attributes(
        detail::backward_region(static_cast<detail::slot_id>(slot)).nvtx_handle());
    open.range = nvtxDomainRangeStartEx(regionprof::detail::domain(), &attributes);
    open.slot = slot;
    open_instance* instance = &open;
    ::torch::autograd::Engine::get_default_engine().queue_callback([instance] { instance->end(); });
  } catch (...) {
    // A lock or allocation failed, or no backward pass to queue on: the node changes nothing, or the
    // instance ends at the next node of another slot.
  }
  return nullptr;
}

}  // namespace backward_tracking

/// The backward nodes' callback and the outermost listener, both while some instrumentation uses them.
shared_callback backward_callback{
    [] { return at::RecordFunctionCallback(&backward_tracking::on_node).scopes({at::RecordScope::BACKWARD_FUNCTION}); },
    [](bool on) noexcept {
      detail::set_outermost_listener(on ? &backward_tracking::on_outermost : nullptr);
      if (on) return;
      try {
        std::lock_guard lock(backward_tracking::entries_mutex);
        backward_tracking::entries().clear();
      } catch (...) {
        // std::mutex::lock failed: the entries stay until the next removal.
      }
    }};

// ---- Discovery (shared by TorchScript and eager) -------------------------------------------------

/// A module in discovery: the facts the rules need.
struct discovered {
  std::string path;
  std::string type;
  bool callable = true;  // has a forward of its own (ModuleList/ModuleDict have none)
  std::vector<std::size_t> children;
};

std::string join_path(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

/// The marked modules (indices into `tree`, parents first) and their regions.
struct discovery {
  std::vector<std::size_t> marked;
  std::vector<module_region> regions;
};

/// `<name>` of a region `<kind>:<name>`.
std::string region_name(const module_region& region) {
  return region.region_id.substr(to_string(region.kind).size() + 1);
}

/// Applies the reference's rules to `tree` (tree[0] is the root).
discovery discover(const std::vector<discovered>& tree, const instrument_options& options) {
  std::unordered_map<std::string, std::string> tuned;  // path -> region name
  for (const auto& t : options.tuned) tuned.emplace(t.path, t.name.empty() ? t.path : t.name);
  std::set<std::string> unmatched_tuned;
  for (const auto& [path, name] : tuned) unmatched_tuned.insert(path);

  // holds_tuned[i]: module i or a descendant is tuned.
  std::vector<bool> holds_tuned(tree.size(), false);
  for (std::size_t i = tree.size(); i-- > 0;) {
    if (tuned.count(tree[i].path) != 0) {
      holds_tuned[i] = true;
      unmatched_tuned.erase(tree[i].path);
    }
    for (const std::size_t child : tree[i].children) holds_tuned[i] = holds_tuned[i] || holds_tuned[child];
  }
  if (!unmatched_tuned.empty()) {
    std::string list;
    for (const auto& path : unmatched_tuned) list += (list.empty() ? "'" : ", '") + path + "'";
    throw std::invalid_argument("regionprof::torch::instrument: tuned module path(s) " + list +
                                " not found in the model (paths are dotted, e.g. 'blocks.0')");
  }

  discovery result;
  const auto mark = [&](std::size_t i) {
    const discovered& m = tree[i];
    module_region region;
    region.path = m.path;
    region.module_type = m.type;
    if (const auto found = tuned.find(m.path); found != tuned.end()) {
      region.kind = region_kind::aot_module;
      region.region_id = std::string(to_string(region.kind)) + ":" + found->second;
    } else {
      region.kind = region_kind::untuned_module;
      region.region_id = std::string(to_string(region.kind)) + ":" + m.path;
    }
    result.marked.push_back(i);
    result.regions.push_back(std::move(region));
  };
  // Iterative walk in pre-order (parents before children, children in declaration order).
  std::vector<std::size_t> pending{0};
  while (!pending.empty()) {
    const std::size_t i = pending.back();
    pending.pop_back();
    const discovered& m = tree[i];
    const bool is_root = i == 0;
    bool descend = true;
    if (m.callable && (!is_root || tuned.count(m.path) != 0)) {
      if (options.every_level) {
        mark(i);
      } else if (tuned.count(m.path) != 0) {
        mark(i);
        descend = false;
      } else if (!holds_tuned[i]) {
        mark(i);
        descend = false;
      }
    }
    if (descend) {
      for (auto child = m.children.rbegin(); child != m.children.rend(); ++child) pending.push_back(*child);
    }
  }
  return result;
}

/// `Foo` from `__torch__.pkg.___torch_mangle_3.Foo`, `torch::nn::LinearImpl`, `my::BlockImpl`.
std::string short_type_name(std::string_view name) {
  if (const auto colon = name.rfind("::"); colon != std::string_view::npos) name.remove_prefix(colon + 2);
  if (const auto dot = name.rfind('.'); dot != std::string_view::npos) name.remove_prefix(dot + 1);
  if (name.size() > 4 && name.substr(name.size() - 4) == "Impl") name.remove_suffix(4);
  return std::string(name);
}

// ---- TorchScript ---------------------------------------------------------------------------------

std::vector<discovered> scan_scripted(const jit::Module& root, std::vector<jit::Module>& instances) {
  std::vector<discovered> tree;
  const auto visit = [&](auto&& self, const jit::Module& module, std::string path) -> std::size_t {
    const std::size_t index = tree.size();
    discovered node;
    node.path = std::move(path);
    const auto& type = module.type();
    node.type = type->name() ? short_type_name(type->name()->qualifiedName()) : std::string("Module");
    node.callable = type->findMethod("forward") != nullptr;
    tree.push_back(std::move(node));
    instances.push_back(module);
    for (const auto& child : module.named_children()) {
      const std::size_t child_index = self(self, child.value, join_path(tree[index].path, child.name));
      tree[index].children.push_back(child_index);
    }
    return index;
  };
  visit(visit, root, "");
  return tree;
}

/// The slot attribute of a method's region: `_regionprof_region` for forward, else
/// `_regionprof_region__<method>`.
std::string slot_attribute_of(const std::string& method) {
  return method == "forward" ? std::string(slot_attribute) : std::string(slot_attribute) + "__" + method;
}

/// The methods of `type` that are regions of their own, `<path>.<method>`, beside forward: TorchScript
/// keeps no export flag in a compiled or loaded module, so every method is taken that is not forward,
/// not a dunder (`__getstate__`, `__len__`) and not of one of torch's own classes (`_conv_forward`).
/// These are the exported methods (`@torch.jit.export`, e.g. `decode`) and the helpers they or forward
/// call; a helper called from forward opens a nested region, which owns no time of its own (rule 4).
/// The same rule as the Python package's method regions.
std::vector<std::string> region_methods(const c10::ClassTypePtr& type) {
  std::vector<std::string> names;
  const std::string type_name = type->name() ? type->name()->qualifiedName() : std::string();
  if (type_name.rfind("__torch__.torch.", 0) == 0) return names;
  for (const jit::Function* method : type->methods()) {
    const std::string& name = method->name();
    const bool dunder = name.size() > 4 && name.rfind("__", 0) == 0 && name.compare(name.size() - 2, 2, "__") == 0;
    if (name != "forward" && !dunder) names.push_back(name);
  }
  return names;
}

/// Inserts `enter(self.<attribute>)` at the start of `type`'s `method` graph and `exit(self.<attribute>)`
/// before its return.
void instrument_method(const c10::ClassTypePtr& type, const std::string& method, const std::string& attribute) {
  jit::GraphFunction& function = jit::toGraphFunction(*type->findMethod(method));
  const std::shared_ptr<jit::Graph> graph = function.graph();
  jit::Value* self = graph->inputs().at(0);
  jit::Value* slot = nullptr;
  {
    const jit::WithInsertPoint at_start(*graph->nodes().begin());
    slot = graph->insertGetAttr(self, attribute);
    graph->insert(c10::Symbol::fromQualString(enter_op), {slot});
  }
  {
    const jit::WithInsertPoint before_return(graph->return_node());
    graph->insert(c10::Symbol::fromQualString(exit_op), {slot});
  }
}

// ---- Eager ---------------------------------------------------------------------------------------

bool is_eager_container(const nn::Module& module) {
  return dynamic_cast<const nn::ModuleListImpl*>(&module) != nullptr ||
         dynamic_cast<const nn::ModuleDictImpl*>(&module) != nullptr ||
         dynamic_cast<const nn::ParameterListImpl*>(&module) != nullptr ||
         dynamic_cast<const nn::ParameterDictImpl*>(&module) != nullptr;
}

bool is_sequential(const nn::Module& module) {
  return dynamic_cast<const nn::SequentialImpl*>(&module) != nullptr;
}

std::vector<discovered> scan_eager(nn::Module& root, std::vector<std::shared_ptr<nn::Module>>& instances,
                                   std::vector<std::size_t>& parents) {
  std::vector<discovered> tree;
  const auto visit = [&](auto&& self, const std::shared_ptr<nn::Module>& module, std::string path,
                         std::size_t parent) -> std::size_t {
    const std::size_t index = tree.size();
    discovered node;
    node.path = std::move(path);
    node.type = short_type_name(module->name());
    // A Sequential's own call is seen only by the Sequential holding it (which wraps it); one called
    // from custom code is looked through like a container: its children are wrapped instead.
    const bool sequential_in_sequential =
        parent != static_cast<std::size_t>(-1) && is_sequential(*instances[parent]) && is_sequential(*module);
    node.callable = !is_eager_container(*module) && (!is_sequential(*module) || sequential_in_sequential);
    tree.push_back(std::move(node));
    instances.push_back(module);
    parents.push_back(parent);
    for (const auto& child : module->named_children()) {
      const std::size_t child_index = self(self, child.value(), join_path(tree[index].path, child.key()), index);
      tree[index].children.push_back(child_index);
    }
    return index;
  };
  visit(visit, root.shared_from_this(), "", static_cast<std::size_t>(-1));
  return tree;
}

// ---- AOTInductor packages: the record (instrument_package) -----------------------------------------
//
// A package made by regionprof.torch.aoti_compile_and_package carries `extra/regionprof_kernel_modules.json`:
// per model, its modules and its kernels in call order, each with the name of the RecordFunction it runs
// under (`graph_0_cpp_fused_..._0`, `aoti_torch_cpu_addmm_out`) and its module (docs/design.md, rule 22),
// or null when none could be traced. One package at a time: generated names (`graph_0_...`) repeat between
// packages and a RecordFunction does not say which package it belongs to.

constexpr const char* kernel_modules_record = "extra/regionprof_kernel_modules.json";
constexpr std::string_view kernel_modules_format = "regionprof kernel modules";
constexpr std::int64_t kernel_modules_version = 1;

/// The package's record, as text, or nothing when the package carries none. Throws std::invalid_argument
/// naming the file when it is not a package.
std::optional<std::string> read_kernel_modules(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    if (!reader.hasRecord(kernel_modules_record)) return std::nullopt;
    auto [data, size] = reader.getRecord(kernel_modules_record);
    return std::string(static_cast<const char*>(data.get()), size);
  } catch (const c10::Error& error) {
    throw std::invalid_argument("regionprof::torch::instrument_package: '" + path +
                                "' cannot be read as a .pt2 package: " + error.what_without_backtrace());
  }
}

/// One model of the record: its module tree (tree[0] the root; containers the record does not list, the
/// parents of listed modules, are added as not callable) and its kernels as (name, module path or none).
struct package_model {
  std::vector<discovered> tree;
  std::vector<std::pair<std::string, std::optional<std::string>>> kernels;
  std::vector<std::string> unrecorded;  // kernels that run without a RecordFunction
};

package_model parse_kernel_modules(const std::string& text, const std::string& path, const std::string& model) {
  const std::string where = "regionprof::torch::instrument_package: '" + path + "' (" + kernel_modules_record + ")";
  const auto fail = [&](const std::string& what) { return std::invalid_argument(where + ": " + what); };
  boost::system::error_code parse_error;
  const boost::json::value document = boost::json::parse(text, parse_error);
  if (parse_error) throw fail("not JSON (" + parse_error.message() + ")");
  const auto* top = document.if_object();
  const auto* format = top ? top->if_contains("format") : nullptr;
  if (format == nullptr || !format->is_string() || format->get_string() != kernel_modules_format) {
    throw fail(std::string("no \"format\": \"") + std::string(kernel_modules_format) + "\"");
  }
  const auto* version = top->if_contains("version");
  if (version == nullptr || !version->is_int64() || version->get_int64() != kernel_modules_version) {
    throw fail("version " + (version ? boost::json::serialize(*version) : std::string("missing")) +
               ", this regionprof reads version " + std::to_string(kernel_modules_version) +
               " (package the model again with this regionprof)");
  }
  const auto* models = top->if_contains("models");
  const auto* entry = models && models->is_object() ? models->get_object().if_contains(model) : nullptr;
  if (entry == nullptr || !entry->is_object()) {
    std::string names;
    if (models && models->is_object()) {
      for (const auto& m : models->get_object()) names += (names.empty() ? "" : ", ") + std::string(m.key());
    }
    throw fail("no model '" + model + "' (models: " + (names.empty() ? "none" : names) + ")");
  }
  const auto string_member = [&](const boost::json::value& item, std::string_view key, std::string_view list) {
    const auto* member = item.is_object() ? item.get_object().if_contains(key) : nullptr;
    if (member == nullptr || !member->is_string()) {
      throw fail(std::string(list) + ": an item without a string \"" + std::string(key) + "\"");
    }
    return std::string(member->get_string());
  };
  const auto array_member = [&](std::string_view key) -> const boost::json::array& {
    const auto* member = entry->get_object().if_contains(key);
    if (member == nullptr || !member->is_array()) {
      throw fail("model '" + model + "' has no \"" + std::string(key) + "\" list");
    }
    return member->get_array();
  };

  package_model result;
  std::unordered_map<std::string, std::size_t> index_of;
  result.tree.push_back({"", "Module", true, {}});
  index_of.emplace("", 0);
  const auto add = [&](auto&& self, const std::string& module_path, const std::string& type,
                       bool callable) -> std::size_t {
    if (const auto known = index_of.find(module_path); known != index_of.end()) {
      discovered& node = result.tree[known->second];
      if (callable && !node.callable) node = {node.path, type, true, node.children};
      return known->second;
    }
    const auto dot = module_path.rfind('.');
    const std::string parent_path = dot == std::string::npos ? std::string() : module_path.substr(0, dot);
    const std::size_t parent = self(self, parent_path, "", false);
    result.tree.push_back({module_path, type, callable, {}});
    result.tree[parent].children.push_back(result.tree.size() - 1);
    index_of.emplace(module_path, result.tree.size() - 1);
    return result.tree.size() - 1;
  };
  for (const auto& module : array_member("modules")) {
    const std::string module_path = string_member(module, "path", "modules");
    std::string type = short_type_name(string_member(module, "type", "modules"));
    if (module_path.empty()) {
      result.tree[0].type = std::move(type);
    } else {
      add(add, module_path, type, true);
    }
  }
  for (const auto& k : array_member("kernels")) {
    std::string name = string_member(k, "name", "kernels");
    const auto* module = k.is_object() ? k.get_object().if_contains("module") : nullptr;
    if (module != nullptr && module->is_string()) {
      const std::string owner(module->get_string());
      if (index_of.count(owner) == 0) {
        throw fail("kernel '" + name + "' belongs to module '" + owner + "', which \"modules\" does not list");
      }
      result.kernels.emplace_back(std::move(name), owner);
    } else if (module == nullptr || module->is_null()) {
      result.kernels.emplace_back(std::move(name), std::nullopt);
    } else {
      throw fail("kernel '" + name + "': \"module\" is neither a string nor null");
    }
  }
  if (const auto* unrecorded = entry->get_object().if_contains("unrecorded"); unrecorded && unrecorded->is_array()) {
    for (const auto& k : unrecorded->get_array()) {
      if (k.is_string()) result.unrecorded.emplace_back(k.get_string());
    }
  }
  return result;
}

}  // namespace

namespace detail {

/// Stands for a Sequential child inside the Sequential's AnyModule while it is instrumented. Never
/// registered as a submodule: named_children(), parameters() and state_dict are untouched.
struct erased_arguments {};
struct sequential_child : nn::Module {
  sequential_child(nn::AnyModule original, std::int64_t region) : inner(std::move(original)), slot(region) {}
  // Only for AnyModule's deduction; calls go through the AnyModuleHolder specialisation below.
  nn::AnyValue forward(erased_arguments) { throw std::logic_error("unreachable"); }

  nn::AnyModule inner;
  std::int64_t slot;  // no_slot: a pass-through (what clone() of an instrumented Sequential gets)
};

template <std::size_t... index>
nn::AnyValue forward_erased(nn::AnyModule& module, std::vector<nn::AnyValue>& arguments,
                            std::index_sequence<index...>) {
  return module.any_forward(std::move(arguments[index])...);
}

nn::AnyValue forward_erased(nn::AnyModule& module, std::vector<nn::AnyValue>&& arguments) {
  switch (arguments.size()) {
    case 0: return module.any_forward();
    case 1: return forward_erased(module, arguments, std::make_index_sequence<1>{});
    case 2: return forward_erased(module, arguments, std::make_index_sequence<2>{});
    case 3: return forward_erased(module, arguments, std::make_index_sequence<3>{});
    case 4: return forward_erased(module, arguments, std::make_index_sequence<4>{});
    case 5: return forward_erased(module, arguments, std::make_index_sequence<5>{});
    case 6: return forward_erased(module, arguments, std::make_index_sequence<6>{});
    case 7: return forward_erased(module, arguments, std::make_index_sequence<7>{});
    case 8: return forward_erased(module, arguments, std::make_index_sequence<8>{});
    default: break;
  }
  throw std::invalid_argument("regionprof::torch: an instrumented Sequential child takes at most 8 arguments");
}

class region_guard {
 public:
  explicit region_guard(std::int64_t slot) noexcept : slot_(slot) {
    if (slot_ != no_slot) enter(static_cast<slot_id>(slot_));
  }
  ~region_guard() {
    if (slot_ != no_slot) exit(static_cast<slot_id>(slot_));
  }
  region_guard(const region_guard&) = delete;
  region_guard& operator=(const region_guard&) = delete;

 private:
  std::int64_t slot_;
};

}  // namespace detail
}  // namespace regionprof::torch

// The holder AnyModule creates for a sequential_child: forwards the type-erased arguments to the
// original child inside its region, and answers ptr() with the original child.
template <>
struct torch::nn::AnyModuleHolder<regionprof::torch::detail::sequential_child,
                                  regionprof::torch::detail::erased_arguments>
    : public torch::nn::AnyModulePlaceholder {
  using wrapper = regionprof::torch::detail::sequential_child;

  explicit AnyModuleHolder(std::shared_ptr<wrapper>&& module_)
      : AnyModulePlaceholder(typeid(wrapper)), module(std::move(module_)) {}

  AnyValue forward(std::vector<AnyValue>&& arguments) override {
    const regionprof::torch::detail::region_guard guard(module->slot);
    return regionprof::torch::detail::forward_erased(module->inner, std::move(arguments));
  }
  std::shared_ptr<Module> ptr() override { return module->inner.ptr(); }
  std::unique_ptr<AnyModulePlaceholder> copy() const override {
    return std::make_unique<AnyModuleHolder>(*this);
  }
  // A clone is not instrumented: it gets a pass-through around a clone of the original child.
  std::unique_ptr<AnyModulePlaceholder> clone_module(std::optional<Device> device) const override {
    return std::make_unique<AnyModuleHolder>(
        std::make_shared<wrapper>(module->inner.clone(device), regionprof::torch::detail::no_slot));
  }

  std::shared_ptr<wrapper> module;
};

namespace regionprof::torch {

struct instrumentation::state {
  std::vector<module_region> regions;

  // TorchScript: the instrumented clone (dropping it removes everything).
  std::optional<::torch::jit::Module> scripted;
  bool holds_unwind_callback = false;
  bool holds_op_ranges = false;  // instrument_options::ops
  bool holds_backward = false;   // instrument_options::backward
  bool holds_package = false;    // instrument_package: package_callback and package_kernels::current
  std::vector<warning> warnings;  // what could not be marked (instrumentation::warnings)
  std::unique_ptr<memory_reporting::installation> memory;  // instrument_options::memory

  // Eager: bound modules (kept alive) and wrapped Sequential children.
  struct wrapped_child {
    std::shared_ptr<::torch::nn::SequentialImpl> sequential;
    std::size_t index;
    std::shared_ptr<detail::sequential_child> wrapper;
  };
  std::vector<std::shared_ptr<::torch::nn::Module>> bound;
  std::vector<wrapped_child> wrapped;

  ~state() { undo(); }

  void undo() noexcept {
    for (auto it = wrapped.rbegin(); it != wrapped.rend(); ++it) {
      auto slot = it->sequential->begin() + static_cast<std::ptrdiff_t>(it->index);
      // Give the child back unless the user replaced the element since.
      if (it->index < it->sequential->size() && slot->type_info() == typeid(detail::sequential_child) &&
          slot->ptr().get() == it->wrapper->inner.ptr().get()) {
        *slot = std::move(it->wrapper->inner);
      }
    }
    wrapped.clear();
    for (const auto& module : bound) detail::unbind_module(module.get());
    bound.clear();
    scripted.reset();
    if (holds_unwind_callback) {
      unwind_callback.release();
      holds_unwind_callback = false;
    }
    if (holds_op_ranges) {
      op_range_callback.release();
      holds_op_ranges = false;
    }
    if (holds_backward) {
      backward_callback.release();
      holds_backward = false;
    }
    if (holds_package) {
      package_callback.release();
      package_kernels::current.store(nullptr, std::memory_order_release);
      holds_package = false;
    }
    memory.reset();
  }

  void acquire_callbacks(const instrument_options& options) {
    if (options.ops) {
      op_range_callback.acquire();
      holds_op_ranges = true;
    }
    if (options.backward) {
      backward_callback.acquire();
      holds_backward = true;
    }
  }

  /// Throws std::logic_error when the calling thread already has a torch profiler state.
  void install_memory_reporting(const instrument_options& options) {
    if (!options.memory) return;
    try {
      memory = std::make_unique<memory_reporting::installation>(&record_memory);
    } catch (const std::logic_error& refused) {
      throw std::logic_error(std::string("regionprof::torch::instrument(memory = true): ") + refused.what());
    }
  }
};

instrumentation::instrumentation(std::unique_ptr<state> s) noexcept : state_(std::move(s)) {}
instrumentation::instrumentation(instrumentation&&) noexcept = default;
instrumentation& instrumentation::operator=(instrumentation&&) noexcept = default;
instrumentation::~instrumentation() = default;

::torch::jit::Module& instrumentation::module() {
  if (!state_ || !state_->scripted) {
    throw std::logic_error(
        "regionprof::torch::instrumentation::module(): no TorchScript module here (an eager model is "
        "instrumented in place: call it directly; a package runs through its own AOTIModelPackageLoader; or the "
        "instrumentation was removed)");
  }
  return *state_->scripted;
}

const std::vector<module_region>& instrumentation::regions() const noexcept {
  static const std::vector<module_region> none;
  return state_ ? state_->regions : none;
}

std::map<std::string, std::string> instrumentation::module_types() const {
  std::map<std::string, std::string> types;
  for (const auto& region : regions()) types.emplace(region.region_id, region.module_type);
  return types;
}

std::vector<warning> instrumentation::warnings() const { return state_ ? state_->warnings : std::vector<warning>{}; }

void instrumentation::remove() noexcept {
  if (state_) state_->undo();
}

instrumentation instrument(const ::torch::jit::Module& module, instrument_options options) {
  if (module.named_children().size() == 0) {
    throw std::invalid_argument(
        "regionprof::torch::instrument: the TorchScript module has no submodules to mark as regions "
        "(a frozen module has none left: instrument before torch::jit::freeze)");
  }
  // clone(inplace=true): new class types (so the original's graphs stay untouched), same tensors.
  ::torch::jit::Module clone = module.clone(/*inplace=*/true);
  std::vector<::torch::jit::Module> instances;
  const std::vector<discovered> tree = scan_scripted(clone, instances);
  discovery found = discover(tree, options);

  // Each marked type's forward and region methods (region_methods) get an enter/exit pair reading a
  // slot attribute per method. Every instance of a marked type gets those attributes (the graphs are
  // per type): its own slots when it is marked, no_slot otherwise.
  std::set<c10::ClassType*> marked_types;
  std::vector<c10::ClassTypePtr> types_in_order;
  std::unordered_map<c10::ClassType*, std::vector<std::string>> methods_of;  // forward first
  for (const std::size_t i : found.marked) {
    const c10::ClassTypePtr& type = instances[i].type();
    if (type->findMethod("forward") == nullptr) continue;
    if (type->hasAttribute(slot_attribute)) {
      throw std::invalid_argument("regionprof::torch::instrument: module '" + tree[i].path +
                                  "' is already instrumented (instrument the original module)");
    }
    if (marked_types.insert(type.get()).second) {
      types_in_order.push_back(type);
      std::vector<std::string> methods{"forward"};
      for (std::string& name : region_methods(type)) methods.push_back(std::move(name));
      methods_of.emplace(type.get(), std::move(methods));
    }
  }
  // (tree index, method) -> slot; method regions follow their module's region.
  std::map<std::pair<std::size_t, std::string>, detail::slot_id> slot_of;
  std::vector<module_region> regions;
  for (std::size_t k = 0; k < found.marked.size(); ++k) {
    const std::size_t i = found.marked[k];
    const module_region& region = found.regions[k];
    const std::string name = region_name(region);
    slot_of.emplace(std::pair{i, std::string("forward")}, detail::intern_slot(region.kind, name));
    regions.push_back(region);
    const auto methods = methods_of.find(instances[i].type().get());
    if (methods == methods_of.end()) continue;
    for (std::size_t m = 1; m < methods->second.size(); ++m) {
      const std::string& method = methods->second[m];
      module_region method_region = region;
      method_region.path = join_path(region.path, method);
      method_region.region_id = region.region_id + "." + method;
      slot_of.emplace(std::pair{i, method}, detail::intern_slot(region.kind, name + "." + method));
      regions.push_back(std::move(method_region));
    }
  }
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const auto methods = methods_of.find(instances[i].type().get());
    if (methods == methods_of.end()) continue;
    for (const std::string& method : methods->second) {
      const auto slot = slot_of.find(std::pair{i, method});
      const std::int64_t value = slot == slot_of.end() ? detail::no_slot : static_cast<std::int64_t>(slot->second);
      instances[i].register_attribute(slot_attribute_of(method), c10::IntType::get(), value);
    }
  }
  for (const auto& type : types_in_order) {
    for (const std::string& method : methods_of.at(type.get())) instrument_method(type, method, slot_attribute_of(method));
  }

  auto s = std::make_unique<instrumentation::state>();
  s->regions = std::move(regions);
  s->scripted = std::move(clone);
  unwind_callback.acquire();
  s->holds_unwind_callback = true;
  s->acquire_callbacks(options);
  s->install_memory_reporting(options);
  return instrumentation(std::move(s));
}

instrumentation instrument(::torch::nn::Module& module, instrument_options options) {
  std::vector<std::shared_ptr<::torch::nn::Module>> instances;
  std::vector<std::size_t> parents;
  const std::vector<discovered> tree = scan_eager(module, instances, parents);
  if (tree.size() == 1) {
    throw std::invalid_argument("regionprof::torch::instrument: the module has no submodules to mark as regions");
  }
  discovery found = discover(tree, options);

  auto s = std::make_unique<instrumentation::state>();
  for (std::size_t k = 0; k < found.marked.size(); ++k) {
    const std::size_t i = found.marked[k];
    const module_region& region = found.regions[k];
    const std::string name = region_name(region);
    const detail::slot_id slot = detail::intern_slot(region.kind, name);
    const std::shared_ptr<::torch::nn::Module>& target = instances[i];
    detail::bind_module(target.get(), slot);
    s->bound.push_back(target);
    if (parents[i] == static_cast<std::size_t>(-1)) continue;
    auto sequential = std::dynamic_pointer_cast<::torch::nn::SequentialImpl>(instances[parents[i]]);
    if (!sequential) continue;
    for (std::size_t index = 0; index < sequential->size(); ++index) {
      auto element = sequential->begin() + static_cast<std::ptrdiff_t>(index);
      if (element->ptr().get() != target.get() || element->type_info() == typeid(detail::sequential_child)) continue;
      auto wrapper = std::make_shared<detail::sequential_child>(std::move(*element), static_cast<std::int64_t>(slot));
      *element = ::torch::nn::AnyModule(wrapper);
      s->wrapped.push_back({sequential, index, std::move(wrapper)});
    }
  }
  s->regions = std::move(found.regions);
  s->acquire_callbacks(options);
  s->install_memory_reporting(options);
  return instrumentation(std::move(s));
}

namespace {

/// The regions of a package's modules made of its kernels (`model`, the package's record): the package
/// table and callback taken into `s`, the kernels not attributed in its warnings.
void install_package_regions(instrumentation::state& s, const package_model& model, const instrument_options& options,
                             const std::string& package_path) {
  discovery found = discover(model.tree, options);
  std::unordered_map<std::string, detail::slot_id> slot_of;  // marked module path -> its slot
  for (std::size_t k = 0; k < found.marked.size(); ++k) {
    const module_region& region = found.regions[k];
    slot_of.emplace(region.path, detail::intern_slot(region.kind, region_name(region)));
  }
  auto kernels = std::make_unique<package_kernels::table>();
  std::size_t untraced = 0;
  std::string untraced_names;
  for (const auto& [name, module] : model.kernels) {
    package_kernels::chain regions;
    if (module) {
      // The marked modules among the kernel's module and its ancestors, outermost first.
      std::vector<std::string> lineage{""};
      for (auto dot = module->find('.'); dot != std::string::npos; dot = module->find('.', dot + 1)) {
        lineage.push_back(module->substr(0, dot));
      }
      if (!module->empty()) lineage.push_back(*module);
      for (const std::string& path : lineage) {
        if (const auto slot = slot_of.find(path); slot != slot_of.end()) regions.push_back(slot->second);
      }
    } else if (++untraced <= 5) {
      untraced_names += (untraced_names.empty() ? "" : ", ") + name;
    }
    const auto [entry, inserted] = kernels->kernels.try_emplace(name);
    if (inserted) entry->second.index = kernels->kernels.size() - 1;
    entry->second.places.push_back(std::move(regions));
  }

  s.regions = std::move(found.regions);
  if (untraced != 0) {
    s.warnings.push_back({warning_code::compiled_modules, warning_source::nvtx,
                           std::to_string(untraced) + " kernel call(s) of the package '" + package_path +
                               "' could not be traced to a module (" + untraced_names + (untraced > 5 ? ", ..." : "") +
                               "): their time is in the region around them, or the residual"});
  }
  if (!model.unrecorded.empty()) {
    s.warnings.push_back({warning_code::compiled_modules, warning_source::nvtx,
                           std::to_string(model.unrecorded.size()) + " kernel(s) of the package '" + package_path +
                               "' run without a RecordFunction (" +
                               model.unrecorded.front() + (model.unrecorded.size() > 1 ? ", ..." : "") +
                               "): their time is in the region around them, or the residual"});
  }
  const package_kernels::table* none = nullptr;
  if (!package_kernels::current.compare_exchange_strong(none, kernels.get(), std::memory_order_acq_rel)) {
    throw std::logic_error("regionprof::torch::instrument_package: another package is instrumented; remove() its "
                           "instrumentation first (one package at a time: kernel names repeat between packages)");
  }
  kernels.release();  // never freed (package_kernels::current)
  try {
    package_callback.acquire();
  } catch (...) {
    package_kernels::current.store(nullptr, std::memory_order_release);
    throw;
  }
  s.holds_package = true;
}

}  // namespace

instrumentation instrument_package(const std::string& package_path, instrument_options options,
                                   const std::string& model_name) {
  if (options.backward) {
    throw std::invalid_argument("regionprof::torch::instrument_package: backward = true, but an AOTInductor package "
                                "runs inference only");
  }
  auto s = std::make_unique<instrumentation::state>();
  if (const std::optional<std::string> record = read_kernel_modules(package_path)) {
    install_package_regions(*s, parse_kernel_modules(*record, package_path, model_name), options, package_path);
  } else {
    // A package torch made: its kernels are ops (with `ops`, when compiled with kernel profiling on), in
    // no module's region.
    s->warnings.push_back({warning_code::compiled_modules, warning_source::nvtx,
                           "the package '" + package_path + "' has no " + kernel_modules_record +
                               ": its kernels are traced to no module, so its modules are no regions and its "
                               "time is in the region around run(), or the residual (package the model with "
                               "regionprof.torch.aoti_compile_and_package, docs/torch.md, AOTInductor packages)"});
  }
  s->acquire_callbacks(options);
  s->install_memory_reporting(options);
  return instrumentation(std::move(s));
}

}  // namespace regionprof::torch
