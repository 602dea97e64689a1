// Errors in the data pipeline. Messages name the file, and the line where one
// applies ("corpus.jsonl:17: ...").
#pragma once

#include <stdexcept>

namespace hpctrain::data {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hpctrain::data
