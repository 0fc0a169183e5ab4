// The few WASI functions mtlite's WebAssembly modules import (the module and the kernel test
// program are WASI builds without emscripten JavaScript): standard output and error, the
// environment, the clocks, exit. Works the same in Node, a browser page and a Web Worker.

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_INVAL = 28;
const ERRNO_SPIPE = 70;

/** Thrown by proc_exit: the program's exit code. */
export class WasiExit extends Error {
  constructor(code) {
    super(`exit(${code})`);
    this.code = code;
  }
}

/**
 * @param {object} [o]
 * @param {string[]} [o.args] argv (argv[0] first)
 * @param {Object<string, string>} [o.env] the environment
 * @param {(fd: number, bytes: Uint8Array) => void} [o.write] where bytes written to fd 1 and 2 go
 *   (default: console.log / console.error, line by line)
 */
export function makeWasi({ args = ['mtlite'], env = {}, write } = {}) {
  let memory = null;
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const view = () => new DataView(memory.buffer);
  const bytes = () => new Uint8Array(memory.buffer);
  const pending = { 1: '', 2: '' };
  const out =
    write ||
    ((fd, b) => {
      pending[fd] += dec.decode(b, { stream: true });
      let nl;
      while ((nl = pending[fd].indexOf('\n')) >= 0) {
        (fd === 1 ? console.log : console.error)(pending[fd].slice(0, nl));
        pending[fd] = pending[fd].slice(nl + 1);
      }
    });
  const strings = (list) => list.map((s) => enc.encode(s + '\0'));
  const argv = strings(args);
  const envv = strings(Object.entries(env).map(([k, v]) => `${k}=${v}`));
  const sizes = (list, countPtr, sizePtr) => {
    view().setUint32(countPtr, list.length, true);
    view().setUint32(sizePtr, list.reduce((n, s) => n + s.length, 0), true);
    return ERRNO_SUCCESS;
  };
  const fill = (list, ptrs, buf) => {
    for (const s of list) {
      view().setUint32(ptrs, buf, true);
      bytes().set(s, buf);
      ptrs += 4;
      buf += s.length;
    }
    return ERRNO_SUCCESS;
  };
  const now = (id) =>
    id === 0 ? BigInt(Date.now()) * 1000000n : BigInt(Math.round(performance.now() * 1e6));

  const wasi = {
    args_sizes_get: (c, s) => sizes(argv, c, s),
    args_get: (p, b) => fill(argv, p, b),
    environ_sizes_get: (c, s) => sizes(envv, c, s),
    environ_get: (p, b) => fill(envv, p, b),
    clock_res_get: (id, ptr) => {
      view().setBigUint64(ptr, 1000n, true);
      return ERRNO_SUCCESS;
    },
    clock_time_get: (id, precision, ptr) => {
      view().setBigUint64(ptr, now(id), true);
      return ERRNO_SUCCESS;
    },
    fd_write: (fd, iovs, n, nwritten) => {
      if (fd !== 1 && fd !== 2) return ERRNO_BADF;
      let total = 0;
      for (let i = 0; i < n; ++i) {
        const p = view().getUint32(iovs + 8 * i, true);
        const len = view().getUint32(iovs + 8 * i + 4, true);
        out(fd, bytes().slice(p, p + len));
        total += len;
      }
      view().setUint32(nwritten, total, true);
      return ERRNO_SUCCESS;
    },
    fd_close: () => ERRNO_SUCCESS,
    fd_seek: () => ERRNO_SPIPE,
    fd_fdstat_get: () => ERRNO_INVAL,
    random_get: (ptr, len) => {
      crypto.getRandomValues(bytes().subarray(ptr, ptr + len));
      return ERRNO_SUCCESS;
    },
    proc_exit: (code) => {
      throw new WasiExit(code);
    },
  };
  return {
    imports: {
      wasi_snapshot_preview1: wasi,
      env: { emscripten_notify_memory_growth: () => {} },
    },
    /** Call with the instance's exported memory before running anything. */
    setMemory(m) {
      memory = m;
    },
  };
}
