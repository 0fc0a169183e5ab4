// Activation quantisation (kernels.h contract), written once over an ISA's operations D
// (generic/vec_math.h), plus the quantisation operations:
//   QI (int32 lanes of bit patterns), QZero(), QMaxAbsBits(acc, v) (acc = max(acc, bits(|v|))
//   as unsigned integers), QHMax(acc) -> uint32_t;
//   kQ, Quantize(x, inv, q): q[0..kQ) = contract-quantised x[0..kQ) * inv (NaN -> 0, clamp to
//   [-127, 127], round half to even); QuantizeW(x, inv, q): the same for kW values;
//   QuantizeRowVectorOk(maxabs_bits): false where the vector path cannot be exact (armv7 flushes
//   denormals: such rows take the scalar reference).
#pragma once

#include <cstring>

#include "bits.h"
#include "kernels.h"
#include "reference/reference.h"

namespace mtlite {
namespace kernels {
namespace generic {

template <class D>
void QuantizeRowsS8(const float* x, int m, int k, int ldx, int8_t* q, int ldq, float* scales) {
  constexpr int W = D::kW;
  const int kp = (k + 3) & ~3;
  for (int i = 0; i < m; ++i) {
    const float* xr = x + size_t(i) * ldx;
    int8_t* qr = q + size_t(i) * ldq;
    // maxabs on the bit patterns: for |x| the integer order is the float order, with
    // inf > finite and NaN > inf, so any non-finite value gives bits >= 0x7f800000.
    auto mv = D::QZero();
    int j = 0;
    for (; j + W <= k; j += W) mv = D::QMaxAbsBits(mv, D::Load(xr + j));
    uint32_t mb = D::QHMax(mv);
    for (; j < k; ++j) {
      const uint32_t b = FloatBits(xr[j]) & 0x7fffffffu;
      mb = b > mb ? b : mb;
    }
    if (mb == 0 || mb >= 0x7f800000u) {
      std::memset(qr, 0, size_t(kp));
      scales[i] = 0.0f;
      continue;
    }
    if (!D::QuantizeRowVectorOk(mb)) {
      ref::QuantizeRowsS8(xr, 1, k, ldx, qr, ldq, scales + i);
      continue;
    }
    const float maxabs = BitsFloat(mb);
    const float inv = 127.0f / maxabs;
    scales[i] = maxabs / 127.0f;
    const auto vinv = D::Set(inv);
    j = 0;
    for (; j + D::kQ <= k; j += D::kQ) D::Quantize(xr + j, vinv, qr + j);
    for (; j + W <= k; j += W) D::QuantizeW(xr + j, vinv, qr + j);
    for (; j < k; ++j) qr[j] = ref::QuantizeOne(xr[j] * inv);
    for (; j < kp; ++j) qr[j] = 0;
  }
}

}  // namespace generic
}  // namespace kernels
}  // namespace mtlite
