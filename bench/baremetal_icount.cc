// The cost of the kernels of one encoder token and one decoder step on a Cortex-M55, without a
// board: instructions counted by the emulator (bench/baremetal_icount.sh runs this program under
// qemu-system-arm -M mps3-an547 -icount shift=0, where virtual time advances 1 ns per
// instruction; the SysTick counter runs at 32 MHz of that time, so 1 tick = 31.25 instructions).
//
// For a transformer shape (the demo model's, OPUS-MT base's) it runs, per kernel table of the
// build ("reference" and "mve"), the kernel calls of the runtime's layers on random int8 weights
// and float activations:
//   encoder layer, L source tokens at once: quantize, QKV projection (L x 3d x d), per query
//   the attention over the L keys of every head (attn_scores_heads, softmax_masked per head,
//   attn_context_heads), output projection + residual, layer norm, FFN (d -> ffn with the
//   activation, ffn -> d + residual), layer norm; and the decoder's cross-attention K/V
//   projection of the L source rows (L x 2d x d per decoder layer), which is paid per source
//   token too;
//   decoder step, greedy (one row), at target position t over L source tokens: per layer the
//   self-attention (QKV 1 x 3d x d, attention over t + 1 cached keys), output projection,
//   norm, cross-attention (Q 1 x d x d, attention over L keys, output projection), norm, FFN,
//   norm; then the vocabulary projection (1 x V x d) and argmax.
// It reports instructions per source token (encoder) and per target token (decoder step). The
// runtime's own code between the kernels (embedding lookup, copies, search bookkeeping) is not
// counted: it is the same for both tables and small next to the kernels. Both tables get the
// same inputs and must give the same logits bit for bit (checked).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels.h"

namespace {

using mtlite::kernels::Act;
using mtlite::kernels::KernelTable;

// ---- SysTick as a 64-bit counter (the wraps counted by its interrupt) ------------------------
volatile uint32_t* const kSystCsr = reinterpret_cast<volatile uint32_t*>(0xE000E010u);
volatile uint32_t* const kSystRvr = reinterpret_cast<volatile uint32_t*>(0xE000E014u);
volatile uint32_t* const kSystCvr = reinterpret_cast<volatile uint32_t*>(0xE000E018u);
volatile uint32_t g_wraps = 0;

void StartTicks() {
  *kSystRvr = 0xFFFFFFu;
  *kSystCvr = 0;
  *kSystCsr = 7;  // enable, processor clock, interrupt on wrap
}
uint64_t Ticks() {
  uint32_t hi, lo;
  do {
    hi = g_wraps;
    lo = *kSystCvr;
  } while (hi != g_wraps);
  return (uint64_t(hi) << 24) + (0xFFFFFFu - lo);
}
// SysTick at 32 MHz of virtual time, 1 ns per instruction (-icount shift=0).
constexpr double kInsnPerTick = 1e9 / 32e6;

// Ticks per kernel family, summed over a run (each read costs ~10 instructions: noise here).
enum Part { kGemm, kQuantize, kAttention, kNorm, kSearch, kParts };
const char* const kPartNames[kParts] = {"gemm", "quantize", "attention", "layer_norm", "argmax"};
uint64_t g_part[kParts];
struct Span {
  Part p;
  uint64_t t0;
  explicit Span(Part part) : p(part), t0(Ticks()) {}
  ~Span() { g_part[p] += Ticks() - t0; }
};

struct Shape {
  const char* name;
  int d, ffn, heads, enc_layers, dec_layers, vocab;
  Act act;
};

// Random bytes straight into the BlockedN8K4 buffer (a packed random matrix is random bytes;
// the padding rows of a partial last block are never output), values in [-127, 127].
struct Linear {
  int n, k;
  std::vector<int8_t> w;
  std::vector<float> scales, bias;
  Linear(std::mt19937& rng, int n_, int k_) : n(n_), k(k_) {
    w.resize(mtlite::kernels::BlockedN8K4Bytes(n, k));
    uint32_t x = uint32_t(rng()) | 1u;
    for (size_t i = 0; i < w.size(); ++i) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      const int8_t v = int8_t(x >> 24);
      w[i] = v == -128 ? int8_t(-127) : v;
    }
    std::uniform_real_distribution<float> sd(1e-3f, 4e-3f), bd(-0.1f, 0.1f);
    scales.resize(n);
    bias.resize(n);
    for (auto& v : scales) v = sd(rng);
    for (auto& v : bias) v = bd(rng);
  }
};

struct Layer {
  Linear qkv, out, ffn1, ffn2;
  std::vector<float> g1, b1, g2, b2;
  Layer(std::mt19937& rng, const Shape& s)
      : qkv(rng, 3 * s.d, s.d), out(rng, s.d, s.d), ffn1(rng, s.ffn, s.d), ffn2(rng, s.d, s.ffn),
        g1(s.d, 1.0f), b1(s.d, 0.0f), g2(s.d, 1.0f), b2(s.d, 0.0f) {}
};
struct DecLayer {
  Linear self_qkv, self_out, cross_q, cross_kv, cross_out, ffn1, ffn2;
  std::vector<float> g, b;
  DecLayer(std::mt19937& rng, const Shape& s)
      : self_qkv(rng, 3 * s.d, s.d), self_out(rng, s.d, s.d), cross_q(rng, s.d, s.d), cross_kv(rng, 2 * s.d, s.d),
        cross_out(rng, s.d, s.d), ffn1(rng, s.ffn, s.d), ffn2(rng, s.d, s.ffn), g(s.d, 1.0f), b(s.d, 0.0f) {}
};

