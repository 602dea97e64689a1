#include "data/sources.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>

#include "data/data_error.h"

namespace hpctrain::data {
namespace fs = std::filesystem;
namespace {

InputFormat format_of(const fs::path& path, config::DataFormat configured) {
  switch (configured) {
    case config::DataFormat::kJsonl: return InputFormat::kJsonl;
    case config::DataFormat::kText: return InputFormat::kText;
    case config::DataFormat::kAuto: break;
    case config::DataFormat::kLlmc:
    case config::DataFormat::kUint16:
    case config::DataFormat::kUint32: return InputFormat::kText;  // not read as text: data/token_files.h
  }
  const auto ext = path.extension().string();
  return ext == ".jsonl" || ext == ".ndjson" ? InputFormat::kJsonl : InputFormat::kText;
}

SourceFile describe(const fs::path& path, config::DataFormat format) {
  SourceFile f;
  f.path = path;
  f.format = format_of(path, format);
  f.size = fs::file_size(path);
  f.mtime_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(fs::last_write_time(path).time_since_epoch()).count();
  return f;
}

// A path inside a source directory that one of data.exclude's patterns names
// ("encodings/*" leaves out that directory, however deep).
bool excluded(const std::vector<std::string>& patterns, const fs::path& relative) {
  const std::string name = relative.generic_string();
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return fnmatch(p.c_str(), name.c_str(), 0) == 0; });
}

}  // namespace

fs::path python_stdlib_dir() {
  std::vector<fs::path> found;
  if (fs::is_directory("/usr/lib")) {
    for (const auto& entry : fs::directory_iterator("/usr/lib")) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("python3.", 0) == 0 && fs::is_regular_file(entry.path() / "os.py")) found.push_back(entry.path());
    }
  }
  if (found.empty()) {
    throw DataError(
        "@python-stdlib: no Python 3 standard library under /usr/lib (install python3, or set data.sources)");
  }
  std::sort(found.begin(), found.end());
  return found.back();
}

std::vector<SourceFile> resolve_sources(const config::DataConfig& data, const std::vector<std::string>& sources,
                                        const std::string& key) {
  std::vector<SourceFile> files;
  for (const std::string& source : sources) {
    const fs::path path = source == "@python-stdlib" ? python_stdlib_dir() : fs::path(source);
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) throw DataError(fmt::format("{}: '{}' does not exist", key, source));
    if (fs::is_regular_file(status)) {
      files.push_back(describe(path, data.format));
      continue;
    }
    if (!fs::is_directory(status)) throw DataError(fmt::format("{}: '{}' is not a file or directory", key, source));
    std::size_t matched = 0;
    auto consider = [&](const fs::directory_entry& entry) {
      if (!entry.is_regular_file()) return;
      if (fnmatch(data.glob.c_str(), entry.path().filename().c_str(), 0) != 0) return;
      if (excluded(data.exclude, entry.path().lexically_relative(path))) return;
      files.push_back(describe(entry.path(), data.format));
      ++matched;
    };
    const auto options = fs::directory_options::skip_permission_denied;
    if (data.recursive) {
      for (const auto& entry : fs::recursive_directory_iterator(path, options)) consider(entry);
    } else {
      for (const auto& entry : fs::directory_iterator(path, options)) consider(entry);
    }
    if (matched == 0) {
      throw DataError(fmt::format("{}: no file in '{}' matches data.glob '{}'{}", key, path.string(), data.glob,
                                  data.exclude.empty() ? "" : " and is not in data.exclude"));
    }
  }
  // Directory order is the file system's; sorting makes the corpus order, and so
  // the whole preparation, deterministic.
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  files.erase(std::unique(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path == b.path; }),
              files.end());
  return files;
}

}  // namespace hpctrain::data
