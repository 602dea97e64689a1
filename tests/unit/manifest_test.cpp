// The manifest a checkpoint stores (format 3) covers what Fletcher32 does not:
// it must not depend on the order of writing, and every kind of change to a
// dataset or an attribute must show as a difference naming the item.
#include "ckpt_file/manifest.h"

#include <gtest/gtest.h>

namespace hpctrain::ckpt_file {
namespace {

Manifest sample(double lr, const std::string& config) {
  Manifest m;
  m.attribute("step", std::int64_t{4});
  m.attribute("lr", lr);
  m.attribute("config", config);
  m.dataset("model/w", ElementType::kFloat32, {2, 3}, support::sha256("weights"));
  return m;
}

TEST(Manifest, TheTextIsSortedAndExact) {
  Manifest reversed;
  reversed.dataset("model/w", ElementType::kFloat32, {2, 3}, support::sha256("weights"));
  reversed.attribute("config", std::string("[job]"));
  reversed.attribute("lr", 1e-3);
  reversed.attribute("step", std::int64_t{4});
  EXPECT_EQ(reversed.text(), sample(1e-3, "[job]").text());
  EXPECT_NE(sample(1e-3, "[job]").text().find("attribute lr real 0x3f50624dd2f1a9fc\n"), std::string::npos);
}

TEST(Manifest, EveryChangeIsNamed) {
  const std::string stored = sample(1e-3, "[job]").text();
  EXPECT_TRUE(manifest_differences(stored, stored).empty());
  EXPECT_EQ(manifest_differences(stored, sample(1e-3 + 1e-18, "[job]").text()),
            std::vector<std::string>{"attribute lr: differs from the manifest"});
  EXPECT_EQ(manifest_differences(stored, sample(1e-3, "[job] ").text()),
            std::vector<std::string>{"attribute config: differs from the manifest"});
  Manifest reshaped = sample(1e-3, "[job]");
  Manifest other;
  other.dataset("model/w", ElementType::kFloat32, {3, 2}, support::sha256("weights"));
  EXPECT_EQ(manifest_differences(Manifest().text() + "dataset model/w float32 2x3 sha256:0\n", other.text()),
            std::vector<std::string>{"dataset model/w: differs from the manifest"});
  Manifest extra = sample(1e-3, "[job]");
  extra.dataset("model/b", ElementType::kFloat64, {1}, support::sha256(""));
  EXPECT_EQ(manifest_differences(stored, extra.text()),
            std::vector<std::string>{"dataset model/b: not in the manifest"});
  EXPECT_EQ(manifest_differences(extra.text(), stored),
            std::vector<std::string>{"dataset model/b: in the manifest, missing from the file"});
}

// verify reads the attributes a stored manifest names (libhdf5 cannot list a
// crafted file's attributes safely); a hostile manifest names anything.
TEST(Manifest, AttributeNamesComeFromTheStoredText) {
  EXPECT_EQ(manifest_attribute_names(sample(1e-3, "[job]").text()), (std::vector<std::string>{"config", "lr", "step"}));
  EXPECT_EQ(manifest_attribute_names("attribute b int 1\nattribute a x\nattribute a y\ndataset c\nattributes d\n\n"),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(manifest_attribute_names("").empty());
}

}  // namespace
}  // namespace hpctrain::ckpt_file
