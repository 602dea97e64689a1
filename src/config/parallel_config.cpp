#include "config/parallel_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

namespace {

// Streaming merges: DDAP's, one fragment in flight at a time, the weights only.
void check_fragments(const ParallelConfig& p, const SectionReader& section) {
  if (p.merge_fragments == 1) return;
  if (p.reducer != ReducerKind::kDdap) {
    throw ConfigError(
        fmt::format("{}: parallel.merge_fragments streams DDAP's merges; it needs parallel.reducer = \"ddap\"",
                    section.origins({{"parallel", "merge_fragments"}, {"parallel", "reducer"}})));
  }
  if (p.merge_fragments > p.merge_every) {
    throw ConfigError(
        fmt::format("{}: parallel.merge_fragments = {} is more than merge_every = {}: each fragment merges once every "
                    "merge_every steps, one fragment a step at most",
                    section.origins({{"parallel", "merge_fragments"}, {"parallel", "merge_every"}}), p.merge_fragments,
                    p.merge_every));
  }
  if (p.merge_moments) {
    throw ConfigError(
        fmt::format("{}: parallel.merge_moments merges the whole model's AdamW moments at once; it "
                    "cannot stream in fragments (set one of them off)",
                    section.origins({{"parallel", "merge_moments"}, {"parallel", "merge_fragments"}})));
  }
  const std::int64_t gap = p.merge_every / p.merge_fragments;
  if (p.merge_mode == MergeMode::kOverlapped && p.merge_delay > gap) {
    throw ConfigError(fmt::format(
        "{}: parallel.merge_delay = {} is longer than the {} step(s) between two fragments' merges (merge_every / "
        "merge_fragments): one fragment's merge would still be in flight when the next starts; use merge_delay "
        "<= {}",
        section.origins({{"parallel", "merge_delay"}, {"parallel", "merge_every"}, {"parallel", "merge_fragments"}}),
        p.merge_delay, gap, gap));
  }
}

}  // namespace

ParallelConfig ParallelConfig::read(SectionReader section) {
  ParallelConfig p;
  p.reducer = section.choice("reducer", p.reducer);
  p.collective_timeout_s = section.number("collective_timeout_s", p.collective_timeout_s, 1, 1e6);
  p.prepare_timeout_s = section.number("prepare_timeout_s", p.prepare_timeout_s, 1, 1e6);
  p.comm_wait = section.choice("comm_wait", p.comm_wait);
  p.first_bucket_mb = section.number("first_bucket_mb", p.first_bucket_mb, 0.001, 1e5);
  p.bucket_cap_mb = section.number("bucket_cap_mb", p.bucket_cap_mb, 0.001, 1e5);
  p.overlap = section.boolean("overlap", p.overlap);
  p.bf16_compression = section.boolean("bf16_compression", p.bf16_compression);
  p.gradient_wire = section.choice("gradient_wire", p.gradient_wire);
  p.zero = static_cast<int>(section.integer("zero", p.zero, 0, 1));
  p.check_replicas_every = section.integer("check_replicas_every", p.check_replicas_every, 0, kNoLimit);
  p.sync_steps = section.integer("sync_steps", p.sync_steps, 0, kNoLimit);
  p.sync_wire = section.choice("sync_wire", p.sync_wire);
  p.merge_every = section.integer("merge_every", p.merge_every, 1, kNoLimit);
  p.merge = section.choice("merge", p.merge);
  p.merge_mode = section.choice("merge_mode", p.merge_mode);
  p.merge_delay = section.integer("merge_delay", p.merge_delay, 0, kNoLimit);
  p.merge_moments = section.boolean("merge_moments", p.merge_moments);
  p.merge_fragments = section.integer("merge_fragments", p.merge_fragments, 1, 4096);
  p.merge_wire = section.choice("merge_wire", p.merge_wire);
  p.outer_lr = section.number("outer_lr", p.outer_lr, 0.0, 100.0);
  p.outer_momentum = section.number("outer_momentum", p.outer_momentum, 0.0, 1.0);
  section.finish();
  if (p.zero == 1 && p.reducer != ReducerKind::kDdp) {
    throw ConfigError(fmt::format("{}: parallel.zero = 1 shards DDP's optimizer; it needs parallel.reducer = \"ddp\"",
                                  section.origins({{"parallel", "zero"}, {"parallel", "reducer"}})));
  }
  if (p.gradient_wire != WireCodec::kFp32 && (p.reducer != ReducerKind::kDdp || p.zero == 1 || p.bf16_compression)) {
    throw ConfigError(fmt::format(
        "{}: parallel.gradient_wire = \"{}\" is how DDP's gradient buckets travel (allreduce): it needs "
        "parallel.reducer = \"ddp\", parallel.zero = 0 and no parallel.bf16_compression (DDAP's synchronous steps "
        "take parallel.sync_wire)",
        section.origins({{"parallel", "gradient_wire"},
                         {"parallel", "reducer"},
                         {"parallel", "zero"},
                         {"parallel", "bf16_compression"}}),
        name_of(p.gradient_wire)));
  }
  if (p.sync_steps > 0 && p.reducer != ReducerKind::kDdap) {
    throw ConfigError(
        fmt::format("{}: parallel.sync_steps starts DDAP with synchronous steps; DDP's steps are all synchronous",
                    section.origins({{"parallel", "sync_steps"}, {"parallel", "reducer"}})));
  }
  if (p.sync_wire != WireCodec::kFp32 && (p.reducer != ReducerKind::kDdap || p.sync_steps == 0)) {
    throw ConfigError(
        fmt::format("{}: parallel.sync_wire is how DDAP's synchronous steps' gradients travel; it "
                    "needs parallel.reducer = \"ddap\" and parallel.sync_steps > 0",
                    section.origins({{"parallel", "sync_wire"}, {"parallel", "sync_steps"}})));
  }
  if (p.merge_wire != WireCodec::kFp32 && p.reducer != ReducerKind::kDdap) {
    throw ConfigError(
        fmt::format("{}: parallel.merge_wire is how DDAP's merges travel; it needs parallel.reducer = \"ddap\"",
                    section.origins({{"parallel", "merge_wire"}, {"parallel", "reducer"}})));
  }
  if (p.merge_wire != WireCodec::kFp32 && p.merge == MergeKind::kTies) {
    throw ConfigError(fmt::format(
        "{}: parallel.merge_wire = \"{}\" carries the mean of the ranks' updates; merge = \"ties\" needs each "
        "rank's signs (use average or diloco)",
        section.origins({{"parallel", "merge_wire"}, {"parallel", "merge"}}), name_of(p.merge_wire)));
  }
  check_fragments(p, section);
  return p;
}

}  // namespace hpctrain::config
