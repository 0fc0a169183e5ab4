// Types of mtlite.js (the mtlite WebAssembly module's JavaScript API).

/** Whether this engine runs WebAssembly SIMD128 (and so the module with the wasm-simd128 kernels). */
export function hasSimd128(): boolean;

/**
 * The runtime's status codes (runtime/include/mtlite/mtlite.h), by name, and the package's own
 * 'BUSY': a call into the module (translate, profile, createTranslator, loadModel, dispose) from an
 * onToken callback, refused while the translation runs; 'CANCELLED': an AsyncTranslator request
 * superseded by a newer one of its key, or unfinished when the AsyncTranslator was disposed.
 */
export type MtliteCode =
  | 'INVALID_ARGUMENT' | 'INVALID_MODEL' | 'CHECKSUM_MISMATCH' | 'IO_ERROR' | 'OUT_OF_RANGE'
  | 'UNSUPPORTED' | 'RESOURCE_EXHAUSTED' | 'INTERNAL' | 'BUSY' | 'CANCELLED' | 'UNKNOWN';

/**
 * Every error the package throws; message is "CODE: reason". Wrong arguments and options (unknown
 * names, wrong types, fractions, negative or NaN numbers) and disposed objects are
 * 'INVALID_ARGUMENT' with a reason naming the argument; a module file that cannot be read is
 * 'IO_ERROR'. Only an exception thrown by an onToken callback reaches the caller as it is.
 */
export class MtliteError extends Error {
  readonly name: 'MtliteError';
  /** The status code's name, e.g. 'INVALID_ARGUMENT'. */
  readonly code: MtliteCode;
  /** The status code's number (mtlite_status); -1 for 'BUSY', -2 for 'CANCELLED'. */
  readonly status: number;
  /** The message: the runtime's, or the package's (naming the wrong argument). */
  readonly reason: string;
}

export interface LoadOptions {
  /** The module's bytes, or its URL (default: dist/mtlite.wasm next to mtlite.js, or dist/mtlite-nosimd.wasm without SIMD128). */
  wasm?: Uint8Array | ArrayBuffer | URL | string;
  /** false: the module without SIMD128 (the scalar reference kernels). Default: hasSimd128(). */
  simd?: boolean;
  /** The module's environment (e.g. { MTLITE_KERNELS: 'reference' }). */
  env?: Record<string, string>;
}

export interface ModelConfig {
  positionsStored: boolean;
  maxPositions: number;
  defaultBeam: number;
  defaultMaxLength: number;
  sourceVocabSize: number;
  targetVocabSize: number;
  hasShortlist: boolean;
  dModel: number;
}

/**
 * mtlite_limits: the translator's arena is sized for them, once. Unset fields take the runtime's
 * defaults (maxNBest: at most maxBeam; maxInputBytes: 16384, the CLI's). Integers; the runtime
 * checks their ranges.
 */
export interface Limits {
  maxBatch?: number;
  maxSourceTokens?: number;
  maxTargetTokens?: number;
  maxBeam?: number;
  maxNBest?: number;
  /** UTF-8 bytes per text (default 16384, as the native CLI's --max-input-bytes). */
  maxInputBytes?: number;
  alignments?: boolean;
  /** Reserve the profiler's records (translate with profile: true, then profile()). */
  profiling?: boolean;
  profileEvents?: number;
  /**
   * UTF-8 bytes of text per translateText call (default 65536, as the native CLI's
   * --max-text-bytes); 0: no text layer (a smaller arena). translateText with html also needs
   * alignments: true.
   */
  maxTextBytes?: number;
}

/**
 * createTranslator's argument: the limits, and pivot, a second Model (of the same Mtlite) that
 * translates this model's output: a chain through a pivot language (de-en, then en-fr). Every call
 * goes through both (the first's best translation of each sentence is the second's input;
 * hypotheses, scores and streaming are the second's; translateText composes the alignments through
 * the pivot text). One arena; the first's target language and the second's source language must
 * agree when both are known (else MtliteError 'INVALID_ARGUMENT').
 */
export interface TranslatorOptions extends Limits {
  pivot?: Model;
}

export interface TokenEvent {
  /** Index of the sentence in the call's texts. */
  sentence: number;
  /** Target ids so far (greedy), or of the best running hypothesis (beam), without </s>. */
  ids: Int32Array;
  text: string;
  /** true once per sentence, with its final best hypothesis. */
  final: boolean;
}

