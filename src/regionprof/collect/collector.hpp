// Internal entry points of the CUPTI collector. Includes no CUPTI header, so the CLI's injection library
// and tests can use it.
#pragma once

#include <cstdint>
#include <memory>

#include "regionprof/collect/device_session.hpp"

namespace regionprof::collect {

class activity_backend;

/// A device session over any backend (tests hand in one that serves buffers they built).
std::unique_ptr<device_session> make_device_session(const device_options& options,
                                                    std::unique_ptr<activity_backend> backend);

/// The session of the injection library: created from InitializeInjection, i.e. inside cuInit, so it
/// checks that libcuda.so.1 is loaded but calls no driver function while probing.
std::unique_ptr<device_session> make_injected_device_session(const device_options& options);

}  // namespace regionprof::collect
