// The CLI's score format (web/format.js) against C's printf("%.6f") as Python's correctly rounded
// '%.6f' gives it (glibc rounds the exact binary value half to even, as Python does): floats of
// every magnitude, exact ties at the 7th decimal (k / 128, k / 2^20 * 3), signed zero and tiny
// negatives. Prints "N passed, N failed".
import { execFileSync } from 'node:child_process';
import { formatFixed6 } from '../../web/format.js';

const f32 = new Float32Array(1);
const values = [0.0078125, -0.0078125, 0.0234375, -0.0234375, 0.5, -0, 0, -1e-9, 1e-9, 123.4567895, -2.5e-7,
  2.5e-7, 7.5e-7, -1234567.875, 3.4e38, 1.401298464324817e-45, -0.26903483271598816];
let seed = 12345;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
for (let i = 0; i < 2000; ++i) values.push((random() - 0.7) * 10 ** (random() * 8 - 4));
for (let k = 1; k < 200; ++k) values.push(-k / 128, (k / 2 ** 20) * 3);
const xs = values.map((v) => ((f32[0] = v), f32[0]));
const input = xs.map((x) => (Object.is(x, -0) ? '-0.0' : String(x))).join('\n') + '\n';
const want = execFileSync('/usr/bin/python3', ['-c', 'import sys\nfor l in sys.stdin: print("%.6f" % float(l))'], { input })
  .toString().trim().split('\n');
let passed = 0, failed = 0;
xs.forEach((x, i) => {
  if (formatFixed6(x) === want[i]) ++passed;
  else if (++failed <= 5) console.log(`FAILED: ${x}: ${formatFixed6(x)}, printf ${want[i]}`);
});
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed || !passed ? 1 : 0;
