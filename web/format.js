// Number formatting of the command line (mtlite.mjs) as the native CLI's printf does it.

// C's printf("%.6f", x) for a float: the exact binary value rounded half to even to 6 decimals.
export function formatFixed6(x) {
  if (Number.isNaN(x)) {
    const b = new DataView(new ArrayBuffer(8));
    b.setFloat64(0, x);
    return b.getUint8(0) & 0x80 ? '-nan' : 'nan';
  }
  if (!Number.isFinite(x)) return x < 0 ? '-inf' : 'inf';
  const negative = x < 0 || Object.is(x, -0);
  const [m, e] = decompose(Math.abs(x)); // |x| = m * 2^e exactly
  let r; // |x| * 10^6, rounded half to even
  if (e >= 0) r = (m * 1000000n) << BigInt(e);
  else {
    const num = m * 1000000n, den = 1n << BigInt(-e);
    r = num / den;
    const twice = 2n * (num % den);
    if (twice > den || (twice === den && r % 2n === 1n)) r += 1n;
  }
  const s = r.toString().padStart(7, '0');
  return `${negative ? '-' : ''}${s.slice(0, -6)}.${s.slice(-6)}`;
}

function decompose(v) { // v >= 0, finite: [m, e] with v = m * 2^e, m a BigInt
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, v);
  const hi = b.getUint32(0), lo = b.getUint32(4);
  const exp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp === 0) return [m, -1074];
  m |= 1n << 52n;
  return [m, exp - 1075];
}
