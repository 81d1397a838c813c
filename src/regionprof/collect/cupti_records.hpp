// The one place regionprof names CUPTI's versioned activity record structs.
//
// CUPTI writes each record kind in the newest layout of the library that is loaded; the names below are
// those of the CUDA 13 headers regionprof is built against. The fields regionprof reads sit at the same
// offsets in CUPTI 12's layouts (Kernel9, Memcpy5, Memset3, Overhead2, Synchronization, Memory3,
// MemoryPool2), which the static_asserts below check, so a libcupti.so.12 found at run time decodes
// correctly too. Only Overhead3::overheadData is new in CUPTI 13 and is read only from a CUPTI 13 library.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace regionprof::collect {

using activity_record = CUpti_Activity;                          ///< common head: `kind`
using kernel_record = CUpti_ActivityKernel10;                    ///< CONCURRENT_KERNEL (and KERNEL)
using memcpy_record = CUpti_ActivityMemcpy6;                     ///< MEMCPY
using memset_record = CUpti_ActivityMemset4;                     ///< MEMSET
using api_record = CUpti_ActivityAPI;                            ///< RUNTIME and DRIVER
using synchronization_record = CUpti_ActivitySynchronization2;   ///< SYNCHRONIZATION
using overhead_record = CUpti_ActivityOverhead3;                 ///< OVERHEAD
using memory_record = CUpti_ActivityMemory4;                     ///< MEMORY2 (allocations and frees)
using memory_pool_record = CUpti_ActivityMemoryPool3;            ///< MEMORY_POOL (created, trimmed, destroyed)

/// cuptiSubscribe_v2's parameters as CUPTI 13.2 extends them: `allowMultipleSubscribers` follows the
/// 13.0 fields (the CUDA 13.0 headers regionprof builds with lack it). structSize tells CUPTI which
/// fields the caller filled, so an older CUPTI sees only the fields it knows, or refuses the size.
struct subscriber_params_13_2 {
  CUpti_SubscriberParams base;
  std::uint8_t allowMultipleSubscribers = 0;  ///< 1: share CUPTI with other subscribers when the driver can
};
static_assert(offsetof(subscriber_params_13_2, allowMultipleSubscribers) == sizeof(CUpti_SubscriberParams));
inline constexpr std::size_t subscriber_params_13_2_size =
    offsetof(subscriber_params_13_2, allowMultipleSubscribers) + sizeof(std::uint8_t);

/// CUPTI major version whose layouts the aliases above are.
inline constexpr unsigned built_cupti_major = CUPTI_API_VERSION / 10000;
static_assert(CUPTI_API_VERSION >= 130000, "regionprof decodes CUPTI 13 records: build with the CUDA 13 toolkit");

// Every record is 8-byte aligned and a multiple of 8 bytes long (PACKED_ALIGNMENT); tests rely on it
// when they lay records end to end in a buffer.
static_assert(sizeof(kernel_record) % 8 == 0 && sizeof(memcpy_record) % 8 == 0 &&
              sizeof(memset_record) % 8 == 0 && sizeof(api_record) % 8 == 0 &&
              sizeof(synchronization_record) % 8 == 0 && sizeof(overhead_record) % 8 == 0 &&
              sizeof(memory_record) % 8 == 0 && sizeof(memory_pool_record) % 8 == 0);

#define REGIONPROF_SAME_OFFSET(older, newer, field) \
  static_assert(offsetof(older, field) == offsetof(newer, field), #field " moved between " #older " and " #newer)
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, start);
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, end);
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, deviceId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, streamId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, correlationId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, name);
REGIONPROF_SAME_OFFSET(CUpti_ActivityKernel9, kernel_record, graphNodeId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, graphNodeId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, graphNodeId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, copyKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, srcKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, dstKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, bytes);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, start);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, end);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, deviceId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, streamId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemcpy5, memcpy_record, correlationId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, bytes);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, start);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, end);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, deviceId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, streamId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, correlationId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemset3, memset_record, memoryKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityOverhead2, overhead_record, overheadKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityOverhead2, overhead_record, objectKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityOverhead2, overhead_record, start);
REGIONPROF_SAME_OFFSET(CUpti_ActivityOverhead2, overhead_record, end);
REGIONPROF_SAME_OFFSET(CUpti_ActivitySynchronization, synchronization_record, type);
REGIONPROF_SAME_OFFSET(CUpti_ActivitySynchronization, synchronization_record, start);
REGIONPROF_SAME_OFFSET(CUpti_ActivitySynchronization, synchronization_record, end);
REGIONPROF_SAME_OFFSET(CUpti_ActivitySynchronization, synchronization_record, correlationId);
REGIONPROF_SAME_OFFSET(CUpti_ActivitySynchronization, synchronization_record, streamId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemory3, memory_record, memoryOperationType);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemory3, memory_record, memoryKind);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemory3, memory_record, correlationId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemory3, memory_record, bytes);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemory3, memory_record, timestamp);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemory3, memory_record, deviceId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemoryPool2, memory_pool_record, memoryPoolOperationType);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemoryPool2, memory_pool_record, correlationId);
REGIONPROF_SAME_OFFSET(CUpti_ActivityMemoryPool2, memory_pool_record, timestamp);
#undef REGIONPROF_SAME_OFFSET

/// An enum-typed CUPTI field (`kind`, `type`, `overheadKind`) read as its 32-bit integer. A record from
/// a newer CUPTI (or a corrupt buffer) may hold a value outside the enum this build knows; loading it
/// as the enum is undefined behaviour (tests/fuzz/regressions/fuzz_cupti_decoder/sync_type_outside_enum.bin).
/// Takes the field's address, never the field: GCC's UBSan checks an enum lvalue bound to a reference.
template <class Enum>
std::uint32_t enum_bits(const Enum* field) noexcept {
  static_assert(sizeof(Enum) == sizeof(std::uint32_t));
  std::uint32_t bits;
  std::memcpy(&bits, field, sizeof bits);
  return bits;
}

}  // namespace regionprof::collect
