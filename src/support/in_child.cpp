#include "support/in_child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <system_error>

namespace hpctrain::support {
namespace {

constexpr int kThrew = 3;  // the child's exit status when `work` threw

std::string describe_signal(int signal) {
  const char* text = ::sigdescr_np(signal);  // thread-safe, unlike strsignal
  return text != nullptr ? text : "unknown signal";
}

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string data;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return data;
    data.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

ChildResult run_in_child(const std::function<std::string()>& work) {
  int fds[2];
  // Close-on-exec: a process another thread starts must not hold the write end
  // open, or the read below would wait for it.
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(fmt::format("pipe: {}", std::system_category().message(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::system_category().message(error)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash ends the child with its signal, for the parent to report, and
    // without the backtrace that the parent's handlers (UCX's) would print.
    for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) (void)std::signal(signal, SIG_DFL);
    int status = 0;
    try {
      status = write_all(fds[1], work()) ? 0 : 1;
    } catch (const std::exception& e) {
      (void)write_all(fds[1], e.what());
      status = kThrew;
    } catch (...) {
      status = kThrew;
    }
    ::_exit(status);  // no atexit handlers, no MPI or HDF5 teardown of the parent's state
  }
  ::close(fds[1]);
  std::string output = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::system_category().message(errno)));
  }
  ChildResult result;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    result.output = std::move(output);
  } else if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    result.signal = signal;
    const char* name = ::sigabbrev_np(signal);
    result.death =
        fmt::format("killed by SIG{} ({})", name != nullptr ? name : std::to_string(signal), describe_signal(signal));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kThrew) {
    result.death = output.empty() ? "an exception" : output;
  } else {
    result.death = fmt::format("exit status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return result;
}

}  // namespace hpctrain::support
