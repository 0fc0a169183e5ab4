// mtlite in JavaScript: the runtime's WebAssembly module (dist/mtlite.wasm, or dist/mtlite-nosimd.wasm
// on an engine without SIMD128) behind a small API. Works in Node >= 18, a browser page and a Web
// Worker; the module runs on the calling thread (use a Worker to keep a page responsive).
//
//   import { Mtlite } from './mtlite.js';
//   const mt = await Mtlite.load();
//   const model = mt.loadModel(bytes);                       // Uint8Array of a .mtlite file
//   const tr = model.createTranslator({ maxBeam: 4, maxNBest: 2 });
//   const [r] = tr.translate(['A dog runs.'], { beam: 4, nBest: 2, scores: true });
//   r.hypotheses[0].text;
//   tr.dispose(); model.dispose();
//
// The module is the C API of runtime/include/mtlite/mtlite.h with the glue of web/src/mtlite_web.cc.
// A model is copied once into the module's memory and used there in place; a translator's working
// memory is one arena sized by its limits at creation (nothing is allocated while translating but
// the input texts' buffer, which grows to the largest call's texts). Every error the package throws
// is an MtliteError: the runtime's code and message, INVALID_ARGUMENT for a wrong argument or option
// (checked here, by checkOptions) or a disposed object, BUSY for a call from an onToken callback.
import { makeWasi } from './wasi.js';

const CODES = ['OK', 'INVALID_ARGUMENT', 'INVALID_MODEL', 'CHECKSUM_MISMATCH', 'IO_ERROR', 'OUT_OF_RANGE',
  'UNSUPPORTED', 'RESOURCE_EXHAUSTED', 'INTERNAL'];

// Statuses this file throws itself; BUSY is the package's own (no runtime status has its number).
const INVALID_ARGUMENT = 1, IO_ERROR = 4, RESOURCE_EXHAUSTED = 7, INTERNAL = 8, BUSY = -1;

/**
 * An error of the runtime or of the package: code (e.g. 'INVALID_ARGUMENT'; 'BUSY': a call into the
 * module from an onToken callback), status (its number; -1 for BUSY), reason (the message).
 */
export class MtliteError extends Error {
  constructor(status, reason) {
    const code = status === BUSY ? 'BUSY' : CODES[status] || 'UNKNOWN';
    super(`${code}: ${reason}`);
    this.name = 'MtliteError';
    this.status = status;
    this.code = code;
    this.reason = reason;
  }
}

// A module whose one function returns a v128 constant: valid only where SIMD128 is.
const SIMD_PROBE = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0,
  0x0a, 0x16, 1, 0x14, 0, 0xfd, 0x0c, ...new Array(16).fill(0), 0x0b]);

/** Whether this engine runs WebAssembly SIMD128 (and so the module with the wasm-simd128 kernels). */
export function hasSimd128() {
  return WebAssembly.validate(SIMD_PROBE);
}

// ---- Argument checks --------------------------------------------------------------------------------
const INT32_MAX = 2147483647;

// A value as an error message shows it: strings quoted, objects by their kind.
function show(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (v === null || typeof v !== 'object' && typeof v !== 'function') return String(v);
  if (typeof v === 'function') return 'a function';
  if (Array.isArray(v)) return 'an array';
  return `an object (${(v.constructor && v.constructor.name) || 'Object'})`;
}
const invalid = (reason) => new MtliteError(INVALID_ARGUMENT, reason);

// Kinds of option values for checkOptions: [test, what a value must be].
const kind = {
  bool: [(v) => typeof v === 'boolean', 'true or false'],
  func: [(v) => typeof v === 'function', 'a function'],
  /** An integer in [min, 2^31 - 1] (the module's int). */
  int: (min) => [(v) => Number.isInteger(v) && v >= min && v <= INT32_MAX, `an integer in [${min}, 2^31 - 1]`],
  /** A finite number, at least min. */
  number: (min = -Infinity) => [(v) => Number.isFinite(v) && v >= min,
    min === -Infinity ? 'a finite number' : `a finite number >= ${min}`],
};

/**
 * Checks the options of an entry point against a schema {name: kind}: options must be undefined
 * (returns {}) or a plain object whose every key is in the schema and whose every value is undefined
 * (the default) or of its kind. Returns the options; throws MtliteError INVALID_ARGUMENT naming the
 * option. what: the options' name in messages (e.g. 'translate options').
 */
