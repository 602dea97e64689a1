#include "ckpt_file/verify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "ckpt_file/checkpoint_files.h"
#include "ckpt_file/checkpoint_info.h"
#include "ckpt_file/manifest.h"
#include "ckpt_file/shard_table.h"
#include "ckpt_file/stored_checkpoint.h"
#include "support/in_child.h"
#include "support/text.h"

namespace hpctrain::ckpt_file {
namespace {

// hpctrain writes 13; each one listed costs a lookup by name.
constexpr std::size_t kMaxManifestAttributes = 1024;
// Shards with problems named in a verdict, and problems named of each; the
// others are counted.
constexpr std::size_t kMaxShardProblems = 8;
constexpr std::size_t kMaxProblemsPerShard = 4;

}  // namespace

namespace {

// The verdict travels from the child as text: five numbers, then each problem
// and warning as its length and its bytes.
std::string encode(const Verdict& v) {
  std::string out =
      fmt::format("{} {} {} {} {}\n", v.datasets, v.bytes, v.format, v.problems.size(), v.warnings.size());
  for (const auto* list : {&v.problems, &v.warnings}) {
    for (const auto& line : *list) out += fmt::format("{}\n{}", line.size(), line);
  }
  return out;
}

Verdict decode(const std::string& text, const std::filesystem::path& path) {
  Verdict v;
  v.path = path;
  std::istringstream in(text);
  std::size_t problems = 0;
  std::size_t warnings = 0;
  in >> v.datasets >> v.bytes >> v.format >> problems >> warnings;
  for (std::size_t i = 0; in && i < problems + warnings; ++i) {
    std::size_t size = 0;
    in >> size;
    in.get();  // the newline
    std::string line(size, '\0');
    in.read(line.data(), static_cast<std::streamsize>(size));
    (i < problems ? v.problems : v.warnings).push_back(std::move(line));
  }
  if (!in)
    throw CheckpointError(fmt::format("{}: the verification's child process sent a garbled verdict", path.string()));
  return v;
}

std::string libhdf5_crashed(const support::ChildResult& child) {
  return fmt::format("libhdf5 crashed reading it, {}: a crafted or corrupt file", child.death);
}

// What every checkpoint holds, in its one file or across its shards: /model
// parameters, and under DDAP the /replicas.
template <typename Checkpoint>
void check_holds(const Checkpoint& file, const CheckpointInfo& info, Verdict& verdict) {
  if (file.members("model").empty()) verdict.problems.emplace_back("no /model parameters");
  if (info.reducer == "ddap" && !file.has_group("replicas")) verdict.problems.emplace_back("ddap without /replicas");
}

// One file's datasets, read (each chunk's Fletcher32 checked by HDF5) and
// hashed, and from format 3 every attribute its manifest lists, against the
// manifest it stores. Problems go to `verdict`, prefixed with `label` ("" for
// the checkpoint's own file, "shard F: " for a shard).
void check_contents(const Hdf5Reader& file, std::int64_t format, const std::string& label, Verdict& verdict) {
  Manifest actual;
  std::vector<std::string> problems;
  for (const auto& dataset : file.datasets()) {
    try {
      const ArrayInfo stored = file.info(dataset);
      const auto bytes = file.read(dataset);
      actual.dataset(dataset, stored.type, stored.shape,
                     support::sha256(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
      ++verdict.datasets;
      verdict.bytes += bytes.size();
    } catch (const std::exception& e) {
      problems.emplace_back(e.what());
    }
  }
  if (format >= 3) {
    const std::string stored = file.has_attribute(kManifestAttribute) ? file.string_attribute(kManifestAttribute) : "";
    if (stored.empty()) {
      problems.emplace_back(fmt::format("format {} without its manifest", format));
    } else {
      // The attributes are read by the names the manifest lists (libhdf5
      // cannot list them safely, see Hdf5Reader::attribute_count); one the
      // manifest does not list shows in the count.
      const std::vector<std::string> names = manifest_attribute_names(stored);
      if (names.size() > kMaxManifestAttributes) {
        throw CheckpointError(
            fmt::format("the manifest lists {} attributes, more than {}", names.size(), kMaxManifestAttributes));
      }
      for (const auto& name : names) {
        if (!file.has_attribute(name)) continue;  // reported below as missing from the file
        switch (file.attribute_kind(name)) {
          case AttributeKind::kInt: actual.attribute(name, file.int_attribute(name)); break;
          case AttributeKind::kReal: actual.attribute(name, file.real_attribute(name)); break;
          case AttributeKind::kString: actual.attribute(name, file.string_attribute(name)); break;
        }
      }
      const std::size_t count = file.attribute_count();
      if (count != names.size() + 1) {
        problems.push_back(
            fmt::format("{} root attributes, but the manifest lists {} and itself", count, names.size()));
      }
      if (problems.empty() && stored != actual.text()) {
        auto differences = manifest_differences(stored, actual.text());
        if (differences.empty()) differences.emplace_back("the manifest does not match the contents");
        problems.insert(problems.end(), differences.begin(), differences.end());
      }
    }
  }
  const std::string prefix = file.name() + ": ";
  for (auto& problem : problems) {
    if (problem.rfind(prefix, 0) == 0) problem.erase(0, prefix.size());
    verdict.problems.push_back(label + problem);
  }
}

// One shard listed in an index: present, of the listed size and whole-file
// SHA-256, and its contents checked as the index's are.
void check_shard(const std::filesystem::path& dir, const ShardEntry& entry, std::int64_t format, Verdict& verdict) {
  const auto file = dir / entry.file;
  const std::string label = fmt::format("shard {}: ", entry.file);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    verdict.problems.push_back(label + "missing");
    return;
  }
  if (const auto size = std::filesystem::file_size(file, ec); ec || size != entry.bytes) {
    verdict.problems.push_back(fmt::format("{}{} bytes, the index lists {}", label, ec ? 0 : size, entry.bytes));
    return;
  }
  if (support::to_hex(sha256_of_file(file)) != entry.sha256) {
    verdict.problems.push_back(label + "its SHA-256 differs from the index's: the file changed after it was written");
    return;
  }
  try {
    check_contents(Hdf5Reader(file), format, label, verdict);
  } catch (const std::exception& e) {
    verdict.problems.push_back(label + e.what());
  }
}

// A sharded checkpoint's shards (shard_table.h), each checked; an index may
// list a million of them, so the first few bad ones are named and the rest
// counted.
void check_shards(const Hdf5Reader& index, const std::filesystem::path& path, std::int64_t format, Verdict& verdict) {
  if (format < 5) {
    verdict.problems.push_back(fmt::format("format {} has no shards, yet the file lists some", format));
    return;
  }
  const auto table = parse_shard_table(index.string_attribute(kShardFilesAttribute),
                                       index.int_attribute(kShardsAttribute), index.name());
  const auto dir = shard_directory(path);
  std::size_t named = 0;
  std::size_t more = 0;
  for (const auto& entry : table) {
    Verdict shard;
    check_shard(dir, entry, format, shard);
    verdict.datasets += shard.datasets;
    verdict.bytes += shard.bytes;
    if (shard.problems.empty()) continue;
    if (named == kMaxShardProblems) {
      ++more;
      continue;
    }
    ++named;
    const std::size_t shown = std::min(shard.problems.size(), kMaxProblemsPerShard);
    verdict.problems.insert(verdict.problems.end(), shard.problems.begin(),
                            shard.problems.begin() + static_cast<std::ptrdiff_t>(shown));
    if (shard.problems.size() > shown) {
      verdict.problems.push_back(
          fmt::format("shard {}: and {} more problems", entry.file, shard.problems.size() - shown));
    }
  }
  if (more > 0)
    verdict.problems.push_back(fmt::format("and {} more shard{} with problems", more, more == 1 ? "" : "s"));
}

}  // namespace

Verdict verify_checkpoint_in_process(const std::filesystem::path& path) {
  Verdict verdict;
  verdict.path = path;
  try {
    const Hdf5Reader file(path);
    const CheckpointInfo info = read_checkpoint_info(file);
    verdict.format = info.format;
    const bool sharded = file.has_attribute(kShardsAttribute);
    if (!sharded) check_holds(file, info, verdict);
    check_contents(file, info.format, "", verdict);
    if (sharded) check_shards(file, path, info.format, verdict);
    if (info.format < 3) {
      verdict.warnings.push_back(fmt::format(
          "format {} was written before checkpoints carried a manifest: its attributes (config, step...), element "
          "types and shapes are not covered by any checksum",
          info.format));
    }
    if (sharded && verdict.problems.empty()) {
      // The files as one checkpoint: each shard of this step and place, no
      // dataset twice, and what every checkpoint holds.
      check_holds(StoredCheckpoint(path), info, verdict);
    }
  } catch (const std::exception& e) {
    verdict.problems.emplace_back(e.what());
  }
  // The path heads every line that reports a verdict; do not repeat it.
  const std::string prefix = path.string() + ": ";
  for (auto& problem : verdict.problems) {
    if (problem.rfind(prefix, 0) == 0) problem.erase(0, prefix.size());
  }
  return verdict;
}

Verdict verify_checkpoint(const std::filesystem::path& path) {
  // libhdf5 1.10 has crashes on crafted files that no check of ours can run
  // before (docs/security.md): verifying in a child turns them into a verdict.
  const support::ChildResult child = support::run_in_child([&] { return encode(verify_checkpoint_in_process(path)); });
  if (child.output) return decode(*child.output, path);
  Verdict verdict;
  verdict.path = path;
  verdict.problems.push_back(child.signal != 0 ? libhdf5_crashed(child) : child.death);
  return verdict;
}

void check_libhdf5_survives(const std::filesystem::path& path) {
  const support::ChildResult child = support::run_in_child([&] {
    const StoredCheckpoint file(path);
    for (const auto& dataset : file.datasets()) (void)file.info(dataset);
    return std::string();
  });
  if (child.signal != 0) throw CheckpointError(fmt::format("{}: {}", path.string(), libhdf5_crashed(child)));
}

std::string skipped_message(const Verdict& verdict) {
  // The problems quote the file (dataset and shard names): shown, never acted on.
  return support::printable(
      fmt::format("skipping checkpoint {}: {}", verdict.path.string(), fmt::join(verdict.problems, "; ")));
}

std::optional<Verdict> newest_verified(const std::filesystem::path& dir,
                                       const std::function<void(const Verdict&)>& skipped, Needs needs) {
  for (const auto& path : list_checkpoints(dir)) {
    Verdict verdict = verify_checkpoint(path);
    if (verdict.ok() && needs == Needs::kTrainingState && verdict.format < kFirstTrainingStateFormat) {
      verdict.problems.push_back(
          fmt::format("format {} holds weights only, no training state to resume", verdict.format));
    }
    // A file copied under another step's name: the run would continue from
    // its step and then set aside every name beyond it, this one included.
    if (const auto named = checkpoint_step(path.filename().string()); verdict.ok() && named) {
      if (const std::int64_t held = read_checkpoint_info(path).step; held != *named) {
        verdict.problems.push_back(
            fmt::format("named for step {} but holds step {} (a copy under another name?)", *named, held));
      }
    }
    if (verdict.ok()) return verdict;
    skipped(verdict);
  }
  return std::nullopt;
}

std::filesystem::path find_verified_weights(const std::filesystem::path& run_dir_or_file,
                                            const std::function<void(const Verdict&)>& skipped) {
  if (std::filesystem::is_regular_file(run_dir_or_file)) {
    const Verdict verdict = verify_checkpoint(run_dir_or_file);
    if (!verdict.ok()) {
      throw CheckpointError(fmt::format("{}: {}", run_dir_or_file.string(), fmt::join(verdict.problems, "; ")));
    }
    return run_dir_or_file;
  }
  const auto dir = run_dir_or_file / "checkpoints";
  if (auto found = newest_verified(dir, skipped, Needs::kWeights)) return found->path;
  (void)find_checkpoint(run_dir_or_file);  // names a run directory without any checkpoint
  throw CheckpointError(fmt::format("{}: no checkpoint in it verifies", dir.string()));
}

std::filesystem::path find_verified_best(const std::filesystem::path& run_dir,
                                         const std::function<void(const Verdict&)>& skipped) {
  if (!std::filesystem::is_directory(run_dir)) {
    throw CheckpointError(
        fmt::format("{}: --best picks a checkpoint of a run directory, and this is none", run_dir.string()));
  }
  const auto newest = find_verified_weights(run_dir, skipped);
  std::int64_t best = -1;
  std::int64_t step = 0;
  {
    const Hdf5Reader file(newest);
    step = read_checkpoint_info(file).step;
    if (file.has_attribute("best_step")) best = file.int_attribute("best_step");
  }
  if (best < 0) {
    throw CheckpointError(
        fmt::format("{}: the run recorded no best checkpoint (checkpoint.keep_best was off, or "
                    "it wrote this checkpoint before any evaluation)",
                    newest.string()));
  }
  if (best > step) {
    throw CheckpointError(
        fmt::format("{}: best_step {} lies after the checkpoint's own step {}", newest.string(), best, step));
  }
  auto path = newest.parent_path() / checkpoint_file_name(best);
  if (!std::filesystem::exists(path)) {
    throw CheckpointError(
        fmt::format("{}: names {} as the best checkpoint, and it is gone", newest.string(), path.string()));
  }
  const Verdict verdict = verify_checkpoint(path);
  if (!verdict.ok()) {
    throw CheckpointError(
        fmt::format("{} (the best checkpoint): {}", path.string(), fmt::join(verdict.problems, "; ")));
  }
  // A file that verifies may still be another step's, copied or renamed there.
  if (const std::int64_t stored = read_checkpoint_info(path).step; stored != best) {
    throw CheckpointError(fmt::format("{} (the best checkpoint, step {}): holds step {}, not the step {} names",
                                      path.string(), best, stored, newest.string()));
  }
  return path;
}

}  // namespace hpctrain::ckpt_file
