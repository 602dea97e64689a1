#include "ckpt_file/fletcher32.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hpctrain::ckpt_file {
namespace {

// HDF5 folds its sums with an end-around carry, so each stored half is the
// exact sum S taken modulo 65535, except that a non-zero S that is a multiple
// of 65535 is stored as 0xffff and only S = 0 is stored as 0. Reducing a
// partial sum this way keeps both its residue and whether it is non-zero.
std::uint64_t reduce(std::uint64_t sum) { return sum == 0 ? 0 : (sum - 1) % 65535 + 1; }

// The data are big-endian 16-bit words w_j. sum1 = Σ w_j and sum2 = Σ of the
// running sum1, i.e. for a block of n words appended to (sum1, sum2):
//   sum2 += n·sum1 + Σ_j (n − j)·w_j,   sum1 += Σ_j w_j.
struct Sums {
  std::uint64_t sum1 = 0;
  std::uint64_t sum2 = 0;
  void add_words(const unsigned char* p, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) {
      sum1 += static_cast<std::uint64_t>(p[2 * j]) << 8U | p[2 * j + 1];
      sum2 += sum1;
    }
  }
};

#if defined(__SSE2__)
std::uint64_t horizontal_sum(__m128i v) {
  alignas(16) std::uint32_t lanes[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lanes), v);
  return std::uint64_t{lanes[0]} + lanes[1] + lanes[2] + lanes[3];
}

// Blocks of up to 128 vectors of 8 words: the 32-bit lanes of `running` reach at
// most 128·129/2·2·65535 < 2^31, so nothing overflows.
// Per vector v (words w_v0..w_v7) of a block of m vectors (n = 8m words):
//   Σ_j (n − j)·w_j = 8·Σ_v (m − v)·V_v − Σ_v Σ_l l·w_vl,  V_v = Σ_l w_vl.
// Σ_v (m − v)·V_v is the sum of running sums of V (prefix, running); the
// weights l·w use madd on sign-flipped words (w = (w ^ 0x8000) + 32768).
void add_vectors(Sums& s, const unsigned char* p, std::size_t vectors) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i sign = _mm_set1_epi16(static_cast<short>(0x8000));
  const __m128i lane_index = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
  constexpr std::size_t kBlock = 128;
  for (std::size_t start = 0; start < vectors; start += kBlock) {
    const std::size_t m = vectors - start < kBlock ? vectors - start : kBlock;
    __m128i prefix = zero;    // 4 lanes of Σ V so far (each lane two words' worth)
    __m128i running = zero;   // 4 lanes of Σ prefix
    __m128i weighted = zero;  // 4 lanes of Σ l·(w ^ 0x8000), signed
    for (std::size_t v = 0; v < m; ++v) {
      const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * (start + v)));
      const __m128i words = _mm_or_si128(_mm_slli_epi16(raw, 8), _mm_srli_epi16(raw, 8));  // big-endian
      const __m128i pairs = _mm_add_epi32(_mm_unpacklo_epi16(words, zero), _mm_unpackhi_epi16(words, zero));
      prefix = _mm_add_epi32(prefix, pairs);
      running = _mm_add_epi32(running, prefix);
      weighted = _mm_add_epi32(weighted, _mm_madd_epi16(_mm_xor_si128(words, sign), lane_index));
    }
    const std::uint64_t total = horizontal_sum(prefix);
    const std::uint64_t by_vector = horizontal_sum(running);
    alignas(16) std::int32_t w[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(w), weighted);
    const std::int64_t signed_weighted = std::int64_t{w[0]} + w[1] + w[2] + w[3];
    const auto within = static_cast<std::uint64_t>(signed_weighted + static_cast<std::int64_t>(m) * 28 * 32768);
    const std::uint64_t n = 8 * m;
    s.sum2 = reduce(s.sum2 + n * s.sum1 + 8 * by_vector - within);
    s.sum1 = reduce(s.sum1 + total);
  }
}
#endif

}  // namespace

std::uint32_t fletcher32(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  Sums s;
  std::size_t done = 0;  // words
#if defined(__SSE2__)
  const std::size_t vectors = bytes / 16;
  add_vectors(s, p, vectors);
  done = 8 * vectors;
#endif
  const std::size_t words = bytes / 2;
  s.add_words(p + 2 * done, words - done);
  if (bytes % 2 != 0) {
    s.sum1 += static_cast<std::uint64_t>(p[bytes - 1]) << 8U;
    s.sum2 += s.sum1;
  }
  return static_cast<std::uint32_t>(reduce(s.sum2) << 16U | reduce(s.sum1));
}

}  // namespace hpctrain::ckpt_file
