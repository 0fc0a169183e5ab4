// Runs a WASI command module built by the WebAssembly build (e.g. mtlite_wasm_kernel_test.wasm)
// under node with web/wasi.js: node tests/wasm/run_wasi.mjs PROGRAM.wasm [ARGS...]. Standard
// output and error go to the process's; MTLITE_* variables of the environment are passed on; the
// exit code is the program's.
import { readFileSync, writeSync } from 'node:fs';
import { makeWasi, WasiExit } from '../../web/wasi.js';

const [file, ...args] = process.argv.slice(2);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MTLITE_')));
const wasi = makeWasi({ args: [file, ...args], env, write: (fd, b) => writeSync(fd, b) });
const { instance } = await WebAssembly.instantiate(readFileSync(file), wasi.imports);
wasi.setMemory(instance.exports.memory);
let code = 0;
try {
  instance.exports._start();
} catch (e) {
  if (!(e instanceof WasiExit)) throw e;
  code = e.code;
}
process.exitCode = code;
