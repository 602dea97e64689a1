#include "train/preemption.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace hpctrain::train {
namespace {

// A signal handler can reach nothing but globals: these are the one piece of
// process-wide mutable state, written only by the handler below and by the
// switch to recording.
std::atomic<bool> g_recording{false};            // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
std::atomic<int> g_first_signal{0};              // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
std::atomic<std::int64_t> g_first_signal_ns{0};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
std::atomic<bool> g_terminated{false};           // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void say(const char* text) {
  // write(2) is async-signal-safe; a short write of an error line is not worth a retry.
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

const char* short_name(int signal) {
  switch (signal) {
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    default: return "TERM";
  }
}

// clock_gettime and write are async-signal-safe; CLOCK_MONOTONIC is
// steady_clock's clock on Linux (libstdc++).
extern "C" void on_preemption_signal(int signal) {
  if (!g_recording.load()) {
    say("hpctrain: SIG");
    say(short_name(signal));
    say(" received outside a training loop (nothing to checkpoint): exit 75; run the same command again to "
        "continue\n");
    ::_exit(config::kRequeueExitCode);
  }
  if (signal == SIGTERM) g_terminated.store(true);
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  // The time first, then the signal: a reader that sees the signal sees its time.
  std::int64_t none = 0;
  if (g_first_signal_ns.compare_exchange_strong(none,
                                                static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec)) {
    g_first_signal.store(signal);
  }
}

int signal_number(config::Signal signal) {
  switch (signal) {
    case config::Signal::kUsr1: return SIGUSR1;
    case config::Signal::kUsr2: return SIGUSR2;
    case config::Signal::kTerm: return SIGTERM;
  }
  throw std::invalid_argument("checkpoint.signal: a signal hpctrain does not handle");
}

void install(int number) {
  struct sigaction action {};
  action.sa_handler = on_preemption_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls in MPI and I/O carry on
  if (sigaction(number, &action, nullptr) != 0) {
    throw std::runtime_error(std::string("cannot install the SIG") + short_name(number) + " handler");
  }
}

}  // namespace

void exit_on_preemption_signals(config::Signal signal) {
  install(SIGTERM);
  install(signal_number(signal));
}

void exit_on_any_preemption_signal() {
  install(SIGTERM);
  install(SIGUSR1);
  install(SIGUSR2);
}

PreemptionSignal::PreemptionSignal(config::Signal signal) : name_(config::name_of(signal)) {
  g_first_signal.store(0);
  g_first_signal_ns.store(0);
  g_terminated.store(false);
  g_recording.store(true);
  install(SIGTERM);
  install(signal_number(signal));
}

bool PreemptionSignal::raised() const { return g_first_signal.load() != 0; }

std::string PreemptionSignal::received() const {
  const int signal = g_first_signal.load();
  if (signal == 0) return {};
  return signal == SIGTERM ? "TERM" : name_;
}

bool PreemptionSignal::terminated() const { return g_terminated.load(); }

std::optional<std::chrono::steady_clock::time_point> PreemptionSignal::received_at() const {
  if (!raised()) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(g_first_signal_ns.load()));
}

}  // namespace hpctrain::train