function checkOptions(options, schema, what) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`${what} must be an object, not ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!Object.prototype.hasOwnProperty.call(schema, key)) {
      throw invalid(`${what}: unknown option ${JSON.stringify(key)} (known: ${Object.keys(schema).join(', ')})`);
    }
    const [test, must] = schema[key], v = options[key];
    if (v !== undefined && !test(v)) throw invalid(`${what}: ${key} must be ${must}, not ${show(v)}`);
  }
  return options;
}

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
// An ArrayBuffer or a view of one as a Uint8Array over the same bytes.
const asUint8 = (v) => (v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v)
  : new Uint8Array(v.buffer, v.byteOffset, v.byteLength));

const LOAD_OPTIONS = {
  wasm: [(v) => isBytes(v) || v instanceof URL || typeof v === 'string', 'the bytes of the module or its URL'],
  simd: kind.bool,
  env: [(v) => v !== null && typeof v === 'object' && !Array.isArray(v) &&
    Object.values(v).every((s) => typeof s === 'string'), 'an object of strings'],
};
const MODEL_OPTIONS = { verify: kind.bool };
const LIMIT_OPTIONS = {
  maxBatch: kind.int(1), maxSourceTokens: kind.int(1), maxTargetTokens: kind.int(1), maxBeam: kind.int(1),
  maxNBest: kind.int(1), maxInputBytes: kind.int(1), alignments: kind.bool, profiling: kind.bool,
  profileEvents: kind.int(0),
};
const TRANSLATE_OPTIONS = {
  beam: kind.int(1), nBest: kind.int(1), scores: kind.bool, alignments: kind.bool, maxLength: kind.int(1),
  maxLengthRatio: kind.number(0), maxLengthOffset: kind.int(0), lengthPenalty: kind.number(), shortlist: kind.bool,
  profile: kind.bool, onToken: kind.func, textBytes: kind.bool,
};

// The default limit maxInputBytes: the native CLI's --max-input-bytes (runtime/cli/commands.h), so
// that the package and both command lines accept the same texts (the C++ API's default is 4096).
const DEFAULT_MAX_INPUT_BYTES = 16384;

// The module's exports this file calls (a module without them is not mtlite's).
const EXPORTS = ['memory', '_initialize', 'mtlite_version', 'mtlite_kernel_table', 'mtlite_last_error',
  'mtlite_limits_default', 'mtlite_model_storage_bytes', 'mtlite_model_from_buffer_storage', 'mtlite_model_free',
  'mtlite_arena_bytes', 'mtlite_translator_create_in_arena', 'mtlite_translator_free', 'mtlite_result_count',
  'mtlite_result_get', 'mtlite_profile_summary_get', 'mtlite_profile_entry_get', 'mtlite_profile_event_get',
  'mtlite_web_translate', 'mtlite_web_alloc', 'mtlite_web_free', 'mtlite_web_model_info'];

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

async function readBytes(where) {
  if (isBytes(where)) return where;
  let url;
  try {
    url = where instanceof URL ? where : new URL(where, import.meta.url);
  } catch (e) {
    throw invalid(`options.wasm: ${show(where)} is not a URL (${e.message})`);
  }
  try {
    if (isNode && url.protocol === 'file:') {
      const { readFile } = await import('node:fs/promises');
      return await readFile(url);
    }
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  } catch (e) {
    throw new MtliteError(IO_ERROR, `cannot read the WebAssembly module ${url}: ${e.message}`);
  }
}

// Offsets of the C structs (checked by static_asserts in web/src/mtlite_web.cc).
const LIMITS = { maxBatch: 0, maxSourceTokens: 4, maxTargetTokens: 8, maxBeam: 12, maxNBest: 16,
  maxInputBytes: 20, alignments: 24, numThreads: 28, profiling: 32, profileEvents: 36, maxTextBytes: 40 };
const HYP_BYTES = 28;
// [0, 72): limits / a hypothesis / a profile record; [64, 160): out values; [256, 768): a message
const SCRATCH_BYTES = 768, MESSAGE_AT = 256, MESSAGE_BYTES = 512;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// A trap of the module (a bug: it should never trap) as an MtliteError; other errors pass as they are.
function trapped(e) {
  if (e instanceof WebAssembly.RuntimeError) {
    const err = new MtliteError(INTERNAL, `the WebAssembly module trapped: ${e.message}`);
    err.cause = e;
    return err;
  }
  return e;
}

/** The loaded WebAssembly module. */
export class Mtlite {
  /**
   * Instantiates the module. options.wasm: the module's bytes, or its URL (default: dist/mtlite.wasm
   * next to this file, or dist/mtlite-nosimd.wasm where SIMD128 is missing); options.simd: false
   * forces the module without SIMD128.
   */
  static async load(options) {
    options = checkOptions(options, LOAD_OPTIONS, 'Mtlite.load options');
    const simd = options.simd ?? hasSimd128();
    const where = options.wasm ?? new URL(simd ? './dist/mtlite.wasm' : './dist/mtlite-nosimd.wasm', import.meta.url);
    const source = options.wasm !== undefined && isBytes(options.wasm) ? 'options.wasm' : String(where);
    const wasi = makeWasi({ env: options.env || {} });
    const self = new Mtlite();
    const imports = { ...wasi.imports, mtlite: { stream_event: (...a) => self._streamEvent(...a) } };
    const bytes = await readBytes(where);
    let instance;
    try {
      ({ instance } = await WebAssembly.instantiate(bytes, imports));
    } catch (e) {
      throw invalid(`the WebAssembly module ${source} cannot be instantiated: ${e.message}`);
    }
    const missing = EXPORTS.filter((name) => !(name in instance.exports));
    if (missing.length) throw invalid(`the WebAssembly module ${source} is not mtlite's: no ${missing.join(', ')}`);
    wasi.setMemory(instance.exports.memory);
    try {
      instance.exports._initialize();
      self._init(instance.exports);
    } catch (e) {
      throw trapped(e);
    }
    return self;
  }

  _init(exports) {
    this._x = exports;
    this._running = null; // the Translator whose translate call is in the module (its onToken may run)
    this._translators = new Map(); // translator handle -> Translator (stream events)
    this._scratch = this._alloc(SCRATCH_BYTES);
    /** The runtime's version, e.g. "0.1.0". */
    this.version = this._cstring(exports.mtlite_version());
    /** The kernel table translations run with: "wasm-simd128" or "reference". */
    this.kernelTable = this._cstring(exports.mtlite_kernel_table());
  }

  _view() {
    return new DataView(this._x.memory.buffer);
  }
  _bytes() {
    return new Uint8Array(this._x.memory.buffer);
  }
  _alloc(bytes) {
    const p = this._x.mtlite_web_alloc(Math.max(bytes, 1));
    if (p === 0) throw new MtliteError(RESOURCE_EXHAUSTED, `cannot allocate ${bytes} bytes of WebAssembly memory`);
    return p;
  }
  _free(p) {
    if (p) this._x.mtlite_web_free(p);
  }
  _cstring(p, len) {
    if (!p) return '';
    const b = this._bytes();
    let end = p;
    if (len === undefined) while (b[end] !== 0) ++end;
    else end = p + len;
    return decoder.decode(b.subarray(p, end));
  }
  _check(status) {
    if (status !== 0) throw new MtliteError(status, this._cstring(this._x.mtlite_last_error()));
  }
  // Refuses a call into the module while a translation runs in it (from an onToken callback): the
  // running call's arena, results and the module's state would change under it.
  _idle(what) {
    if (this._running) {
      throw new MtliteError(BUSY, `${what} inside an onToken callback: the module is running a translate call ` +
        '(make the call after translate returns)');
    }
  }
  _u32(p) {
    return this._view().getUint32(p, true);
  }
  _i32(p) {
    return this._view().getInt32(p, true);
  }

  /**
   * Loads a model from the bytes of a .mtlite file (a Uint8Array, an ArrayBuffer or another view;
   * copied into the module's memory). options.verify: check every checksum (reads all weights once).
   * A bad file throws MtliteError INVALID_MODEL (or CHECKSUM_MISMATCH) with the loader's reason.
   */
  loadModel(bytes, options) {
    if (!isBytes(bytes)) throw invalid(`loadModel: bytes must be a Uint8Array or an ArrayBuffer, not ${show(bytes)}`);
    options = checkOptions(options, MODEL_OPTIONS, 'loadModel options');
    this._idle('loadModel');
    bytes = asUint8(bytes);
    const x = this._x;
    const out = this._scratch + 64, message = this._scratch + MESSAGE_AT;
    const data = this._alloc(bytes.length);
    let storage = 0;
    try {
      this._bytes().set(bytes, data);
      const status = x.mtlite_web_model_info(data, bytes.length, out, message, MESSAGE_BYTES);
      if (status !== 0) throw new MtliteError(status, this._cstring(message));
      const info = Array.from({ length: 8 }, (_, i) => this._i32(out + 4 * i));
      this._check(x.mtlite_model_storage_bytes(data, bytes.length, out));
      const storageBytes = this._u32(out);
      storage = this._alloc(storageBytes);
      this._check(x.mtlite_model_from_buffer_storage(data, bytes.length, options.verify ? 1 : 0, storage, storageBytes, out));
      return new Model(this, this._u32(out), data, storage, {
        positionsStored: info[0] !== 0, maxPositions: info[1], defaultBeam: info[2], defaultMaxLength: info[3],
        sourceVocabSize: info[4], targetVocabSize: info[5], hasShortlist: info[6] !== 0, dModel: info[7],
      });
    } catch (e) {
      this._free(storage);
      this._free(data);
      throw trapped(e);
    }
  }

  _streamEvent(user, sentence, ids, numIds, text, textLen, final) {
    const t = this._translators.get(user);
    if (!t || !t._onToken || t._streamError) return;
    try {
      t._onToken({
        sentence, final: final !== 0, text: this._cstring(text, textLen),
        ids: new Int32Array(this._x.memory.buffer.slice(ids, ids + 4 * numIds)),
      });
    } catch (e) {
      t._streamError = e; // rethrown when the call returns (never thrown through the module)
    }
  }
}