export interface TranslateOptions {
  beam?: number;
  nBest?: number;
  /** Return each hypothesis's score (always with nBest > 1). */
  scores?: boolean;
  /** Return cross-attention alignments (the translator needs the limit alignments). */
  alignments?: boolean;
  maxLength?: number;
  maxLengthRatio?: number;
  /** Added to the maxLengthRatio cap (default 10; Marian's max-length-factor F: ratio F, offset 1). */
  maxLengthOffset?: number;
  lengthPenalty?: number;
  /** Restrict the output vocabulary (the model's shortlist section). */
  shortlist?: boolean;
  /** Profile this call (the translator needs the limit profiling). */
  profile?: boolean;
  /**
   * Streaming: called for every new token (greedy) or change of the best hypothesis (beam). It must
   * not call into the module (translate, profile, createTranslator, loadModel, dispose): those throw
   * MtliteError 'BUSY' there. An exception it throws is rethrown when translate returns.
   */
  onToken?: (event: TokenEvent) => void;
  /** Also return each hypothesis's text as UTF-8 bytes. */
  textBytes?: boolean;
}

/** How translateText cuts text into sentences. */
export type SplitMode = 'paragraph' | 'sentence' | 'wrapped' | 'none';

export interface TranslateTextOptions {
  /**
   * 'paragraph' (the default without html): a line is a paragraph, cut into sentences; 'sentence':
   * a line is a sentence; 'wrapped' (the default with html): blank lines separate paragraphs,
   * single line breaks are soft; 'none': the whole text is one sentence.
   */
  split?: SplitMode;
  /**
   * The text is HTML: tags, comments and character references are kept in place (inline tags
   * around the words aligned to those they wrapped); script, style, code, translate="no" and
   * class="notranslate" are not translated. Needs a translator created with alignments: true
   * (else MtliteError 'INVALID_ARGUMENT').
   */
  html?: boolean;
  /** Longer sentences (source tokens) are translated in pieces (default 128). */
  maxLengthBreak?: number;
  /** The sentence splitter's rules, e.g. 'en', 'de' (default: the model's source language). */
  language?: string;
  /** Word and sentence quality scores (each sentence's quality and words). */
  quality?: boolean;
  beam?: number;
  maxLength?: number;
  maxLengthRatio?: number;
  maxLengthOffset?: number;
  lengthPenalty?: number;
  shortlist?: boolean;
  profile?: boolean;
  /** Also textBytes (the translation as UTF-8) and each sentence's UTF-8 byte offsets (bytes). */
  textBytes?: boolean;
}

export interface TextSentence {
  /** The sentence's text (html: of the text content). */
  source: string;
  /** Its translation (its source when it failed). */
  translation: string;
  /** String indices of source in the input (html: in plainSource). */
  sourceStart: number;
  sourceEnd: number;
  /** String indices of translation in text (html: in plainTarget). */
  targetStart: number;
  targetEnd: number;
  /** null, or why it was kept untranslated. */
  error: MtliteError | null;
  /** > 1: cut at maxLengthBreak and translated in pieces. */
  pieces: number;
  /** The sum of its pieces' scores (length-normalised log-probabilities). */
  score: number;
  /** With quality: the mean of its words' scores. */
  quality?: number;
  /** With quality: its words (offsets as targetStart / targetEnd), each the mean log-probability of its tokens. */
  words?: { text: string; targetStart: number; targetEnd: number; score: number }[];
  /** UTF-8 byte offsets as the runtime gives them (with textBytes). */
  bytes?: { sourceStart: number; sourceEnd: number; targetStart: number; targetEnd: number };
}

export interface TextResult {
  /** The translation (html: HTML). */
  text: string;
  sentences: TextSentence[];
  /** The number of sentences kept untranslated. */
  failed: number;
  /** The first of their errors (with the runtime's message), or null. */
  firstError: MtliteError | null;
  /** html: the text contents of the input and of text, which the sentences' offsets index. */
  plainSource?: string;
  plainTarget?: string;
  /** With textBytes: text as UTF-8. */
  textBytes?: Uint8Array;
}

export interface Tokens {
  /** Source ids, with the final </s> (none for an empty text). */
  ids: Int32Array;
  /** Their pieces, the source vocabulary's strings ('\u2581' marks a word's start). */
  pieces: string[];
}

export interface Hypothesis {
  text: string;
  /** Target ids without the final </s>. */
  ids: Int32Array;
  /** Length-penalised log-probability (with scores or nBest > 1). */
  score?: number;
  /** [(ids.length + 1) x sourceTokens] cross-attention weights, with alignments. */
  alignment: Float32Array | null;
  sourceTokens: number;
  textBytes?: Uint8Array;
}

export interface SentenceResult {
  hypotheses: Hypothesis[];
}

export interface ProfileEntry {
  op: string;
  component: string;
  parent: string;
  layer: number;
  calls: number;
  totalNs: number;
  bytes: number;
  macs: number;
}