// Scratch for m rows.
struct Work {
  std::vector<int8_t> q;
  std::vector<float> qs, big, ctx, scores;
  Work(int m, const Shape& s, int keys)
      : q(size_t(m) * (s.ffn + 4)), qs(m), big(size_t(m) * (s.ffn > 3 * s.d ? s.ffn : 3 * s.d)),
        ctx(size_t(m) * s.d), scores(size_t(s.heads) * keys) {}
};

// c[m][l.n] = act(x[m][l.k] * W^T + bias (+ residual c))
void Gemm(const KernelTable& t, Work& wk, const float* x, int m, const Linear& l, float* c, bool residual, Act act) {
  const int kp = mtlite::kernels::RoundUp(l.k, 4);
  {
    Span sp(kQuantize);
    t.quantize_rows_s8(x, m, l.k, l.k, wk.q.data(), kp, wk.qs.data());
  }
  Span sp(kGemm);
  t.gemm_s8_blocked(m, l.n, l.k, wk.q.data(), kp, wk.qs.data(), l.w.data(), l.scales.data(), l.bias.data(),
                    residual ? c : nullptr, l.n, c, l.n, act);
}

// ctx[d] = attention of query q (d floats: heads x dh) over `keys` rows of k / v (stride ld).
void Attend(const KernelTable& t, Work& wk, const Shape& s, const float* q, const float* k, const float* v, int ld,
            int keys, float* ctx) {
  const int dh = s.d / s.heads;
  Span sp(kAttention);
  t.attn_scores_heads(q, k, ld, nullptr, keys, dh, s.heads, 0.125f, wk.scores.data(), keys);
  for (int h = 0; h < s.heads; ++h) t.softmax_masked(wk.scores.data() + size_t(h) * keys, keys, nullptr);
  t.attn_context_heads(wk.scores.data(), keys, v, ld, nullptr, keys, dh, s.heads, ctx);
}

void Norm(const KernelTable& t, float* x, int m, int d, const std::vector<float>& g, const std::vector<float>& b) {
  Span sp(kNorm);
  t.layer_norm(x, m, d, g.data(), b.data(), 1e-5f, x);
}

// One encoder layer over x [L][d] in place.
void EncoderLayer(const KernelTable& t, Work& wk, const Shape& s, const Layer& ly, float* x, int L) {
  const int d = s.d;
  float* qkv = wk.big.data();
  Gemm(t, wk, x, L, ly.qkv, qkv, false, Act::kNone);
  for (int i = 0; i < L; ++i)
    Attend(t, wk, s, qkv + size_t(i) * 3 * d, qkv + d, qkv + 2 * d, 3 * d, L, wk.ctx.data() + size_t(i) * d);
  Gemm(t, wk, wk.ctx.data(), L, ly.out, x, true, Act::kNone);
  Norm(t, x, L, d, ly.g1, ly.b1);
  Gemm(t, wk, x, L, ly.ffn1, wk.big.data(), false, s.act);
  Gemm(t, wk, wk.big.data(), L, ly.ffn2, x, true, Act::kNone);
  Norm(t, x, L, d, ly.g2, ly.b2);
}

// One greedy decoder step at position `pos` (self K/V cache rows 0..pos), over L source rows.
int DecoderStep(const KernelTable& t, Work& wk, const Shape& s, const std::vector<DecLayer>& layers,
                const Linear& vocab, std::vector<std::vector<float>>& self_kv,
                const std::vector<std::vector<float>>& cross_kv, int pos, int L, float* x, float* logits) {
  const int d = s.d;
  for (size_t li = 0; li < layers.size(); ++li) {
    const DecLayer& ly = layers[li];
    float* cache = self_kv[li].data();  // [pos + 1][3d]: q unused, k, v
    float* row = cache + size_t(pos) * 3 * d;
    Gemm(t, wk, x, 1, ly.self_qkv, row, false, Act::kNone);
    Attend(t, wk, s, row, cache + d, cache + 2 * d, 3 * d, pos + 1, wk.ctx.data());
    Gemm(t, wk, wk.ctx.data(), 1, ly.self_out, x, true, Act::kNone);
    Norm(t, x, 1, d, ly.g, ly.b);
    Gemm(t, wk, x, 1, ly.cross_q, wk.big.data(), false, Act::kNone);
    const float* kv = cross_kv[li].data();  // [L][2d]
    Attend(t, wk, s, wk.big.data(), kv, kv + d, 2 * d, L, wk.ctx.data());
    Gemm(t, wk, wk.ctx.data(), 1, ly.cross_out, x, true, Act::kNone);
    Norm(t, x, 1, d, ly.g, ly.b);
    Gemm(t, wk, x, 1, ly.ffn1, wk.big.data(), false, s.act);
    Gemm(t, wk, wk.big.data(), 1, ly.ffn2, x, true, Act::kNone);
    Norm(t, x, 1, d, ly.g, ly.b);
  }
  Gemm(t, wk, x, 1, vocab, logits, false, Act::kNone);
  Span sp(kSearch);
  return t.argmax(logits, vocab.n);
}

