// The one writer of Chrome trace events (Trace Event Format JSON), for the trace's Chrome export
// (report/chrome_trace.cpp, write_chrome_trace) and the job trace (job/job_trace.cpp, write_job_trace):
// one event per line, formatted into a buffer that is handed to the stream when it holds about 1 MiB,
// so a trace of millions of events costs the buffer, never the whole text. Times are integer ns written
// as microseconds with 3 decimals (json/json_text.hpp, append_us).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "regionprof/json/json_text.hpp"

namespace regionprof::report_detail {

/// Calls: the caller appends the text before the events to text() (`{"schemaVersion":1, ...,
/// "traceEvents":[`), then writes events, then finish(). An event method writes the event's start; the
/// caller closes it (args and `}`) through text().
///
/// ```
/// chrome_event_writer events(out, "regionprof::write_job_trace");
/// events.text() += "{\"schemaVersion\":1,\"traceEvents\":[";
/// events.complete_event("region", "layer:0", false, 0, 0, 1500, 250);
/// events.text() += '}';
/// events.finish();  // {"schemaVersion":1,"traceEvents":[\n{"ph":"X",...,"ts":1.500,"dur":0.250}\n]}\n
/// ```
class chrome_event_writer {
 public:
  static constexpr std::size_t flush_bytes = std::size_t{1} << 20;

  /// `what` names the writer in errors (`regionprof::write_chrome_trace: the output stream failed ...`).
  chrome_event_writer(std::ostream& out, std::string_view what) : out_(out), what_(what) {
    buffer_.reserve(flush_bytes + 64 * 1024);
  }

  std::string& text() noexcept { return buffer_; }

  /// Separates events (one per line) and hands the buffer over when it is full; for an event of the
  /// caller's own shape, written to text() after this.
  void begin_event() {
    if (buffer_.size() >= flush_bytes) flush();
    buffer_ += first_event_ ? "\n" : ",\n";
    first_event_ = false;
  }

  /// `{"ph":"X","cat":<cat>,"name":<name>,"pid":..,"tid":..,"ts":..,"dur":..` (the caller adds args and
  /// `}`). `cat` is written as it is (a category name needs no escaping); `name_plain`: `name` is known
  /// to need no escaping (report_detail::is_plain_json_string).
  void complete_event(std::string_view cat, std::string_view name, bool name_plain, std::int64_t pid,
                      std::int64_t tid, std::int64_t start_ns, std::int64_t duration_ns) {
    begin_event();
    buffer_ += "{\"ph\":\"X\",\"cat\":\"";
    buffer_ += cat;
    buffer_ += "\",\"name\":";
    string(name, name_plain);
    place(pid, tid, start_ns);
    buffer_ += ",\"dur\":";
    append_us(buffer_, duration_ns);
  }

  /// `{"ph":"i","cat":<cat>,"s":"t","name":<name>,"pid":..,"tid":..,"ts":..` (an instant of one thread; the
  /// caller adds args and `}`). `cat` and `name` are written as they are (they need no escaping).
  void instant_event(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid,
                     std::int64_t ts_ns) {
    begin_event();
    buffer_ += "{\"ph\":\"i\",\"cat\":\"";
    buffer_ += cat;
    buffer_ += "\",\"s\":\"t\",\"name\":\"";
    buffer_ += name;
    buffer_ += '"';
    place(pid, tid, ts_ns);
  }

  /// `{"ph":"C","name":<name>,"pid":..,"ts":..` (a sample of the process's counter track `name`, which has
  /// no thread; the caller adds args, one number per series, and `}`). `name` needs no escaping.
  void counter_event(std::string_view name, std::int64_t pid, std::int64_t ts_ns) {
    begin_event();
    buffer_ += "{\"ph\":\"C\",\"name\":\"";
    buffer_ += name;
    buffer_ += "\",\"pid\":";
    append_int(buffer_, pid);
    buffer_ += ",\"ts\":";
    append_us(buffer_, ts_ns);
  }

  /// `{"ph":"M","name":<kind>,"pid":..,"tid":..,"args":{"name":` (the caller adds the name and `}}`).
  void metadata_event(std::string_view kind, std::int64_t pid, std::int64_t tid) {
    begin_event();
    buffer_ += "{\"ph\":\"M\",\"name\":\"";
    buffer_ += kind;
    buffer_ += '"';
    place(pid, tid);
    buffer_ += ",\"args\":{\"name\":";
  }

  /// An `ac2g` flow start (`s`, on the API call) or end (`f`, bound to the enclosing device op), whole.
  void flow_event(char phase, std::uint32_t id, std::int64_t pid, std::int64_t tid, std::int64_t ts_ns) {
    begin_event();
    buffer_ += "{\"ph\":\"";
    buffer_ += phase;
    buffer_ += "\",\"id\":";
    append_uint(buffer_, id);
    place(pid, tid, ts_ns);
    buffer_ += phase == 'f' ? ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}" : ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}";
  }

  /// `text` as a JSON string; `plain`: known to need no escaping (copied as it is). A string of
  /// flush_bytes or more goes to the stream in pieces, never into the buffer whole.
  void string(std::string_view text, bool plain) {
    if (text.size() >= flush_bytes) {
      flush();
      written_ += write_json_string(out_, buffer_, text);
      if (!out_) fail();
      return;
    }
    if (plain) {
      buffer_ += '"';
      buffer_ += text;
      buffer_ += '"';
    } else {
      append_json_string(buffer_, text);
    }
  }

  /// Ends the events and the object (`\n]}\n`) and hands everything to the stream, flushed.
  void finish() {
    buffer_ += "\n]}\n";
    flush();
    out_.flush();
    if (!out_) fail();
  }

 private:
  /// `,"pid":..,"tid":..` and, when given, `,"ts":..`.
  void place(std::int64_t pid, std::int64_t tid, std::optional<std::int64_t> ts_ns = std::nullopt) {
    buffer_ += ",\"pid\":";
    append_int(buffer_, pid);
    buffer_ += ",\"tid\":";
    append_int(buffer_, tid);
    if (ts_ns) {
      buffer_ += ",\"ts\":";
      append_us(buffer_, *ts_ns);
    }
  }

  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    written_ += buffer_.size();
    buffer_.clear();
    if (!out_) fail();
  }

  [[noreturn]] void fail() const {
    throw std::runtime_error(what_ + ": the output stream failed after " + std::to_string(written_) +
                             " bytes (disk full or closed?)");
  }

  std::ostream& out_;
  std::string what_;
  std::string buffer_;
  std::size_t written_ = 0;
  bool first_event_ = true;
};

}  // namespace regionprof::report_detail
