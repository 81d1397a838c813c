// The adapter's regions at run time, without any torch header: slots, per-thread open stacks, and the
// eager module -> slot bindings the REGIONPROF_MODULE_REGION() macro reads.
//
// A slot is a registered region, interned once per range name and never freed, so an id read from a
// TorchScript attribute or an eager binding stays valid for the process's lifetime.
//
// Per thread, every enter() pushes an entry; only the outermost entry of a slot pushes an NVTX range
// (re-entrant calls of one module open one span). exit(slot) closes the innermost entry of that slot
// and first closes any entry above it: those are calls whose exits an exception skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "regionprof/regions/regions.hpp"

namespace regionprof::torch::detail {

using slot_id = std::uint32_t;
/// The value of a TorchScript instance attribute or binding that marks no region.
inline constexpr std::int64_t no_slot = -1;

/// The slot of `kind:name`, registering it on first use. Thread-safe.
slot_id intern_slot(region_kind kind, std::string_view name);
/// The region of `slot`. Precondition: `slot` came from intern_slot().
const registered_region& slot_region(slot_id slot) noexcept;

/// The region `<kind>_backward:<name>` of `slot`'s `<kind>:<name>` (docs/design.md, rule 19), registered
/// on first use and never freed. Thread-safe; throws std::bad_alloc.
const registered_region& backward_region(slot_id slot);

/// Told, on the thread, each time that thread's outermost open slot changes: the slot opened on an empty
/// stack, or no_slot when the stack becomes empty. Must not throw.
using outermost_listener = void (*)(std::int64_t slot) noexcept;
/// Sets the one listener (nullptr: none). Calls already under way may still reach the previous one.
void set_outermost_listener(outermost_listener listener) noexcept;

/// Opens `slot` on this thread (an NVTX range unless the slot is already open on this thread).
void enter(slot_id slot) noexcept;
/// Closes the innermost open entry of `slot` on this thread and any entry above it. An exit without a
/// matching enter is ignored and counted (unmatched_exits()).
void exit(slot_id slot) noexcept;
/// Entries open on this thread.
std::size_t open_depth() noexcept;
/// Closes this thread's entries above `depth`, innermost first (exits skipped by an exception).
void unwind_to(std::size_t depth) noexcept;
/// Exits seen without a matching enter, all threads.
std::uint64_t unmatched_exits() noexcept;

/// Eager bindings: `module` (a torch::nn::Module's address) opens `slot` in module_scope.
void bind_module(const void* module, slot_id slot);
/// Removes the binding of `module` (no-op when absent).
void unbind_module(const void* module) noexcept;
/// The slot bound to `module`, or no_slot. Lock-free after the first lookup per thread and binding
/// change.
std::int64_t bound_slot(const void* module) noexcept;

}  // namespace regionprof::torch::detail
