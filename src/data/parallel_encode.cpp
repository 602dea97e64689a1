#include "data/parallel_encode.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace hpctrain::data {

std::vector<std::vector<int>> encode_documents(const Tokenizer& tokenizer, const std::vector<Document>& documents,
                                               int threads, const std::function<void(std::uint64_t)>& report) {
  std::vector<std::vector<int>> out(documents.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> bytes_done{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&](bool reporting) {
    try {
      for (std::size_t i = next++; i < documents.size(); i = next++) {
        out[i] = tokenizer.encode(documents[i].text);
        bytes_done += documents[i].text.size();
        if (reporting && report) report(bytes_done.load());
      }
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = documents.size();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, false);
  worker(true);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace hpctrain::data
