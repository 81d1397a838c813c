// libregionprof_nvtx_inject.so on its own: when REGIONPROF_NVTX_TRACE names a file, record from the
// moment NVTX loads the library until the program exits, then write the captured ranges there as a
// Chrome trace. Never changes the program's exit status or output; problems go to stderr.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <string>

#include "regionprof/capture.hpp"
#include "regionprof/report.hpp"

namespace {

std::unique_ptr<regionprof::capture_session>& session() {
  static std::unique_ptr<regionprof::capture_session>* holder = new std::unique_ptr<regionprof::capture_session>;
  return *holder;  // never destroyed: the exit handler may run after static destructors began
}

std::string& output_path() {
  static std::string* path = new std::string;
  return *path;
}

void write_at_exit() {
  if (!session()) return;
  try {
    regionprof::capture_result result = session()->stop();
    session().reset();
    std::ofstream out(output_path(), std::ios::binary | std::ios::trunc);
    if (!out) {
      std::fprintf(stderr, "regionprof: cannot open '%s' (REGIONPROF_NVTX_TRACE) for writing\n", output_path().c_str());
      return;
    }
    result.data.target_type = "process";
    regionprof::write_chrome_trace(result.data, out);
    if (!out.flush()) std::fprintf(stderr, "regionprof: writing '%s' failed\n", output_path().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regionprof: could not write the NVTX trace: %s\n", e.what());
  }
}

const bool started = [] {
  const char* path = std::getenv("REGIONPROF_NVTX_TRACE");
  if (path == nullptr || *path == '\0') return false;
  try {
    output_path() = path;
    session() = std::make_unique<regionprof::capture_session>();
    std::atexit(write_at_exit);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regionprof: NVTX capture not started: %s\n", e.what());
    return false;
  }
}();

}  // namespace
