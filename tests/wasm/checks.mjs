// The checks of the test programs in this folder: check(name, cond, detail), throws() and
// rejects() (an MtliteError with this code whose reason holds every part), describe(error), and
// report(), which prints "N passed, N failed" and sets the exit code.
import { MtliteError } from '../../web/mtlite.js';

let passed = 0, failed = 0;

export function check(name, cond, detail = '') {
  if (cond) ++passed;
  else {
    ++failed;
    console.log(`FAILED: ${name} ${detail}`);
  }
}

export const describe = (e) =>
  (e instanceof MtliteError ? `MtliteError ${e.message}` : `${e && e.name}: ${e && e.message}`);

const isError = (e, code, parts) => e instanceof MtliteError && e.code === code && parts.every((p) => e.reason.includes(p));

export function throws(name, f, code, ...parts) {
  try {
    f();
    check(name, false, '(no exception)');
  } catch (e) {
    check(name, isError(e, code, parts), `(${describe(e)})`);
  }
}

export async function rejects(name, p, code, ...parts) {  // p: a promise, or a function giving one
  try {
    await (typeof p === 'function' ? p() : p);
    check(name, false, '(resolved)');
  } catch (e) {
    check(name, isError(e, code, parts), `(${describe(e)})`);
  }
}

export function report() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}
