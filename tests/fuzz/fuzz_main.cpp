// The plain driver for the fuzz targets in ordinary (non-libFuzzer) builds: runs LLVMFuzzerTestOneInput
// once over each file named on the command line, and over each regular file inside each named folder
// (not recursive, in name order). Exits 0 when every input ran, 1 when a path cannot be read. A crash
// or sanitizer report in the target fails the run as it would under libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz_main: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A heap copy of exactly the input's size, so that a read past its end is an ASan report.
  std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
  std::printf("fuzz_main: %s (%zu bytes)\n", path.c_str(), input.size());
  std::fflush(stdout);
  LLVMFuzzerTestOneInput(input.data(), input.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = true;
  std::size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path path(argv[i]);
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      if (error) {
        std::fprintf(stderr, "fuzz_main: cannot list %s: %s\n", path.c_str(), error.message().c_str());
        ok = false;
      }
      std::sort(files.begin(), files.end());
      for (const auto& file : files) {
        ok = run_file(file) && ok;
        ++inputs;
      }
    } else {
      ok = run_file(path) && ok;
      ++inputs;
    }
  }
  std::printf("fuzz_main: %zu inputs ran\n", inputs);
  return ok ? 0 : 1;
}
