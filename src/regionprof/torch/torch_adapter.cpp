// The LibTorch adapter's one torch translation unit: discovery, TorchScript graph instrumentation,
// eager Sequential wrapping, and the handle that undoes them.
#include <ATen/SequenceNumber.h>
#include <ATen/record_function.h>
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

// ---- Op ranges (instrument_options::ops) ---------------------------------------------------------
//
// Each aten operator and autograd function an NVTX range in the default domain (op_ranges.hpp): what
// torch's emit_nvtx gives, less its per-call suffix (`, seq = N, op_id = M`), and what rule 20 keys the
// ops per region by.
int push_op_range(const char* name) { return nvtxRangePushA(name); }
int pop_op_range() { return nvtxRangePop(); }

shared_callback op_range_callback{[] { return op_ranges::callback<&push_op_range, &pop_op_range>(); }};

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
        "instrumented in place: call it directly; or the instrumentation was removed)");
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
    const std::string name = region.region_id.substr(to_string(region.kind).size() + 1);
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
    const std::string name = region.region_id.substr(to_string(region.kind).size() + 1);
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

}  // namespace regionprof::torch