struct Result {
  double enc_insn_per_token = 0, dec_insn_per_token = 0;
  double enc_part[kParts] = {}, dec_part[kParts] = {};  // per token, by kernel family
  std::vector<float> logits;
  int token = -1;
};

Result Run(const KernelTable& t, const Shape& s, int L, int steps) {
  std::mt19937 rng(42);  // the same weights and inputs for every table
  std::vector<Layer> enc;
  for (int i = 0; i < s.enc_layers; ++i) enc.emplace_back(rng, s);
  std::vector<DecLayer> dec;
  for (int i = 0; i < s.dec_layers; ++i) dec.emplace_back(rng, s);
  const Linear vocab(rng, s.vocab, s.d);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(size_t(L) * s.d);
  for (auto& v : x) v = nd(rng);
  std::vector<float> dx(s.d);
  for (auto& v : dx) v = nd(rng);

  Result r;
  std::vector<std::vector<float>> cross(s.dec_layers, std::vector<float>(size_t(L) * 2 * s.d));
  Work wk(L, s, L > steps ? L : steps);
  // encoder: every layer, then the cross K/V of every decoder layer from its output
  std::memset(g_part, 0, sizeof g_part);
  const uint64_t e0 = Ticks();
  for (int i = 0; i < s.enc_layers; ++i) EncoderLayer(t, wk, s, enc[i], x.data(), L);
  for (int i = 0; i < s.dec_layers; ++i) Gemm(t, wk, x.data(), L, dec[i].cross_kv, cross[i].data(), false, Act::kNone);
  const uint64_t e1 = Ticks();
  r.enc_insn_per_token = double(e1 - e0) * kInsnPerTick / L;
  for (int p = 0; p < kParts; ++p) r.enc_part[p] = double(g_part[p]) * kInsnPerTick / L;
  std::memset(g_part, 0, sizeof g_part);

  std::vector<std::vector<float>> self(s.dec_layers, std::vector<float>(size_t(steps) * 3 * s.d, 0.0f));
  r.logits.resize(s.vocab);
  Work wd(1, s, L > steps ? L : steps);
  const uint64_t d0 = Ticks();
  for (int pos = 0; pos < steps; ++pos) r.token = DecoderStep(t, wd, s, dec, vocab, self, cross, pos, L, dx.data(), r.logits.data());
  const uint64_t d1 = Ticks();
  r.dec_insn_per_token = double(d1 - d0) * kInsnPerTick / steps;
  for (int p = 0; p < kParts; ++p) r.dec_part[p] = double(g_part[p]) * kInsnPerTick / steps;
  return r;
}

}  // namespace

extern "C" void SysTick_Handler(void) { g_wraps = g_wraps + 1; }

int main(int argc, char** argv) {
  StartTicks();
  // the demo model (models/marian-en-de-tiny: swish FFN) and the OPUS-MT base shape
  const Shape shapes[] = {{"demo", 256, 1024, 4, 6, 2, 8001, Act::kSiLU},
                          {"opus-mt-base", 512, 2048, 8, 6, 6, 58101, Act::kSiLU}};
  const int L = 16, steps = 16;  // a 16-token sentence, 16 target tokens (step cost averaged)
  const char* only = argc > 1 ? argv[1] : "";
  const KernelTable* tables[8];
  const int nt = mtlite::kernels::AvailableKernels(tables, 8);
  int bad = 0;
  for (const Shape& s : shapes) {
    if (only[0] && std::strcmp(only, s.name) != 0) continue;
    Result first;
    for (int ti = 0; ti < nt; ++ti) {
      const Result r = Run(*tables[ti], s, L, steps);
      std::printf("shape=%s d=%d ffn=%d heads=%d layers=%d+%d vocab=%d L=%d steps=%d table=%s "
                  "encoder_insn_per_source_token=%.0f decoder_insn_per_target_token=%.0f\n",
                  s.name, s.d, s.ffn, s.heads, s.enc_layers, s.dec_layers, s.vocab, L, steps, tables[ti]->name,
                  r.enc_insn_per_token, r.dec_insn_per_token);
      std::printf("  by kernel family, encoder per source token / decoder per target token:");
      for (int p = 0; p < kParts; ++p) std::printf(" %s=%.0f/%.0f", kPartNames[p], r.enc_part[p], r.dec_part[p]);
      std::printf("\n");
      std::fflush(stdout);
      if (ti == 0) {
        first = r;
      } else if (r.token != first.token ||
                 std::memcmp(r.logits.data(), first.logits.data(), sizeof(float) * r.logits.size()) != 0) {
        std::printf("MISMATCH: table %s's logits differ from the reference's\n", tables[ti]->name);
        ++bad;
      }
    }
  }
  return bad ? 1 : 0;
}