/** A loaded model; config: positionsStored, maxPositions, defaultBeam, defaultMaxLength, vocabulary sizes, hasShortlist, dModel. */
export class Model {
  constructor(mt, handle, data, storage, config) {
    this._mt = mt;
    this._h = handle;
    this._data = data;
    this._storage = storage;
    this._translators = new Set();
    this.config = config;
  }

  /**
   * A translator for these limits (camelCase fields of mtlite_limits: maxBatch, maxSourceTokens,
   * maxTargetTokens, maxBeam, maxNBest, maxInputBytes, alignments, profiling, profileEvents; unset:
   * the runtime's defaults, maxNBest at most maxBeam, maxInputBytes 16384 as in the native CLI); its
   * arena is allocated here, once.
   */
  createTranslator(limits) {
    limits = checkOptions(limits, LIMIT_OPTIONS, 'createTranslator limits');
    if (!this._h) throw invalid('createTranslator: the model was disposed');
    const mt = this._mt, x = mt._x, lp = mt._scratch, out = mt._scratch + 64;
    mt._idle('createTranslator');
    x.mtlite_limits_default(lp);
    const v = mt._view();
    v.setInt32(lp + LIMITS.maxInputBytes, DEFAULT_MAX_INPUT_BYTES, true);
    for (const [k, value] of Object.entries(limits)) {
      if (value !== undefined) v.setInt32(lp + LIMITS[k], typeof value === 'boolean' ? Number(value) : value, true);
    }
    v.setInt32(lp + LIMITS.numThreads, 1, true); // no threads in the module
    if (limits.maxNBest === undefined) { // the default n-best, at most the beam
      const nBest = v.getInt32(lp + LIMITS.maxNBest, true), beam = v.getInt32(lp + LIMITS.maxBeam, true);
      v.setInt32(lp + LIMITS.maxNBest, Math.max(1, Math.min(nBest, beam)), true);
    }
    mt._check(x.mtlite_arena_bytes(this._h, lp, out));
    const arenaBytes = mt._u32(out);
    const arena = mt._alloc(arenaBytes);
    try {
      mt._check(x.mtlite_translator_create_in_arena(this._h, lp, arena, arenaBytes, out));
    } catch (e) {
      mt._free(arena);
      throw trapped(e);
    }
    const view = mt._view();
    const read = (k) => view.getInt32(lp + LIMITS[k], true);
    const t = new Translator(this, mt._u32(out), arena, arenaBytes, {
      maxBatch: read('maxBatch'), maxSourceTokens: read('maxSourceTokens'), maxTargetTokens: read('maxTargetTokens'),
      maxBeam: read('maxBeam'), maxNBest: read('maxNBest'), maxInputBytes: read('maxInputBytes'),
      alignments: read('alignments') !== 0, profiling: read('profiling') !== 0,
    });
    this._translators.add(t);
    return t;
  }

