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
//   // two models chained through a pivot language (de-en, then en-fr): every call goes through both
//   const chain = deEn.createTranslator({ maxBeam: 4, pivot: enFr });
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
const INVALID_ARGUMENT = 1, IO_ERROR = 4, RESOURCE_EXHAUSTED = 7, INTERNAL = 8, BUSY = -1, CANCELLED = -2;

/**
 * An error of the runtime or of the package: code (e.g. 'INVALID_ARGUMENT'; 'BUSY': a call into the
 * module from an onToken callback; 'CANCELLED': an AsyncTranslator request superseded by a newer one
 * of its key, or pending when the translator was disposed), status (its number; -1 for BUSY, -2 for
 * CANCELLED), reason (the message).
 */
export class MtliteError extends Error {
  constructor(status, reason) {
    const code = status === BUSY ? 'BUSY' : status === CANCELLED ? 'CANCELLED' : CODES[status] || 'UNKNOWN';
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
  profileEvents: kind.int(0), maxTextBytes: kind.int(0),
  pivot: [(v) => v instanceof Model, 'a Model (the second model of a chain through a pivot language)'],
};
const TRANSLATE_OPTIONS = {
  beam: kind.int(1), nBest: kind.int(1), scores: kind.bool, alignments: kind.bool, maxLength: kind.int(1),
  maxLengthRatio: kind.number(0), maxLengthOffset: kind.int(0), lengthPenalty: kind.number(), shortlist: kind.bool,
  profile: kind.bool, onToken: kind.func, textBytes: kind.bool,
};
// translateText: the text layer's own options and those of translate that apply to every sentence.
const SPLIT_MODES = ['none', 'sentence', 'paragraph', 'wrapped']; // mtlite_split_mode's order
const TEXT_OPTIONS = {
  html: kind.bool,
  split: [(v) => SPLIT_MODES.includes(v), `one of ${SPLIT_MODES.map((m) => `'${m}'`).join(', ')}`],
  maxLengthBreak: kind.int(1),
  language: [(v) => typeof v === 'string' && /^[A-Za-z0-9_-]{1,32}$/.test(v), 'a language code such as "en"'],
  quality: kind.bool,
  ...Object.fromEntries(['beam', 'maxLength', 'maxLengthRatio', 'maxLengthOffset', 'lengthPenalty', 'shortlist',
    'profile', 'textBytes'].map((k) => [k, TRANSLATE_OPTIONS[k]])),
};

// The default limit maxInputBytes: the native CLI's --max-input-bytes (runtime/cli/commands.h), so
// that the package and both command lines accept the same texts (the C++ API's default is 4096).
const DEFAULT_MAX_INPUT_BYTES = 16384;
// The default limit maxTextBytes (bytes of text per translateText call): the native CLI's
// --max-text-bytes.
const DEFAULT_MAX_TEXT_BYTES = 65536;

// The module's exports this file calls (a module without them is not mtlite's).
const EXPORTS = ['memory', '_initialize', 'mtlite_version', 'mtlite_kernel_table', 'mtlite_last_error',
  'mtlite_limits_default', 'mtlite_model_storage_bytes', 'mtlite_model_from_buffer_storage', 'mtlite_model_free',
  'mtlite_arena_bytes', 'mtlite_translator_create_in_arena', 'mtlite_translator_free', 'mtlite_result_count',
  'mtlite_result_get', 'mtlite_profile_summary_get', 'mtlite_profile_entry_get', 'mtlite_profile_event_get',
  'mtlite_web_translate', 'mtlite_web_alloc', 'mtlite_web_free', 'mtlite_web_model_info', 'mtlite_web_translate_text',
  'mtlite_text_sentence_get', 'mtlite_text_word_get', 'mtlite_web_html_text', 'mtlite_web_vocab_new', 'mtlite_web_vocab_free',
  'mtlite_web_tokenize', 'mtlite_translator_create_pivot', 'mtlite_translator_arena_bytes'];

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
// mtlite_text_result (at scratch + 64) and mtlite_text_sentence (at scratch)
const TEXT_RESULT_AT = 64;
// [0, 72): limits / a hypothesis / a profile record; [64, 160): out values; [256, 768): a message
const SCRATCH_BYTES = 768, MESSAGE_AT = 256, MESSAGE_BYTES = 512;

const encoder = new TextEncoder();
// ignoreBOM: a U+FEFF at the start of a text is a character of it (the runtime passes it through).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

// Maps UTF-8 byte offsets of `bytes` to indices of the JavaScript string that `decoder` makes of
// them: a 4-byte sequence is two UTF-16 code units, every other one unit, and invalid UTF-8 counts
// as the decoder replaces it (one U+FFFD per maximal subpart of a sequence, as the Encoding
// standard says). Offsets past the end map to the string's length.
function utf16Offsets(bytes) {
  const n = bytes.length, map = new Uint32Array(n + 1);
  let units = 0, i = 0;
  while (i < n) {
    map[i] = units;
    const b = bytes[i];
    let need = 0, lo = 0x80, hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    }
    let j = i + 1, k = 0;
    while (k < need && j < n && bytes[j] >= lo && bytes[j] <= hi) {
      map[j++] = units;
      ++k;
      lo = 0x80;
      hi = 0xbf;
    }
    units += need === 3 && k === 3 ? 2 : 1; // a character, or one U+FFFD (ASCII: one unit)
    i = j;
  }
  map[n] = units;
  return (byte) => map[Math.min(byte, n)];
}

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
      const info = Array.from({ length: 14 }, (_, i) => this._i32(out + 4 * i));
      const view = this._view();
      // The decoding defaults: every translate option left out takes the model's (what its
      // release translates with, when the file records it), else the runtime's.
      const effective = {
        beam: info[8], maxLength: info[9], maxLengthRatio: view.getFloat32(out + 40, true),
        maxLengthOffset: info[11], lengthPenalty: view.getFloat32(out + 48, true),
      };
      const decodingDefaults = Object.fromEntries(Object.entries(effective).filter((_, i) => (info[13] >> i) & 1));
      this._check(x.mtlite_model_storage_bytes(data, bytes.length, out));
      const storageBytes = this._u32(out);
      storage = this._alloc(storageBytes);
      this._check(x.mtlite_model_from_buffer_storage(data, bytes.length, options.verify ? 1 : 0, storage, storageBytes, out));
      return new Model(this, this._u32(out), data, bytes.length, storage, {
        positionsStored: info[0] !== 0, maxPositions: info[1], defaultBeam: info[2], defaultMaxLength: info[3],
        sourceVocabSize: info[4], targetVocabSize: info[5], hasShortlist: info[6] !== 0, dModel: info[7],
      }, decodingDefaults, effective);
    } catch (e) {
      this._free(storage);
      this._free(data);
      throw trapped(e);
    }
  }

  // The text content of an HTML document (UTF-8 bytes) as the text layer parses it, as bytes.
  _htmlText(html) {
    const x = this._x, out = this._scratch + 64, message = this._scratch + MESSAGE_AT;
    const p = this._alloc(2 * html.length + 2);
    try {
      this._bytes().set(html, p);
      const status = x.mtlite_web_html_text(p, html.length, p + html.length + 1, out, message, MESSAGE_BYTES);
      if (status !== 0) throw new MtliteError(status, this._cstring(message));
      const at = p + html.length + 1;
      return new Uint8Array(x.memory.buffer.slice(at, at + this._u32(out)));
    } finally {
      this._free(p);
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
  constructor(mt, handle, data, size, storage, config, decodingDefaults, effectiveDefaults) {
    this._mt = mt;
    /** The decoding settings the file records (beam, maxLength, maxLengthRatio, maxLengthOffset,
     * lengthPenalty; only those recorded): the defaults of translate and translateText. */
    this.decodingDefaults = Object.freeze({ ...decodingDefaults });
    this._defaults = effectiveDefaults; // the options a call leaves out
    this._h = handle;
    this._data = data;
    this._size = size;
    this._vocab = 0; // the tokenizer of tokenize(), made on its first call
    this._storage = storage;
    this._translators = new Set();
    this.config = config;
  }

  /**
   * A translator for these limits (camelCase fields of mtlite_limits: maxBatch, maxSourceTokens,
   * maxTargetTokens, maxBeam, maxNBest, maxInputBytes, alignments, profiling, profileEvents,
   * maxTextBytes; unset: the runtime's defaults, maxNBest at most maxBeam, maxInputBytes 16384 and
   * maxTextBytes 65536 as in the native CLI; maxTextBytes 0: no translateText, a smaller arena;
   * translateText with html needs alignments: true); its arena is allocated here, once.
   *
   * limits.pivot: a second Model (of the same Mtlite) that translates this one's output: a chain
   * through a pivot language (this model de-en, the pivot model en-fr), as the native
   * Translator::Create(first, second, limits). Every call goes through both: the first model's
   * best translation of each sentence is the second's input; hypotheses, scores, n-best and
   * streaming are the second's; translateText composes the alignments through the pivot text, so
   * html works. One arena holds both translators (arenaBytes). The first model's target language
   * and the second's source language must agree when both are known (else INVALID_ARGUMENT).
   * Disposing either model disposes the translator.
   */
  createTranslator(limits) {
    limits = checkOptions(limits, LIMIT_OPTIONS, 'createTranslator limits');
    if (!this._h) throw invalid('createTranslator: the model was disposed');
    const { pivot, ...sizes } = limits;
    if (pivot !== undefined) {
      if (pivot._mt !== this._mt) throw invalid('createTranslator: the pivot model was loaded by another Mtlite');
      if (!pivot._h) throw invalid('createTranslator: the pivot model was disposed');
    }
    const mt = this._mt, x = mt._x, lp = mt._scratch, out = mt._scratch + 64;
    mt._idle('createTranslator');
    x.mtlite_limits_default(lp);
    const v = mt._view();
    v.setInt32(lp + LIMITS.maxInputBytes, DEFAULT_MAX_INPUT_BYTES, true);
    v.setInt32(lp + LIMITS.maxTextBytes, DEFAULT_MAX_TEXT_BYTES, true);
    for (const [k, value] of Object.entries(sizes)) {
      if (value !== undefined) v.setInt32(lp + LIMITS[k], typeof value === 'boolean' ? Number(value) : value, true);
    }
    v.setInt32(lp + LIMITS.numThreads, 1, true); // no threads in the module
    if (limits.maxBeam === undefined) { // room for the model's default beam
      v.setInt32(lp + LIMITS.maxBeam, Math.max(v.getInt32(lp + LIMITS.maxBeam, true), this._defaults.beam), true);
    }
    if (limits.maxNBest === undefined) { // the default n-best, at most the beam
      const nBest = v.getInt32(lp + LIMITS.maxNBest, true), beam = v.getInt32(lp + LIMITS.maxBeam, true);
      v.setInt32(lp + LIMITS.maxNBest, Math.max(1, Math.min(nBest, beam)), true);
    }
    let arena = 0, arenaBytes;
    if (pivot !== undefined) { // the runtime allocates the chain's one arena itself
      try {
        mt._check(x.mtlite_translator_create_pivot(this._h, pivot._h, lp, out));
        arenaBytes = x.mtlite_translator_arena_bytes(mt._u32(out));
      } catch (e) {
        throw trapped(e);
      }
    } else {
      mt._check(x.mtlite_arena_bytes(this._h, lp, out));
      arenaBytes = mt._u32(out);
      arena = mt._alloc(arenaBytes);
      try {
        mt._check(x.mtlite_translator_create_in_arena(this._h, lp, arena, arenaBytes, out));
      } catch (e) {
        mt._free(arena);
        throw trapped(e);
      }
    }
    const view = mt._view();
    const read = (k) => view.getInt32(lp + LIMITS[k], true);
    const t = new Translator(this, pivot ?? null, mt._u32(out), arena, arenaBytes, {
      maxBatch: read('maxBatch'), maxSourceTokens: read('maxSourceTokens'), maxTargetTokens: read('maxTargetTokens'),
      maxBeam: read('maxBeam'), maxNBest: read('maxNBest'), maxInputBytes: read('maxInputBytes'),
      alignments: read('alignments') !== 0, profiling: read('profiling') !== 0, maxTextBytes: read('maxTextBytes'),
    });
    this._translators.add(t);
    if (pivot) pivot._translators.add(t);
    return t;
  }

  /**
   * The source ids of a text as the translators encode it (with the final </s>) and their pieces,
   * the source vocabulary's strings ("▁" marks a word start): {ids: Int32Array, pieces:
   * string[]}. An empty text gives no ids. text: a string or a Uint8Array of UTF-8.
   */
  tokenize(text) {
    if (typeof text !== 'string' && !(text instanceof Uint8Array)) {
      throw invalid(`tokenize: text must be a string or a Uint8Array, not ${show(text)}`);
    }
    if (!this._h) throw invalid('tokenize: the model was disposed');
    const mt = this._mt, x = mt._x, out = mt._scratch + 64, message = mt._scratch + MESSAGE_AT;
    mt._idle('tokenize');
    try {
      if (!this._vocab) {
        this._vocab = x.mtlite_web_vocab_new(this._data, this._size, message, MESSAGE_BYTES);
        if (!this._vocab) throw new MtliteError(INTERNAL, `tokenize: ${mt._cstring(message)}`);
      }
      const bytes = typeof text === 'string' ? encoder.encode(text) : text;
      const input = mt._alloc(bytes.length);
      let block = 0;
      try {
        mt._bytes().set(bytes, input);
        const status = x.mtlite_web_tokenize(this._vocab, input, bytes.length, out, message, MESSAGE_BYTES);
        if (status !== 0) throw new MtliteError(status, mt._cstring(message) || 'cannot tokenize the text');
        block = mt._u32(out);
        const v = mt._view(), n = v.getInt32(block, true);
        const ids = new Int32Array(x.memory.buffer.slice(block + 4, block + 4 + 4 * n));
        const offsets = block + 4 + 4 * n, chars = offsets + 4 * (n + 1);
        const pieces = [];
        for (let i = 0; i < n; ++i) {
          const b = v.getUint32(offsets + 4 * i, true), e = v.getUint32(offsets + 4 * (i + 1), true);
          pieces.push(mt._cstring(chars + b, e - b));
        }
        return { ids, pieces };
      } finally {
        mt._free(block);
        mt._free(input);
      }
    } catch (e) {
      throw trapped(e);
    }
  }

  /** Frees the model and its translators (again: nothing). */
  dispose() {
    if (!this._h) return;
    this._mt._idle('Model.dispose');
    for (const t of [...this._translators]) t.dispose();
    if (this._vocab) this._mt._x.mtlite_web_vocab_free(this._vocab);
    this._vocab = 0;
    this._mt._x.mtlite_model_free(this._h);
    this._mt._free(this._storage);
    this._mt._free(this._data);
    this._h = 0;
  }
}

/** Translates; one call at a time (calls are synchronous). */
export class Translator {
  constructor(model, pivot, handle, arena, arenaBytes, limits) {
    this._model = model;
    /** The second model of a chain through a pivot language (createTranslator's limits.pivot), or null. */
    this.pivot = pivot;
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
    const d = this._model._defaults; // the model's decoding defaults for the options left out
    const scores = Boolean(options.scores) || nBest > 1;
    const flags = (scores ? 1 : 0) | (options.alignments ? 2 : 0) | (options.profile ? 4 : 0) |
      (options.onToken ? 8 : 0) | (options.shortlist ? 16 : 0);
    this._onToken = options.onToken;
    this._streamError = undefined;
    let status;
    mt._running = this;
    try {
      status = x.mtlite_web_translate(this._h, base, base + 4 * n, n, options.beam ?? d.beam, nBest,
        options.maxLength ?? d.maxLength, options.maxLengthRatio ?? d.maxLengthRatio,
        options.maxLengthOffset ?? d.maxLengthOffset, options.lengthPenalty ?? d.lengthPenalty, flags);
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
   * Translates a text (a string, or a Uint8Array of UTF-8): the runtime's text layer cuts it into
   * sentences (options.split: 'paragraph' (the default: a line is a paragraph), 'sentence' (a line
   * is a sentence), 'wrapped' (blank lines separate paragraphs, single line breaks are soft; the
   * default with html), 'none' (the whole text is one sentence)), translates them and puts them
   * back with the text's own whitespace. options.html: the text is HTML; tags, comments and
   * character references are kept in place (inline tags around the words aligned to the ones they
   * wrapped) and script, style, code and translate="no" elements are not translated; needs a
   * translator created with alignments: true. options.maxLengthBreak: longer sentences (source
   * tokens) are translated in pieces (128); options.language: the splitter's rules ("en", "de";
   * default: the model's source language); and beam, maxLength, maxLengthRatio, maxLengthOffset,
   * lengthPenalty, shortlist, profile as in translate.
   *
   * Returns {text, sentences, failed, firstError} (html: also plainSource and plainTarget, the text
   * contents that the sentences index): per sentence {source, translation, sourceStart, sourceEnd,
   * targetStart, targetEnd, error, pieces, score}, the offsets as indices of JavaScript strings (of
   * the input and of text; html: of plainSource and plainTarget), score the sum of its pieces'
   * scores (the length-normalised log-probability), error null or an MtliteError: a sentence that
   * fails is kept untranslated in its place (failed counts them; firstError is the first one's
   * error, with the runtime's message). Errors of the whole call (more than maxTextBytes, invalid
   * UTF-8, bad options) throw MtliteError. options.textBytes: also textBytes (the translation as
   * UTF-8) and per sentence bytes: {sourceStart, sourceEnd, targetStart, targetEnd} as UTF-8 byte
   * offsets, as the runtime gives them.
   */
  translateText(text, options) {
    if (typeof text !== 'string' && !(text instanceof Uint8Array)) {
      throw invalid(`translateText: text must be a string or a Uint8Array, not ${show(text)}`);
    }
    options = checkOptions(options, TEXT_OPTIONS, 'translateText options');
    if (!this._h) throw invalid('translateText: the translator was disposed');
    const html = Boolean(options.html);
    if (html && !this.limits.alignments) {
      throw invalid('translateText: html needs a translator created with alignments: true ' +
        '(createTranslator({alignments: true, ...}): the markup is put back by the word alignment)');
    }
    const mt = this._mt, x = mt._x;
    mt._idle('translateText');
    const source = typeof text === 'string' ? encoder.encode(text) : text;
    const language = options.language === undefined ? null : encoder.encode(options.language);
    const base = this._inputBuffer(source.length + (language ? language.length + 1 : 0));
    const b = mt._bytes();
    b.set(source, base);
    let languageAt = 0;
    if (language) {
      languageAt = base + source.length;
      b.set(language, languageAt);
      b[languageAt + language.length] = 0;
    }
    const split = SPLIT_MODES.indexOf(options.split ?? (html ? 'wrapped' : 'paragraph'));
    const flags = 1 | (options.profile ? 4 : 0) | (options.shortlist ? 16 : 0) | (options.quality ? 32 : 0); // scores: always
    const out = mt._scratch + TEXT_RESULT_AT;
    let status;
    mt._running = this;
    try {
      const d = this._model._defaults; // the model's decoding defaults for the options left out
      status = x.mtlite_web_translate_text(this._h, base, source.length, options.beam ?? d.beam,
        options.maxLength ?? d.maxLength, options.maxLengthRatio ?? d.maxLengthRatio,
        options.maxLengthOffset ?? d.maxLengthOffset, options.lengthPenalty ?? d.lengthPenalty, flags, split,
        html ? 1 : 0, options.maxLengthBreak ?? 128, languageAt, out);
    } catch (e) {
      throw trapped(e);
    } finally {
      mt._running = null;
    }
    mt._check(status);
    let v = mt._view();
    const textAt = v.getUint32(out, true), textLen = v.getUint32(out + 4, true);
    const numSentences = v.getUint32(out + 8, true), failed = v.getUint32(out + 12, true);
    const errorAt = v.getUint32(out + 16, true), errorLen = v.getUint32(out + 20, true);
    const numWords = v.getUint32(out + 24, true);
    const targetBytes = new Uint8Array(x.memory.buffer.slice(textAt, textAt + textLen));
    const firstErrorMessage = mt._cstring(errorAt, errorLen);
    const raw = [];
    for (let i = 0; i < numSentences; ++i) {
      const sp = mt._scratch;
      mt._check(x.mtlite_text_sentence_get(this._h, i, sp));
      v = mt._view();
      raw.push([v.getUint32(sp, true), v.getUint32(sp + 4, true), v.getUint32(sp + 8, true), v.getUint32(sp + 12, true),
        v.getInt32(sp + 16, true), v.getInt32(sp + 20, true), v.getFloat32(sp + 24, true), v.getFloat32(sp + 28, true),
        v.getUint32(sp + 32, true), v.getUint32(sp + 36, true)]);
    }
    const words = [];
    for (let i = 0; i < numWords; ++i) {
      const wp = mt._scratch;
      mt._check(x.mtlite_text_word_get(this._h, i, wp));
      v = mt._view();
      words.push([v.getUint32(wp, true), v.getUint32(wp + 4, true), v.getFloat32(wp + 8, true)]);
    }
    const result = { text: decoder.decode(targetBytes), sentences: [], failed, firstError: null };
    // What the offsets index: the input and the translation, or (html) their text contents.
    let sourceIndexed = source, targetIndexed = targetBytes;
    if (html) {
      sourceIndexed = mt._htmlText(source);
      targetIndexed = mt._htmlText(targetBytes);
      result.plainSource = decoder.decode(sourceIndexed);
      result.plainTarget = decoder.decode(targetIndexed);
    }
    // (a string's lone surrogate is one unit, as the U+FFFD the encoder made of it)
    const sourceString = html ? result.plainSource : typeof text === 'string' ? text : decoder.decode(source);
    const targetString = html ? result.plainTarget : result.text;
    const s16 = utf16Offsets(sourceIndexed), t16 = utf16Offsets(targetIndexed);
    let firstFailed = true;
    for (const [sb, se, tb, te, st, pieces, score, quality, firstWord, sentenceWords] of raw) {
      let error = null;
      if (st !== 0) {
        error = new MtliteError(st, firstFailed ? firstErrorMessage : 'the sentence was kept untranslated');
        if (firstFailed) result.firstError = error;
        firstFailed = false;
      }
      const sentence = { source: '', translation: '', sourceStart: s16(sb), sourceEnd: s16(se), targetStart: t16(tb),
        targetEnd: t16(te), error, pieces, score };
      sentence.source = sourceString.slice(sentence.sourceStart, sentence.sourceEnd);
      sentence.translation = targetString.slice(sentence.targetStart, sentence.targetEnd);
      if (options.quality) { // the runtime's word scores: the mean log-probability of each word's tokens
        sentence.quality = quality;
        sentence.words = words.slice(firstWord, firstWord + sentenceWords).map(([b, e, wordScore]) => {
          const w = { text: '', targetStart: t16(b), targetEnd: t16(e), score: wordScore };
          w.text = targetString.slice(w.targetStart, w.targetEnd);
          return w;
        });
      }
      if (options.textBytes) sentence.bytes = { sourceStart: sb, sourceEnd: se, targetStart: tb, targetEnd: te };
      result.sentences.push(sentence);
    }
    if (options.textBytes) result.textBytes = targetBytes;
    return result;
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
    if (this.pivot) this.pivot._translators.delete(this);
    this._mt._free(this._arena);
    this._mt._free(this._input);
    this._h = 0;
  }
}

// ---- AsyncTranslator: a translator in a worker --------------------------------------------------------

const ASYNC_OPTIONS = {
  model: [isBytes, 'the bytes of a .mtlite file (a Uint8Array or an ArrayBuffer)'],
  pivot: [isBytes, 'the bytes of the second .mtlite file of a pivot chain (a Uint8Array or an ArrayBuffer)'],
  limits: [(v) => v !== null && typeof v === 'object' && !Array.isArray(v), 'an object (createTranslator limits)'],
  verify: kind.bool,
  wasm: LOAD_OPTIONS.wasm, simd: kind.bool, env: LOAD_OPTIONS.env,
  worker: [(v) => v instanceof URL || typeof v === 'string', 'the URL of worker.js'],
};
const isKey = (v) => typeof v === 'string' || Number.isFinite(v);
const fromWire = (e) => new MtliteError(e.status, e.reason);

/**
 * A translator on a worker's thread (a browser Web Worker, or a Node worker_threads Worker running
 * worker.js next to this file): the calls of Translator, returning Promises, one request at a time
 * in the order they were made. A request may name a key (options.key, a string or a number): a new
 * request of the same key supersedes the one before it, whose promise rejects with MtliteError
 * CANCELLED (at once if it was still waiting; when it ends if it was running, whose result is
 * dropped: a running call is not interrupted). Requests without a key are never cancelled.
 */
export class AsyncTranslator {
  /**
   * Starts the worker, loads the module and the model in it and creates the translator.
   * options: model (the .mtlite bytes, copied to the worker), pivot (the bytes of a second model
   * that translates the first's output: a chain through a pivot language, createTranslator's
   * limits.pivot), limits (createTranslator's, without pivot), verify, and Mtlite.load's wasm (a
   * URL; bytes are copied), simd, env; worker: the URL of worker.js (the default: next to this
   * file). Resolves to the AsyncTranslator (version, kernelTable, config, pivotConfig (the second
   * model's config, or null), limits, arenaBytes as in the worker); rejects with MtliteError.
   */
  static async create(options) {
    options = checkOptions(options, ASYNC_OPTIONS, 'AsyncTranslator.create options');
    if (options.model === undefined) throw invalid('AsyncTranslator.create: options.model (the .mtlite bytes) is required');
    const url = options.worker === undefined ? new URL('./worker.js', import.meta.url) : new URL(options.worker, import.meta.url);
    let worker;
    try {
      if (isNode) {
        const { Worker } = await import('node:worker_threads');
        worker = new Worker(url);
      } else {
        worker = new Worker(url, { type: 'module' });
      }
    } catch (e) {
      throw new MtliteError(IO_ERROR, `cannot start the worker ${url}: ${e.message}`);
    }
    const self = new AsyncTranslator(worker);
    const copy = (b) => new Uint8Array(asUint8(b)).buffer; // a copy (a Node Buffer's slice() is a view)
    const load = {};
    if (options.wasm !== undefined) load.wasm = isBytes(options.wasm) ? new Uint8Array(copy(options.wasm)) : String(options.wasm);
    if (options.simd !== undefined) load.simd = options.simd;
    if (options.env !== undefined) load.env = options.env;
    const model = copy(options.model);
    const pivot = options.pivot === undefined ? null : copy(options.pivot);
    try {
      const info = await self._request({ op: 'init', load, model, pivot, verify: options.verify, limits: options.limits },
        null, pivot ? [model, pivot] : [model]);
      Object.assign(self, info);
    } catch (e) {
      self.dispose();
      throw e;
    }
    return self;
  }

  constructor(worker) {
    this._worker = worker;
    this._queue = []; // requests not sent yet
    this._running = null; // the request in the worker
    this._nextId = 1;
    this._disposed = false;
    const onMessage = (m) => this._reply(m);
    const onError = (e) => { // the worker is gone: every request fails, and every later one
      this._failAll(new MtliteError(INTERNAL, `the worker failed: ${e && e.message ? e.message : e}`));
      this._disposed = true;
    };
    if (isNode) {
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.unref(); // an idle worker does not keep Node running
    } else {
      worker.onmessage = (e) => onMessage(e.data);
      worker.onerror = (e) => { if (e.preventDefault) e.preventDefault(); onError(e); };
    }
  }

  /** Translator.translate in the worker (options as there, onToken included, and key). */
  translate(texts, options) {
    const { key, onToken, rest } = this._split(options);
    return this._request({ op: 'translate', texts, options: rest, stream: Boolean(onToken) }, key, [], onToken);
  }

  /** Translator.translateText in the worker (options as there, and key). */
  translateText(text, options) {
    const { key, rest } = this._split(options);
    return this._request({ op: 'translateText', text, options: rest }, key).then((r) => {
      const errors = r.sentences.map((s) => s.error && fromWire(s.error));
      const first = r.sentences.findIndex((s) => s.error);
      r.sentences.forEach((s, i) => { s.error = errors[i]; });
      r.firstError = first >= 0 ? errors[first] : r.firstError && fromWire(r.firstError);
      return r;
    });
  }

  /** Model.tokenize in the worker. */
  tokenize(text) {
    return this._request({ op: 'tokenize', text }, undefined);
  }

  /**
   * Stops the worker (its module, model and translator go with it); the requests not finished
   * reject with MtliteError CANCELLED. Again: nothing.
   */
  dispose() {
    if (this._disposed) return;
    this._disposed = true;
    this._failAll(new MtliteError(CANCELLED, 'the AsyncTranslator was disposed'));
    this._worker.terminate();
  }

  // options without key and onToken (checked here; the rest is checked by the worker's translator).
  _split(options) {
    if (options === undefined) return { rest: undefined };
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      return { rest: options }; // the worker's checkOptions reports it
    }
    const { key, onToken, ...rest } = options;
    if (key !== undefined && !isKey(key)) throw invalid(`options.key must be a string or a number, not ${show(key)}`);
    if (onToken !== undefined && typeof onToken !== 'function') throw invalid(`options: onToken must be a function, not ${show(onToken)}`);
    return { key, onToken, rest };
  }

  _request(message, key, transfer = [], onToken = undefined) {
    if (this._disposed) return Promise.reject(invalid(`${message.op}: the AsyncTranslator was disposed`));
    return new Promise((resolve, reject) => {
      const r = { id: this._nextId++, message, key, transfer, onToken, resolve, reject, cancelled: false };
      if (key !== undefined) { // supersede the requests of this key
        const superseded = new MtliteError(CANCELLED, `superseded by a newer request of key ${JSON.stringify(key)}`);
        this._queue = this._queue.filter((q) => {
          if (q.key !== key) return true;
          q.reject(superseded);
          return false;
        });
        if (this._running && this._running.key === key && !this._running.cancelled) {
          this._running.cancelled = true;
          this._running.reject(superseded);
        }
      }
      this._queue.push(r);
      this._pump();
    });
  }

  _pump() {
    if (this._running || !this._queue.length || this._disposed) return;
    const r = this._queue.shift();
    this._running = r;
    if (isNode) this._worker.ref();
    try {
      this._worker.postMessage({ ...r.message, id: r.id }, r.transfer);
    } catch (e) { // e.g. a text that cannot be cloned
      this._running = null;
      r.reject(invalid(`${r.message.op}: cannot send the request to the worker: ${e.message}`));
      this._pump();
    }
  }

  _reply(m) {
    const r = this._running;
    if (!r || m.id !== r.id) return;
    if (m.token !== undefined) {
      if (!r.cancelled && r.onToken) {
        try {
          r.onToken(m.token);
        } catch (e) {
          if (r.streamError === undefined) r.streamError = e;
        }
      }
      return;
    }
    this._running = null;
    if (!r.cancelled) {
      if (r.streamError !== undefined) r.reject(r.streamError);
      else if (m.ok) r.resolve(m.value);
      else r.reject(fromWire(m.error));
    }
    if (isNode && !this._queue.length) this._worker.unref();
    this._pump();
  }

  _failAll(error) {
    const all = [...(this._running ? [this._running] : []), ...this._queue];
    this._running = null;
    this._queue = [];
    for (const r of all) if (!r.cancelled) r.reject(error);
  }
}
