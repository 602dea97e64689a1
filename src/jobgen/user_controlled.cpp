#include "jobgen/user_controlled.h"

#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>

#include "jobgen/encoding.h"

namespace hpctrain::jobgen {
namespace {

std::string user_name(uid_t uid) {
  passwd entry{};
  passwd* found = nullptr;
  std::array<char, 4096> buffer{};
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return printable(found->pw_name);
  }
  return "no user name";
}

std::string owner_of(uid_t uid) { return fmt::format("{} (uid {})", user_name(uid), uid); }

}  // namespace

std::string why_not_user_controlled(const std::filesystem::path& path, bool sticky_ok) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return fmt::format("{}: cannot stat it: {}", printable(path.string()), std::system_category().message(errno));
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0) {
    return fmt::format("{} is owned by {}, not by you ({}) or root", printable(path.string()), owner_of(st.st_uid),
                       owner_of(me));
  }
  const bool sticky = sticky_ok && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky) {
    return fmt::format("{} (owner {}) is writable by {} (mode {:04o})", printable(path.string()), owner_of(st.st_uid),
                       (st.st_mode & S_IWOTH) != 0 ? "everyone" : "its group", st.st_mode & 07777U);
  }
  return {};
}

std::string ownership(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "cannot stat it";
  return fmt::format("owner {}, mode {:04o}", owner_of(st.st_uid), st.st_mode & 07777U);
}

}  // namespace hpctrain::jobgen