  /** Frees the model and its translators (again: nothing). */
  dispose() {
    if (!this._h) return;
    this._mt._idle('Model.dispose');
    for (const t of [...this._translators]) t.dispose();
    this._mt._x.mtlite_model_free(this._h);
    this._mt._free(this._storage);
    this._mt._free(this._data);
    this._h = 0;
  }
}

/** Translates; one call at a time (calls are synchronous). */
export class Translator {
  constructor(model, handle, arena, arenaBytes, limits) {
    this._model = model;
    this._mt = model._mt;
    this._h = handle;
    this._arena = arena;
    this._input = 0;
    this._inputBytes = 0;
    /** Bytes of the translator's arena (all of its working memory). */
    this.arenaBytes = arenaBytes;
    /** The limits it was created with. */
    this.limits = limits;
    this._mt._translators.set(handle, this);
  }

  _inputBuffer(bytes) {
    if (bytes > this._inputBytes) {
      this._mt._free(this._input);
      this._input = 0;
      this._inputBytes = Math.max(bytes, 2 * this._inputBytes, 4096);
      this._input = this._mt._alloc(this._inputBytes);
    }
    return this._input;
  }

  /**
   * Translates texts (strings, or Uint8Array of UTF-8 bytes, passed to the runtime as they are).
   * options: beam, nBest, scores, alignments, maxLength, maxLengthRatio, maxLengthOffset,
   * lengthPenalty, shortlist,
   * profile (then profile() reads it), onToken(event) (streaming: {sentence, ids, text, final} for
   * every new token of greedy search, every change of the best hypothesis of beam search, and once
   * with final: true per sentence). Returns per text {hypotheses: [{text, ids, score, alignment,
   * sourceTokens}]} (score when options.scores or nBest > 1; alignment: Float32Array
   * [(ids.length + 1) x sourceTokens] when options.alignments). options.textBytes: also each
   * hypothesis's text as UTF-8 bytes (textBytes). Unknown options and wrong values throw MtliteError
   * INVALID_ARGUMENT before anything runs; onToken must not call into the module (calls from it throw
   * MtliteError BUSY); an exception it throws is rethrown when the call returns.
   */
  translate(texts, options) {
    if (!Array.isArray(texts)) throw invalid(`translate: texts must be an array of strings or Uint8Arrays, not ${show(texts)}`);
    texts.forEach((t, i) => {
      if (typeof t !== 'string' && !(t instanceof Uint8Array)) {
        throw invalid(`translate: texts[${i}] must be a string or a Uint8Array, not ${show(t)}`);
      }
    });
    options = checkOptions(options, TRANSLATE_OPTIONS, 'translate options');
    if (!this._h) throw invalid('translate: the translator was disposed');
    const mt = this._mt, x = mt._x;
    mt._idle('translate');
    const n = texts.length;
    if (n === 0) return [];
    const encoded = texts.map((t) => (typeof t === 'string' ? encoder.encode(t) : t));
    const total = encoded.reduce((s, b) => s + b.length, 0);
    const base = this._inputBuffer(8 * n + total);
    const v = mt._view(), b = mt._bytes();
    let at = base + 8 * n;
    for (let i = 0; i < n; ++i) {
      v.setUint32(base + 4 * i, at, true);
      v.setUint32(base + 4 * (n + i), encoded[i].length, true);
      b.set(encoded[i], at);
      at += encoded[i].length;
    }
    const nBest = options.nBest ?? 1;
    const scores = Boolean(options.scores) || nBest > 1;
    const flags = (scores ? 1 : 0) | (options.alignments ? 2 : 0) | (options.profile ? 4 : 0) |
      (options.onToken ? 8 : 0) | (options.shortlist ? 16 : 0);
    this._onToken = options.onToken;
    this._streamError = undefined;
    let status;
    mt._running = this;
    try {
      status = x.mtlite_web_translate(this._h, base, base + 4 * n, n, options.beam ?? 1, nBest, options.maxLength ?? 0,
        options.maxLengthRatio ?? NaN, options.maxLengthOffset ?? -1, options.lengthPenalty ?? NaN, flags);
    } catch (e) {
      throw trapped(e);
    } finally {
      mt._running = null;
      this._onToken = undefined;
    }
    if (this._streamError) throw this._streamError;
    mt._check(status);
    const hp = mt._scratch;
    const results = [];
    for (let i = 0; i < n; ++i) {
      const hypotheses = [];
      const count = x.mtlite_result_count(this._h, i);
      for (let k = 0; k < count; ++k) {
        mt._check(x.mtlite_result_get(this._h, i, k, hp));
        const view = mt._view();
        const ids = view.getUint32(hp, true), numIds = view.getInt32(hp + 4, true);
        const text = view.getUint32(hp + 8, true), textLen = view.getUint32(hp + 12, true);
        const align = view.getUint32(hp + 20, true), sourceTokens = view.getInt32(hp + 24, true);
        const buf = x.memory.buffer;
        const h = {
          text: mt._cstring(text, textLen),
          ids: new Int32Array(buf.slice(ids, ids + 4 * numIds)),
          score: scores ? view.getFloat32(hp + 16, true) : undefined,
          alignment: align ? new Float32Array(buf.slice(align, align + 4 * (numIds + 1) * sourceTokens)) : null,
          sourceTokens,
        };
        if (options.textBytes) h.textBytes = new Uint8Array(buf.slice(text, text + textLen));
        hypotheses.push(h);
      }
      results.push({ hypotheses });
    }
    return results;
  }

