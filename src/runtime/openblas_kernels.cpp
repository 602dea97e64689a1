#include "runtime/openblas_kernels.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "support/text.h"

namespace hpctrain::runtime {
namespace {

// Set by the restart, for the log of the program it starts.
constexpr const char* kChoseVariable = "HPCTRAIN_OPENBLAS_CHOSE";

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// OpenBLAS's x86-64 kernels that use AVX2 (and FMA), by openblas_get_corename's
// names; every other x86-64 core of a DYNAMIC_ARCH build is SSE or AVX only.
bool has_avx2_kernels(std::string_view core) {
  static constexpr std::array<std::string_view, 6> kAvx2 = {"haswell",        "zen",      "skylakex", "cooperlake",
                                                            "sapphirerapids", "excavator"};
  const std::string name = lower(core);
  return std::find(kAvx2.begin(), kAvx2.end(), name) != kAvx2.end();
}

std::string vectors_name(CpuVectors cpu) { return cpu.avx512 ? "AVX-512" : "AVX2"; }

}  // namespace

CpuVectors cpu_vectors() {
  CpuVectors cpu;
#if defined(__x86_64__)
  // libgcc's check includes the operating system's support (XGETBV), so a
  // kernel that keeps AVX-512 state off reads as no AVX-512.
  __builtin_cpu_init();
  cpu.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f");
#endif
  return cpu;
}

std::string openblas_core() {
  using GetCorename = char* (*)();
  auto* get = reinterpret_cast<GetCorename>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = get != nullptr ? get() : nullptr;
  return name != nullptr ? std::string(name) : std::string();
}

std::string openblas_core_to_force(std::string_view chosen, CpuVectors cpu) {
  if (chosen.empty() || has_avx2_kernels(chosen)) return "";
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2) return "Haswell";
  return "";
}

void restart_on_fitting_openblas_kernels(char** argv, const cluster::Environment& env) {
  if (env.has("OPENBLAS_CORETYPE") || env.has(kChoseVariable)) return;  // the user's choice, or done once
  const std::string chosen = openblas_core();
  const std::string force = openblas_core_to_force(chosen, cpu_vectors());
  if (force.empty()) return;
  // Started through the dynamic loader (ld-linux.so PROGRAM ...), this image
  // is the loader's, which would read argv[1] as the program: not restarted.
  std::error_code error;
  if (std::filesystem::read_symlink("/proc/self/exe", error).filename().string().rfind("ld-", 0) == 0) return;
  // Nothing has started yet (no MPI, no threads of ours), so changing the
  // environment races with nothing; the new image inherits it and the
  // launcher's descriptors as this one did.
  const bool set = setenv("OPENBLAS_CORETYPE", force.c_str(), 1) == 0 &&  // NOLINT(concurrency-mt-unsafe)
                   setenv(kChoseVariable, chosen.c_str(), 1) == 0;        // NOLINT(concurrency-mt-unsafe)
  if (set) execv("/proc/self/exe", argv);
  // Not restarted: go on as loaded; the note says what to set.
  unsetenv("OPENBLAS_CORETYPE");  // NOLINT(concurrency-mt-unsafe): still no other thread
  unsetenv(kChoseVariable);       // NOLINT(concurrency-mt-unsafe)
}

std::string openblas_kernels_note(const cluster::Environment& env) {
  using GetConfig = char* (*)();
  auto* get = reinterpret_cast<GetConfig>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  const char* config = get != nullptr ? get() : nullptr;
  const bool dynamic_arch =
      config == nullptr || std::string_view(config).find("DYNAMIC_ARCH") != std::string_view::npos;
  return openblas_kernels_note(openblas_core(), cpu_vectors(), env, dynamic_arch);
}

std::string openblas_kernels_note(std::string_view core, CpuVectors cpu, const cluster::Environment& env,
                                  bool dynamic_arch) {
  if (core.empty()) return "";
  const auto chose = env.get(kChoseVariable);
  const auto forced = env.get("OPENBLAS_CORETYPE");
  if (const std::string short_of = openblas_core_to_force(core, cpu); !short_of.empty()) {
    const std::string shortfall = fmt::format(
        "OpenBLAS kernels {}, short of this CPU's {}: matmuls run at about a "
        "fifth of their rate; ",
        core, vectors_name(cpu));
    // What to do depends on why these kernels run: the advice is only the
    // variable where the variable can change them.
    if (!dynamic_arch) {
      return shortfall +
             "this OpenBLAS was built for one CPU (its config has no DYNAMIC_ARCH), so OPENBLAS_CORETYPE "
             "changes nothing: install one built with DYNAMIC_ARCH, as Debian's libopenblas0 is";
    }
    if (forced && chose) {
      return shortfall + fmt::format(
                             "hpctrain set OPENBLAS_CORETYPE={} and OpenBLAS still runs {}: this OpenBLAS "
                             "does not take it; set OPENBLAS_CORETYPE yourself to a core it knows",
                             support::printable(*forced), core);
    }
    if (forced) {
      return shortfall + fmt::format(
                             "the environment sets OPENBLAS_CORETYPE={}: set it to {} instead, or unset it "
                             "for hpctrain to choose",
                             support::printable(*forced), short_of);
    }
    return shortfall + fmt::format(
                           "hpctrain could not restart itself with OPENBLAS_CORETYPE={} (started through the "
                           "dynamic loader?): set it in the environment",
                           short_of);
  }
  if (chose && forced) {
    return fmt::format(
        "OpenBLAS kernels {} (OpenBLAS chose {} on this CPU, which it does not recognise; "
        "hpctrain set OPENBLAS_CORETYPE={}: set it yourself to choose)",
        core, support::printable(*chose), support::printable(*forced));  // the environment's: anyone's bytes
  }
  return fmt::format("OpenBLAS kernels {}", core);
}

}  // namespace hpctrain::runtime