export interface ProfileEvent {
  op: string;
  layer: number;
  lane: number;
  depth: number;
  step: number;
  startNs: number;
  endNs: number;
  bytes: number;
  macs: number;
  m: number;
  n: number;
  k: number;
}

export interface Profile {
  wallNs: number;
  threads: number;
  sentences: number;
  steps: number;
  /** The ops that ran. */
  entries: ProfileEntry[];
  events: ProfileEvent[];
  droppedEvents: number;
}

export class Mtlite {
  static load(options?: LoadOptions): Promise<Mtlite>;
  /** The runtime's version. */
  readonly version: string;
  /** The kernel table translations run with: 'wasm-simd128' or 'reference'. */
  readonly kernelTable: string;
  /**
   * Loads a model from the bytes of a .mtlite file (copied into the module's memory). A bad file:
   * MtliteError 'INVALID_MODEL' (or 'CHECKSUM_MISMATCH' with verify) with the loader's reason.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, options?: { verify?: boolean }): Model;
}

/** The decoding settings a model file records (only those recorded): every translate option
 * left out takes the model's. */
export interface DecodingDefaults {
  beam?: number;
  maxLength?: number;
  maxLengthRatio?: number;
  maxLengthOffset?: number;
  lengthPenalty?: number;
}

export class Model {
  readonly config: ModelConfig;
  readonly decodingDefaults: Readonly<DecodingDefaults>;
  createTranslator(limits?: TranslatorOptions): Translator;
  /** The source ids of a text as the translators encode it, and their pieces. */
  tokenize(text: string | Uint8Array): Tokens;
  /** Frees the model and its translators; once disposed, nothing. */
  dispose(): void;
}

export class Translator {
  /** Bytes of the translator's arena (all of its working memory). */
  readonly arenaBytes: number;
  readonly limits: Required<Omit<Limits, 'profileEvents'>>;
  /** The second model of a chain through a pivot language (createTranslator's pivot), or null. */
  readonly pivot: Model | null;
  /** Texts as strings, or as UTF-8 bytes passed to the runtime as they are. Throws MtliteError. */
  translate(texts: ReadonlyArray<string | Uint8Array>, options?: TranslateOptions): SentenceResult[];
  /**
   * The text layer: the text cut into sentences, translated, put back with its own whitespace
   * (and markup). A sentence that fails is kept untranslated; errors of the whole call (more than
   * maxTextBytes, bad options) throw MtliteError.
   */
  translateText(text: string | Uint8Array, options?: TranslateTextOptions): TextResult;
  /** The profile of the last call (translate with profile: true). */
  profile(): Profile;
  /** Frees the translator; once disposed, nothing. */
  dispose(): void;
}

/** A request's key: a newer request of the same key supersedes it (MtliteError 'CANCELLED'). */
export interface RequestKey {
  key?: string | number;
}

export interface AsyncTranslatorOptions {
  /** The .mtlite file's bytes (copied to the worker). */
  model: Uint8Array | ArrayBuffer;
  /** A second model's bytes: a chain through a pivot language (createTranslator's pivot). */
  pivot?: Uint8Array | ArrayBuffer;
  limits?: Limits;
  verify?: boolean;
  wasm?: Uint8Array | ArrayBuffer | URL | string;
  simd?: boolean;
  env?: Record<string, string>;
  /** The URL of worker.js (default: next to mtlite.js). */
  worker?: URL | string;
}

/**
 * A translator on a worker's thread (a Web Worker, or a Node worker_threads Worker): Translator's
 * calls as Promises, run one at a time in order. A request with a key supersedes the previous
 * request of that key, which rejects with MtliteError 'CANCELLED' (a running one when it ends; its
 * result is dropped). An idle worker does not keep Node running.
 */
export class AsyncTranslator {
  static create(options: AsyncTranslatorOptions): Promise<AsyncTranslator>;
  readonly version: string;
  readonly kernelTable: string;
  readonly config: ModelConfig;
  /** The pivot chain's second model's config (options.pivot), or null. */
  readonly pivotConfig: ModelConfig | null;
  readonly limits: Required<Omit<Limits, 'profileEvents'>>;
  readonly arenaBytes: number;
  translate(texts: ReadonlyArray<string | Uint8Array>, options?: TranslateOptions & RequestKey): Promise<SentenceResult[]>;
  translateText(text: string | Uint8Array, options?: TranslateTextOptions & RequestKey): Promise<TextResult>;
  tokenize(text: string | Uint8Array): Promise<Tokens>;
  /** Stops the worker; unfinished requests reject with 'CANCELLED', later ones with 'INVALID_ARGUMENT'. */
  dispose(): void;
}
