// The manifest (format 3 on): one line per root attribute and per dataset,
// stored in the file as the root attribute "manifest", so that verification
// covers what Fletcher32 does not: attribute values (the config, the
// tokenizer hash, the step...), datasets' element types and shapes, and which
// datasets exist at all. A dataset's line carries the SHA-256 of its bytes,
// an integer or real attribute its exact value, a string attribute the
// SHA-256 of its bytes:
//
//   attribute config string sha256:9f2c...
//   attribute lr real 0x3f50624dd2f1a9fc
//   attribute step int 400
//   dataset model/tok_emb.weight float32 8192x256 sha256:41d0...
//
// Lines are sorted, so the manifest does not depend on the order of writing.
// It detects corruption and accidental edits; anyone who can write the file
// can write a matching manifest, so it is no signature (docs/security.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ckpt_file/element_type.h"
#include "support/sha256.h"

namespace hpctrain::ckpt_file {

// The root attribute that holds the manifest (and is not listed in it).
constexpr const char* kManifestAttribute = "manifest";

class Manifest {
 public:
  void attribute(const std::string& name, std::int64_t value);
  void attribute(const std::string& name, double value);
  void attribute(const std::string& name, const std::string& value);
  void dataset(const std::string& name, ElementType type, const std::vector<std::int64_t>& shape,
               const support::Digest& digest);

  // The sorted lines, each ending in a newline.
  [[nodiscard]] std::string text() const;

 private:
  std::vector<std::string> lines_;
};

// The attribute names a stored manifest lists, sorted, each once.
std::vector<std::string> manifest_attribute_names(const std::string& stored);

// What differs between the manifest a file stores and the one its contents
// give, one line per item ("attribute config: differs from the manifest",
// "dataset model/x: not in the manifest"); at most `limit` of them.
std::vector<std::string> manifest_differences(const std::string& stored, const std::string& actual,
                                              std::size_t limit = 8);

}  // namespace hpctrain::ckpt_file
