// Whether a directory or file jobgen found by itself is the user's to trust.
// A template or profile decides what a batch script runs, so one found beside
// an experiment (or in an installed tree) counts only when no one but the user
// and root can have written it: owned by the user or by root, and writable by
// neither its group nor others. Places the user names (--templates,
// $JOBGEN_HOME, a template or profile given as a path) are trusted as named.
#pragma once

#include <filesystem>
#include <string>

namespace hpctrain::jobgen {

// Empty when the user controls `path` (followed through links); otherwise why
// not, naming the path, its owner and its mode. With `sticky_ok`, a directory
// others may write is accepted when its sticky bit is set (/tmp's 1777): they
// may add entries there, but not rename or remove the user's.
std::string why_not_user_controlled(const std::filesystem::path& path, bool sticky_ok = false);

// "owner NAME (uid N), mode 0755" for the places jobgen lists.
std::string ownership(const std::filesystem::path& path);

}  // namespace hpctrain::jobgen
