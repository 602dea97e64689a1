// Where jobgen finds templates and cluster profiles: $JOBGEN_HOME, then the
// experiment's repository, then the installed tree beside the executable,
// then the source tree it was built from; the first place holding a file
// wins, file by file. Parents of profiles are found beside them first.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "config/config_error.h"
#include "jobgen/cluster_profile.h"
#include "jobgen/search_path.h"

namespace hpctrain::jobgen {
namespace {

namespace fs = std::filesystem;

class SearchPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::umask(022);  // the modes below as a careful user's: writable by the owner alone
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
            root_ / "prefix/bin/jobgen", root_ / "no-such-source-tree", fs::path()};
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

// Item 1 of the hostile review: anyone who can make templates/ and
// env/clusters/ in a directory above an experiment (/tmp, a group-writable
// project directory) must not decide what its batch script runs.
std::string refusal(const SearchInputs& in) {
  try {
    const JobgenPaths paths = find_jobgen_paths(in);
    (void)paths.template_file("sbatch");
    (void)paths.cluster_file("site");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

constexpr uid_t kOtherUser = 54321;  // no such account: the owner shows as a uid

TEST_F(SearchPathTest, ARepositoryAnotherUserOwnsIsRefusedNamingItAndTheOwner) {
  ASSERT_EQ(::geteuid(), 0U) << "the suite runs as root, which can give a directory to another uid";
  ASSERT_EQ(::chown((root_ / "repo/templates").c_str(), kOtherUser, kOtherUser), 0);
  const std::string why = refusal(inputs(nullptr, true));
  EXPECT_NE(why.find((root_ / "repo/templates").string() + " is owned by no user name (uid 54321), not by you"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("--templates DIR or JOBGEN_HOME"), std::string::npos) << why;
  // env/ above env/clusters/ counts too: its owner may replace clusters/.
  ASSERT_EQ(::chown((root_ / "repo/templates").c_str(), 0, 0), 0);
  ASSERT_EQ(::chown((root_ / "repo/env").c_str(), kOtherUser, kOtherUser), 0);
  EXPECT_NE(refusal(inputs(nullptr, true)).find((root_ / "repo/env").string() + " is owned by"), std::string::npos);
}

TEST_F(SearchPathTest, ARepositoryOthersMayWriteIsRefused) {
  fs::permissions(root_ / "repo/env/clusters", fs::perms::group_write, fs::perm_options::add);
  EXPECT_NE(refusal(inputs(nullptr, true)).find("is writable by its group (mode 0775)"), std::string::npos);
  fs::permissions(root_ / "repo/env/clusters", fs::perms::group_write, fs::perm_options::remove);
  fs::permissions(root_ / "repo", fs::perms::others_write, fs::perm_options::add);
  EXPECT_NE(refusal(inputs(nullptr, true))
                .find((root_ / "repo").string() + " (owner root (uid 0)) is writable by "
                                                  "everyone"),
            std::string::npos);
}

TEST_F(SearchPathTest, AFileAnotherUserOwnsInAControlledPlaceIsRefused) {
  ASSERT_EQ(::chown((root_ / "repo/templates/sbatch.mustache").c_str(), kOtherUser, kOtherUser), 0);
  const JobgenPaths paths = find_jobgen_paths(inputs(nullptr, true));
  EXPECT_THROW((void)paths.template_file("sbatch"), config::ConfigError);
  EXPECT_EQ(paths.cluster_file("site"), root_ / "repo/env/clusters/site.toml");
}

TEST_F(SearchPathTest, APlaceTheUserNamesIsTrustedAsNamed) {
  // The same planted tree, named on purpose: --templates, then $JOBGEN_HOME.
  ASSERT_EQ(::chown((root_ / "repo/templates").c_str(), kOtherUser, kOtherUser), 0);
  SearchInputs in = inputs(nullptr, false);
  in.templates_dir = root_ / "repo";
  const JobgenPaths paths = find_jobgen_paths(in);
  EXPECT_EQ(paths.template_file("sbatch"), root_ / "repo/templates/sbatch.mustache");
  EXPECT_EQ(paths.origin(paths.template_file("sbatch")),
            "--templates " + (root_ / "repo").string() + " (named by you)");
  EXPECT_NE(paths.describe().find("the installed tree " + (root_ / "prefix/share/hpctrain").string() +
                                  " (yours: owner root (uid 0), mode 0755)"),
            std::string::npos)
      << paths.describe();
}

}  // namespace
}  // namespace hpctrain::jobgen