  /**
   * The profile of the last call (translate with profile: true; the translator needs the limit
   * profiling): {wallNs, threads, sentences, steps, entries: [{op, component, parent, layer, calls,
   * totalNs, bytes, macs}] (ops that ran), events: [{op, layer, lane, depth, step, startNs, endNs,
   * bytes, macs, m, n, k}], droppedEvents}. Nanoseconds and counts are Numbers.
   */
  profile() {
    if (!this._h) throw invalid('profile: the translator was disposed');
    const mt = this._mt, x = mt._x, p = mt._scratch;
    mt._idle('profile');
    mt._check(x.mtlite_profile_summary_get(this._h, p));
    let v = mt._view();
    const u64 = (o) => Number(v.getBigUint64(o, true));
    const str = (o) => mt._cstring(v.getUint32(o, true));
    const s = { wallNs: u64(p), threads: v.getInt32(p + 8, true), sentences: v.getInt32(p + 12, true),
      steps: v.getInt32(p + 16, true), entries: [], events: [], droppedEvents: v.getUint32(p + 28, true) };
    const numEntries = v.getUint32(p + 20, true), numEvents = v.getUint32(p + 24, true);
    for (let i = 0; i < numEntries; ++i) {
      mt._check(x.mtlite_profile_entry_get(this._h, i, p));
      v = mt._view();
      if (u64(p + 16) === 0) continue;
      s.entries.push({ op: str(p), component: str(p + 4), parent: str(p + 8), layer: v.getInt32(p + 12, true),
        calls: u64(p + 16), totalNs: u64(p + 24), bytes: u64(p + 32), macs: u64(p + 40) });
    }
    for (let i = 0; i < numEvents; ++i) {
      mt._check(x.mtlite_profile_event_get(this._h, i, p));
      v = mt._view();
      s.events.push({ op: str(p), layer: v.getInt32(p + 4, true), lane: v.getInt32(p + 8, true),
        depth: v.getInt32(p + 12, true), step: v.getInt32(p + 16, true), startNs: u64(p + 24), endNs: u64(p + 32),
        bytes: u64(p + 40), macs: u64(p + 48), m: v.getInt32(p + 56, true), n: v.getInt32(p + 60, true),
        k: v.getInt32(p + 64, true) });
    }
    return s;
  }

  /** Frees the translator (its arena and input buffer; again: nothing). */
  dispose() {
    if (!this._h) return;
    this._mt._idle('Translator.dispose');
    this._mt._x.mtlite_translator_free(this._h);
    this._mt._translators.delete(this._h);
    this._model._translators.delete(this);
    this._mt._free(this._arena);
    this._mt._free(this._input);
    this._h = 0;
  }
}
