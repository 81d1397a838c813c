// How this copy of the capture tool is linked: "static" (static_route.cpp, in regionprof::nvtx_capture)
// or "injected" (inject_entry.cpp, in an injection library). Exactly one of the two is linked with the
// capture objects; capture_session.cpp refers to it, which pulls the static route out of the archive.
#pragma once

namespace regionprof::capture_detail {

extern const char* const route_name;

}  // namespace regionprof::capture_detail
