// Where jobgen finds templates and cluster profiles: $JOBGEN_HOME, then the
// experiment's repository, then the installed tree beside the executable,
// then the source tree it was built from; the first place holding a file
// wins, file by file. Parents of profiles are found beside them first.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config_error.h"
#include "jobgen/cluster_profile.h"
#include "jobgen/search_path.h"

namespace hpctrain::jobgen {
namespace {

namespace fs = std::filesystem;

class SearchPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("search-path-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    // An installed tree: PREFIX/bin/{jobgen,hpctrain}, PREFIX/share/hpctrain/...
    write(root_ / "prefix/bin/jobgen", "");
    write(root_ / "prefix/bin/hpctrain", "");
    write(root_ / "prefix/share/hpctrain/templates/sbatch.mustache", "installed");
    write(root_ / "prefix/share/hpctrain/clusters/local.toml", "partition = \"installed\"\n");
    // A checkout holding an experiment two directories down.
    write(root_ / "repo/templates/sbatch.mustache", "repo");
    write(root_ / "repo/env/clusters/site.toml", "inherits = \"local\"\naccount = \"repo\"\n");
    write(root_ / "repo/jobs/deep/exp.toml", "");
    // A $JOBGEN_HOME with a profile only.
    write(root_ / "home/clusters/local.toml", "partition = \"home\"\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  }

  [[nodiscard]] SearchInputs inputs(const char* home, bool with_experiment) const {
    home_ = home == nullptr ? std::string() : (root_ / home).string();
    return {with_experiment ? root_ / "repo/jobs/deep/exp.toml" : fs::path(), home == nullptr ? nullptr : home_.c_str(),
            root_ / "prefix/bin/jobgen", root_ / "no-such-source-tree"};
  }

  fs::path root_;
  mutable std::string home_;
};

TEST_F(SearchPathTest, EachFileComesFromTheFirstPlaceHoldingIt) {
  const JobgenPaths paths = find_jobgen_paths(inputs("home", true));
  EXPECT_EQ(paths.cluster_file("local"), root_ / "home/clusters/local.toml");          // $JOBGEN_HOME
  EXPECT_EQ(paths.template_file("sbatch"), root_ / "repo/templates/sbatch.mustache");  // the repository
  EXPECT_EQ(paths.cluster_file("site"), root_ / "repo/env/clusters/site.toml");        // the repository
  EXPECT_EQ(paths.cluster_file("some/file.toml"), fs::path("some/file.toml"));         // a path, as given
  EXPECT_EQ(paths.template_file("x.mustache"), fs::path("x.mustache"));
  EXPECT_EQ(paths.default_executable, (root_ / "prefix/bin/hpctrain").string());  // beside jobgen
}

TEST_F(SearchPathTest, WithoutHomeOrRepositoryTheInstalledTreeServes) {
  const JobgenPaths paths = find_jobgen_paths(inputs(nullptr, false));
  EXPECT_EQ(paths.template_file("sbatch"), root_ / "prefix/share/hpctrain/templates/sbatch.mustache");
  EXPECT_EQ(paths.cluster_file("local"), root_ / "prefix/share/hpctrain/clusters/local.toml");
  const std::string described = paths.describe();
  EXPECT_NE(described.find("$JOBGEN_HOME (unset): nothing there"), std::string::npos) << described;
  EXPECT_NE(described.find("templates: " + (root_ / "prefix/share/hpctrain/templates").string()), std::string::npos)
      << described;
}

TEST_F(SearchPathTest, AMissingFileNamesEveryPlaceSearched) {
  const JobgenPaths paths = find_jobgen_paths(inputs("home", true));
  try {
    (void)paths.cluster_file("nowhere");
    FAIL() << "found a profile that does not exist";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cluster profile 'nowhere': no nowhere.toml in "), std::string::npos) << what;
    EXPECT_NE(what.find((root_ / "home/clusters").string()), std::string::npos) << what;
    EXPECT_NE(what.find((root_ / "repo/env/clusters").string()), std::string::npos) << what;
    EXPECT_NE(what.find((root_ / "prefix/share/hpctrain/clusters").string()), std::string::npos) << what;
  }
}

TEST_F(SearchPathTest, AHomeInTheCheckoutLayoutIsRefusedWithTheReason) {
  write(root_ / "old/templates/sbatch.mustache", "");
  write(root_ / "old/env/clusters/local.toml", "");
  EXPECT_THROW(
      {
        try {
          (void)find_jobgen_paths(inputs("old", false));
        } catch (const config::ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("profiles belong in clusters/, not env/clusters/"), std::string::npos);
          throw;
        }
      },
      config::ConfigError);
  EXPECT_THROW((void)find_jobgen_paths(inputs("no-such-home", false)), config::ConfigError);
}

TEST_F(SearchPathTest, AParentProfileIsFoundBesideItsChildThenBySearching) {
  // site.toml (repository) inherits "local": none beside it, so $JOBGEN_HOME's.
  const ClusterProfile site = load_cluster_profile("site", find_jobgen_paths(inputs("home", true)));
  EXPECT_EQ(site.partition, "home");
  EXPECT_EQ(site.account, "repo");
  EXPECT_EQ(site.executable, (root_ / "prefix/bin/hpctrain").string());
  // With a local.toml beside it, that one.
  write(root_ / "repo/env/clusters/local.toml", "partition = \"beside\"\n");
  EXPECT_EQ(load_cluster_profile("site", find_jobgen_paths(inputs("home", true))).partition, "beside");
}

}  // namespace
}  // namespace hpctrain::jobgen
