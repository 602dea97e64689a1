// Tokenizing many documents on every core. Documents are handed out one at a
// time, so a few large files do not leave threads idle; results keep the input
// order, so the output never depends on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/documents.h"
#include "data/tokenizer.h"

namespace hpctrain::data {

// `report(bytes_done)` is called from the calling thread, which tokenizes too.
std::vector<std::vector<int>> encode_documents(const Tokenizer& tokenizer, const std::vector<Document>& documents,
                                               int threads, const std::function<void(std::uint64_t)>& report = nullptr);

}  // namespace hpctrain::data
