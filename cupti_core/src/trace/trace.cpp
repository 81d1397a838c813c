#include <stdexcept>
#include <string>

#include "regionprof/trace.hpp"

namespace regionprof {

domain_index trace::domain(std::string_view name) {
  const name_id id = strings.intern(name);
  for (std::size_t i = 0; i < domains.size(); ++i) {
    if (domains[i] == id) return static_cast<domain_index>(i);
  }
  if (domains.size() > 0xffff) {
    throw std::length_error("regionprof: more than 65535 NVTX domains in one trace (domain '" +
                            std::string(name) + "')");
  }
  domains.push_back(id);
  return static_cast<domain_index>(domains.size() - 1);
}

thread_index trace::add_thread(std::int64_t pid, std::int64_t tid, std::string_view name) {
  for (std::size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].pid == pid && threads[i].tid == tid) {
      if (!name.empty() && threads[i].name == 0) threads[i].name = strings.intern(name);
      return static_cast<thread_index>(i);
    }
  }
  threads.push_back({pid, tid, name.empty() ? name_id{0} : strings.intern(name)});
  return static_cast<thread_index>(threads.size() - 1);
}

}  // namespace regionprof
