#include "data/sentencepiece_engine.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "data/data_error.h"

namespace hpctrain::data {
namespace {

// Closes the plugin after the engine it made is gone.
struct PluginHandle {
  void* handle;
  ~PluginHandle() { dlclose(handle); }
};

}  // namespace

std::string sentencepiece_plugin_path() {
  constexpr const char* kName = "libhpctrain_sentencepiece.so";
  // Read on the thread that loads the plugin, before any other thread of ours exists.
  if (const char* explicit_path = std::getenv("HPCTRAIN_SENTENCEPIECE_PLUGIN")) {  // NOLINT(concurrency-mt-unsafe)
    return explicit_path;
  }
  std::error_code ec;
  const auto exe_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const auto& dir : {exe_dir, exe_dir.parent_path() / "lib" / "hpctrain"}) {
    if (std::filesystem::exists(dir / kName, ec)) return (dir / kName).string();
  }
  return (std::filesystem::path(HPCTRAIN_PLUGIN_DIR) / kName).string();  // the build tree
}

std::shared_ptr<SentencePieceEngine> load_sentencepiece_engine() {
  const std::filesystem::path path = sentencepiece_plugin_path();
  // RTLD_DEEPBIND: the plugin's libsentencepiece binds to its own protobuf, and
  // RTLD_LOCAL keeps those symbols out of everyone else's way. AddressSanitizer
  // refuses RTLD_DEEPBIND (its interceptors must bind first), so the sanitizer
  // build (preset sanitize) loads the plugin without it.
  // GCC says so with __SANITIZE_ADDRESS__, clang 14 (the fuzz preset) only
  // through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kBind = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr int kBind = 0;
#else
  constexpr int kBind = RTLD_DEEPBIND;
#endif
#else
  constexpr int kBind = RTLD_DEEPBIND;
#endif
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kBind);
  if (handle == nullptr) {
    throw DataError(fmt::format("cannot load the SentencePiece plugin {}: {} (set HPCTRAIN_SENTENCEPIECE_PLUGIN)",
                                path.string(), dlerror()));  // NOLINT(concurrency-mt-unsafe): right after dlopen
  }
  auto plugin = std::make_shared<PluginHandle>(PluginHandle{handle});
  using Factory = SentencePieceEngine* (*)();
  auto* factory = reinterpret_cast<Factory>(dlsym(handle, "hpctrain_new_sentencepiece_engine"));
  if (factory == nullptr) throw DataError(fmt::format("{}: not an hpctrain SentencePiece plugin", path.string()));
  SentencePieceEngine* engine = factory();
  // The deleter holds the plugin open for as long as the engine lives.
  return std::shared_ptr<SentencePieceEngine>(engine, [plugin](SentencePieceEngine* e) { delete e; });
}

}  // namespace hpctrain::data
