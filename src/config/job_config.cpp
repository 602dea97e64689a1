#include "config/job_config.h"

#include <fmt/format.h>

#include <filesystem>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

JobConfig JobConfig::read(SectionReader section, const std::string& path) {
  JobConfig j;
  j.name = section.string("name", std::filesystem::path(path).stem().string());
  j.seed = static_cast<std::uint64_t>(section.integer("seed", 1234, 0, kNoLimit));
  j.run_dir = section.string("run_dir", "runs/" + j.name);
  if (j.run_dir.empty())
    throw ConfigError(fmt::format("{}: job.run_dir is empty", section.origins({{"job", "run_dir"}})));
  section.finish();
  return j;
}

}  // namespace hpctrain::config
