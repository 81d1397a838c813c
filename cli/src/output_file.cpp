#include "output_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace regionprof::cli {

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot open '" + path + "' for writing: " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) throw std::runtime_error("writing '" + path + "' failed (disk full?)");
}

}  // namespace regionprof::cli
