// Types of mtlite.js (the mtlite WebAssembly module's JavaScript API).

/** Whether this engine runs WebAssembly SIMD128 (and so the module with the wasm-simd128 kernels). */
export function hasSimd128(): boolean;

/**
 * The runtime's status codes (runtime/include/mtlite/mtlite.h), by name, and the package's own
 * 'BUSY': a call into the module (translate, profile, createTranslator, loadModel, dispose) from an
 * onToken callback, refused while the translation runs.
 */
export type MtliteCode =
  | 'INVALID_ARGUMENT' | 'INVALID_MODEL' | 'CHECKSUM_MISMATCH' | 'IO_ERROR' | 'OUT_OF_RANGE'
  | 'UNSUPPORTED' | 'RESOURCE_EXHAUSTED' | 'INTERNAL' | 'BUSY' | 'UNKNOWN';

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
  /** The status code's number (mtlite_status); -1 for 'BUSY'. */
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

export class Model {
  readonly config: ModelConfig;
  createTranslator(limits?: Limits): Translator;
  /** Frees the model and its translators; once disposed, nothing. */
  dispose(): void;
}

export class Translator {
  /** Bytes of the translator's arena (all of its working memory). */
  readonly arenaBytes: number;
  readonly limits: Required<Omit<Limits, 'profileEvents'>>;
  /** Texts as strings, or as UTF-8 bytes passed to the runtime as they are. Throws MtliteError. */
  translate(texts: ReadonlyArray<string | Uint8Array>, options?: TranslateOptions): SentenceResult[];
  /** The profile of the last call (translate with profile: true). */
  profile(): Profile;
  /** Frees the translator; once disposed, nothing. */
  dispose(): void;
}
