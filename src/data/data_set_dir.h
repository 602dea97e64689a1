// The directory a prepared data set lives in: built beside its destination
// and swapped into place whole, so an interrupted prepare never leaves a data
// set that looks complete; and replaced or removed only when prepare made it
// (its marker file), because hpctrain never deletes what it did not create.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace hpctrain::data {

// DIR/meta.json, bounded and never through a FIFO (support::InputError).
std::string meta_json_text(const std::filesystem::path& dir);

// Writes `text` to `path` (created or truncated); DataError naming the file
// when the write fails (a full disk shows at the flush).
void write_text_file(const std::filesystem::path& path, std::string_view text);

// Throws DataError, naming `experiment`, when `dir` exists and holds anything
// prepare did not make.
void check_replaceable(const std::filesystem::path& dir, const std::string& experiment);

// Builds the data set `dir` in a marked temporary sibling: `fill` writes its
// files there and returns meta.json's content, written last (its presence
// marks a complete data set); the result then replaces `dir`.
void build_data_set(const std::filesystem::path& dir, const std::string& experiment,
                    const std::function<nlohmann::json(const std::filesystem::path& tmp)>& fill);

}  // namespace hpctrain::data
