#include "support/hostile_traces.hpp"

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace hostile {

std::string complete_event(std::string_view cat, std::string_view name, std::string_view ts, std::string_view dur,
                           int tid, std::string_view extra) {
  std::string text = "{\"ph\":\"X\",\"cat\":\"";
  text.append(cat);
  text += "\",\"name\":\"";
  text.append(name);
  text += "\",\"pid\":1,\"tid\":" + std::to_string(tid) + ",\"ts\":";
  text.append(ts);
  text += ",\"dur\":";
  text.append(dur);
  if (!extra.empty()) {
    text += ',';
    text.append(extra);
  }
  text += '}';
  return text;
}

std::string trace_of(const std::vector<std::string>& events) {
  std::string text = "{\"traceEvents\":[";
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i != 0) text += ",\n";
    text += events[i];
  }
  return text + "]}";
}

std::string nested_array(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nested_ranges_trace(std::size_t n) {
  std::vector<std::string> events;
  events.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    events.push_back(complete_event("user_annotation", i == 0 ? "step" : "r" + std::to_string(i), std::to_string(i),
                                    std::to_string(2 * n + 10 - 2 * i)));
  }
  return trace_of(events);
}

std::string long_name_trace(std::size_t name_bytes) {
  std::string name(name_bytes, 'x');
  name[0] = 'r';
  return trace_of({complete_event("user_annotation", "step", "0", "100"),
                   complete_event("user_annotation", name, "10", "20"), complete_event("cpu_op", "aten::mm", "12", "3")});
}

namespace {

/// A `{"traceEvents":[...]}` file written in 1 MiB pieces: the events are never held whole.
class trace_file_writer {
 public:
  explicit trace_file_writer(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    if (file_ == nullptr) throw std::runtime_error("cannot write " + path);
  }
  trace_file_writer(const trace_file_writer&) = delete;
  trace_file_writer& operator=(const trace_file_writer&) = delete;
  ~trace_file_writer() {
    if (file_ != nullptr) std::fclose(file_);
  }

  void append(const char* text, int length) {
    chunk_.append(text, static_cast<std::size_t>(length));
    if (chunk_.size() >= (std::size_t{1} << 20)) flush();
  }
  /// Closes the array and the file; the file's size in bytes.
  std::uint64_t finish() {
    chunk_ += "\n]}\n";
    flush();
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) throw std::runtime_error("cannot write " + path_);
    return size_;
  }

 private:
  void flush() {
    size_ += std::fwrite(chunk_.data(), 1, chunk_.size(), file_);
    chunk_.clear();
  }

  std::string path_;
  std::FILE* file_;
  std::string chunk_ = "{\"traceEvents\":[\n";
  std::uint64_t size_ = 0;
};

}  // namespace

std::uint64_t write_many_events_trace(const std::string& path, std::size_t events) {
  trace_file_writer out(path);
  char line[160];
  for (std::size_t i = 0; i < events; ++i) {
    const int n = i % 1000 == 0
                      ? std::snprintf(line, sizeof line,
                                      "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step\",\"pid\":1,\"tid\":1,"
                                      "\"ts\":%zu,\"dur\":9995}",
                                      i == 0 ? "" : ",\n", i * 10)
                      : std::snprintf(line, sizeof line,
                                      ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%zu\",\"pid\":1,\"tid\":1,"
                                      "\"ts\":%zu,\"dur\":5}",
                                      i % 50, i * 10);
    out.append(line, n);
  }
  return out.finish();
}

std::uint64_t write_runs_trace(const std::string& path, std::size_t runs, bool thread_per_run) {
  trace_file_writer out(path);
  char line[160];
  for (std::size_t i = 0; i < runs; ++i) {
    const int n = std::snprintf(line, sizeof line,
                                "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step\",\"pid\":1,\"tid\":%zu,"
                                "\"ts\":%zu,\"dur\":1}",
                                i == 0 ? "" : ",\n", thread_per_run ? i + 1 : std::size_t{1}, 2 * i);
    out.append(line, n);
  }
  return out.finish();
}

std::string gzip(std::string_view text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(text.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(stream.total_out);
  return out;
}

}  // namespace hostile
