#include "data/data_set_dir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <fstream>
#include <vector>

#include "data/data_error.h"
#include "support/bounded_file.h"
#include "support/writer_pid.h"

namespace hpctrain::data {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxMetaJsonBytes = std::size_t{16} << 20;

// Marks a directory as one prepare made (written first into every data set
// it builds), so that only such directories are ever replaced or removed.
constexpr const char* kMarker = ".hpctrain-data-set";

// The names prepare writes into a data set: these and nothing else may be deleted.
bool written_by_prepare(const std::string& name) {
  if (name == kMarker || name == "meta.json" || name == "tokenizer.model") return true;
  for (const char* split : {"train-", "val-", "test-"}) {
    const std::string prefix = split;
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 4 && name.ends_with(".bin") &&
        name.find_first_not_of("0123456789", prefix.size()) == name.size() - 4) {
      return true;
    }
  }
  return false;
}

// What in `dir` prepare did not write (at most a few names), or "" when it holds
// only prepare's files and prepare's mark: its marker, or (data sets made before
// the marker) a meta.json with prepare's fingerprint.
std::string foreign_contents(const fs::path& dir) {
  std::vector<std::string> foreign;
  bool marked = false;
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(dir)) {
    empty = false;
    const std::string name = entry.path().filename().string();
    if (!written_by_prepare(name) || !entry.is_regular_file()) {
      if (foreign.size() < 3) foreign.push_back("'" + name + "'");
      continue;
    }
    if (name == kMarker) marked = true;
  }
  if (!foreign.empty()) return fmt::format("{}", fmt::join(foreign, ", "));
  if (empty || marked) return "";
  try {
    const auto meta = nlohmann::json::parse(meta_json_text(dir));
    if (meta.at("fingerprint").is_string() && meta.contains("format_version")) return "";
  } catch (const std::exception&) {
  }
  return "no hpctrain meta.json";
}

// Deletes a data set prepare made, file by file, then the directory; anything
// else found in it stops the removal (and is left alone).
void remove_data_set(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (written_by_prepare(entry.path().filename().string()) && entry.is_regular_file()) fs::remove(entry.path());
  }
  std::error_code ec;
  fs::remove(dir, ec);  // only succeeds when empty
}

// Removes the .tmp-PID / .old-PID siblings of `dir` left by runs that were
// killed, when they are data sets prepare made (marked) and their process is gone.
void remove_leftovers(const fs::path& dir) {
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  if (!fs::is_directory(parent)) return;
  const std::string stem = dir.filename().string();
  for (const auto& entry : fs::directory_iterator(parent)) {
    const std::string name = entry.path().filename().string();
    for (const char* tag : {".tmp-", ".old-"}) {
      const std::string prefix = stem + tag;
      if (name.rfind(prefix, 0) != 0 || !entry.is_directory()) continue;
      const auto pid = support::pid_in_name(name.substr(prefix.size()));
      if (!pid) continue;
      const bool gone = *pid != getpid() && !support::runs_on_this_host(*pid);
      if (gone && fs::exists(entry.path() / kMarker) && foreign_contents(entry.path()).empty()) {
        remove_data_set(entry.path());
      }
    }
  }
}

}  // namespace

void write_text_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.flush();
  if (!out) throw DataError(fmt::format("{}: write failed", path.string()));
}

// Refuses a data.dir that holds anything prepare did not make: hpctrain never
// deletes what it did not create.
void check_replaceable(const fs::path& dir, const std::string& experiment) {
  std::error_code ec;
  const auto status = fs::symlink_status(dir, ec);
  if (ec || !fs::exists(status)) return;
  if (!fs::is_directory(status)) {
    throw DataError(
        fmt::format("{}: data.dir = {} exists and is not a directory; hpctrain never replaces what it "
                    "did not create: choose another data.dir",
                    experiment, dir.string()));
  }
  if (const std::string foreign = foreign_contents(dir); !foreign.empty()) {
    throw DataError(
        fmt::format("{}: data.dir = {} exists and is not a data set hpctrain prepared (it holds {}); "
                    "hpctrain never deletes what it did not create: choose another data.dir, or remove "
                    "it yourself",
                    experiment, dir.string(), foreign));
  }
}

std::string meta_json_text(const std::filesystem::path& dir) {
  return support::read_bounded_file(dir / "meta.json", kMaxMetaJsonBytes, "meta.json");
}

void build_data_set(const fs::path& dir, const std::string& experiment,
                    const std::function<nlohmann::json(const fs::path& tmp)>& fill) {
  check_replaceable(dir, experiment);
  remove_leftovers(dir);
  const fs::path tmp = fs::path(dir.string() + fmt::format(".tmp-{}", getpid()));
  check_replaceable(tmp, experiment);
  if (fs::exists(tmp)) remove_data_set(tmp);
  fs::create_directories(tmp);
  write_text_file(tmp / kMarker, "a data set made by hpctrain prepare; hpctrain replaces only such directories\n");
  write_text_file(tmp / "meta.json", fill(tmp).dump(2) + "\n");
  // Swap into place: the old data set (if any, and checked again: time has
  // passed) is moved aside first, then removed file by file.
  const fs::path old = fs::path(dir.string() + fmt::format(".old-{}", getpid()));
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  check_replaceable(dir, experiment);
  if (fs::exists(dir)) fs::rename(dir, old);
  fs::rename(tmp, dir);
  if (fs::exists(old)) remove_data_set(old);
}

}  // namespace hpctrain::data
