// Data pipeline throughput on a prepared data set (bench/data.sh prepares the
// quickstart one and passes its directory in HPCTRAIN_BENCH_DATA):
//   Tokenize/threads:N  — MB/s of corpus text through the SentencePiece
//                         tokenizer on N threads (bytes_per_second);
//   Loader              — tokens/s of training batches: sampler + mmap reads
//                         into int64 buffers, as the trainer consumes them.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <stdexcept>

#include "config/experiment.h"
#include "data/documents.h"
#include "data/parallel_encode.h"
#include "data/sampler.h"
#include "data/sources.h"
#include "data/token_dataset.h"
#include "data/tokenizer.h"

namespace hpctrain::data {
namespace {

std::string data_dir() {
  const char* dir = std::getenv("HPCTRAIN_BENCH_DATA");
  if (dir == nullptr) throw std::runtime_error("set HPCTRAIN_BENCH_DATA to a prepared data set (bench/data.sh does)");
  return dir;
}

// The quickstart corpus, read once.
const std::vector<Document>& corpus() {
  static const std::vector<Document> documents = [] {
    config::DataConfig config;
    config.glob = "*.py";
    DocumentReader reader(config);
    std::vector<Document> out;
    for (const auto& f : resolve_sources(config)) reader.read(f, out);
    return out;
  }();
  return documents;
}

void Tokenize(benchmark::State& state) {
  const Tokenizer tokenizer = Tokenizer::load(data_dir() + "/tokenizer.model");
  const auto& docs = corpus();
  std::int64_t bytes = 0;
  for (const auto& d : docs) bytes += static_cast<std::int64_t>(d.text.size());
  std::size_t tokens = 0;
  for (auto _ : state) {
    const auto encoded = encode_documents(tokenizer, docs, static_cast<int>(state.range(0)));
    tokens = 0;
    for (const auto& e : encoded) tokens += e.size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(Tokenize)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void Loader(benchmark::State& state) {
  const std::size_t seq_len = 256;
  const std::uint64_t batch = 8;
  const TokenDataset train(data_dir(), "train", seq_len);
  DistributedSampler sampler(train.size(), batch, 0, 1, 1234);
  std::vector<std::int64_t> buffer(batch * (seq_len + 1));
  for (auto _ : state) {
    const auto indices = sampler.next();
    for (std::size_t i = 0; i < indices.size(); ++i) train.read(indices[i], buffer.data() + i * (seq_len + 1));
    benchmark::DoNotOptimize(buffer.data());
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * batch * seq_len), benchmark::Counter::kIsRate);
}
BENCHMARK(Loader);

}  // namespace
}  // namespace hpctrain::data

BENCHMARK_MAIN();
