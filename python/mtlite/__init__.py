"""mtlite: on-device quantized translation of Marian / OPUS-MT models.

    import mtlite
    mtlite.convert("opus-mt-en-de", "en-de.mtlite", quantize="int8")   # host builds only
    model = mtlite.Model("en-de.mtlite")              # memory-mapped, shared by translators
    tr = mtlite.Translator(model, threads=1, max_batch=16)
    for r in tr.translate_batch(["A man is riding a bike."], beam_size=4, return_scores=True):
        print(r.hypotheses[0], r.scores[0])

    for event in tr.translate_stream("Two dogs play in the snow.", beam_size=1):
        print(event.text, event.final)                # the translation so far, as it grows

A `Model` is immutable and may be shared by any number of translators and threads. A
`Translator` owns one arena sized from its limits at creation; its calls are serialised, and
they release the GIL while the model runs, so two Python threads with one translator each
translate in parallel. `Translator(..., profiling=True)` with `translate_batch(...,
profile=True)` records where the time goes (`last_profile()`); `Model.info()` gives the size
profile of the file and the arena plan for given limits.

Errors of the runtime are raised as `mtlite.Error` subclasses carrying its message:
InvalidArgumentError (also a ValueError), InvalidModelError, ChecksumMismatchError, IoError
(also an OSError), OutOfRangeError (also a ValueError), UnsupportedError,
ResourceExhaustedError (also a MemoryError), InternalError; `type(e).code` names the status.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _mtlite
from ._mtlite import (ChecksumMismatchError, Error, InternalError, InvalidArgumentError, InvalidModelError,
                      IoError, OutOfRangeError, ResourceExhaustedError, UnsupportedError)

__all__ = [
    "Model", "Translator", "TranslationResult", "ScoreResult", "StreamEvent", "TextTranslation", "TextSentence",
    "TextWord", "TextChunk", "convert", "version",
    "kernel_table",
    "Error", "InvalidArgumentError", "InvalidModelError", "ChecksumMismatchError", "IoError",
    "OutOfRangeError", "UnsupportedError", "ResourceExhaustedError", "InternalError",
]

__version__: str = _mtlite.version()

PathLike = Union[str, "os.PathLike[str]"]
Text = Union[str, bytes]


def version() -> str:
    """Version of the mtlite runtime this package was built with."""
    return _mtlite.version()


def kernel_table() -> str:
    """The kernel table translations run with on this CPU, chosen at run time ("avx2",
    "avx-vnni", "avx512-vnni", "avx512-amx", "neon", "neon-dotprod" or "reference"; the
    environment variable MTLITE_KERNELS=<name>, read once per process, forces a table the CPU
    can run)."""
    return _mtlite.kernel_table()


def _utf8(text: Text, what: str) -> bytes:
    # str -> UTF-8. Lone surrogates are passed through ("surrogatepass") so that the runtime
    # rejects them with its own message (invalid UTF-8 at byte offset N).
    if isinstance(text, bytes):
        return text
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")


class Model:
    """A converted `.mtlite` model, memory-mapped read-only.

    Immutable after loading: share one Model between translators and threads. The mapping
    lives as long as the Model or any Translator created from it.

    Args:
        path: the `.mtlite` file.
        verify_checksums: check the CRC32C of every data buffer while loading (reads all
            weights once); a damaged file raises ChecksumMismatchError naming the tensor.
    """

    def __init__(self, path: PathLike, *, verify_checksums: bool = False) -> None:
        self._path = os.fspath(path)
        self._impl = _mtlite._Model(self._path, bool(verify_checksums))
        self._config: Dict[str, Any] = self._impl.config()
        self._decoding_defaults: Dict[str, Any] = self._impl.decoding_defaults()

    @property
    def path(self) -> str:
        """The file the model was loaded from."""
        return self._path

    @property
    def file_size(self) -> int:
        """Size of the model file in bytes."""
        return self._impl.file_size

    @property
    def config(self) -> Dict[str, Any]:
        """Architecture and tokenizer configuration (a copy)."""
        return dict(self._config)

    @property
    def decoding_defaults(self) -> Dict[str, Any]:
        """The decoding settings recorded in the file by `mtlite convert` (what the release
        translates with: a Marian decoder.yml, ...), a copy: the recorded keys of beam_size,
        max_length, max_length_ratio, max_length_offset, length_penalty, and "source" (the file
        they came from). Every translate_* call takes them for the options it is not given;
        empty for a file without them."""
        return dict(self._decoding_defaults)

    @property
    def has_shortlist(self) -> bool:
        """Whether the file holds an output-vocabulary shortlist section (made by `mtlite
        shortlist`), which translate_batch(..., use_shortlist=True) uses."""
        return bool(self._impl.has_shortlist)

    def info(self, *, max_batch: int = 1, max_source_tokens: int = 256, max_target_tokens: int = 256,
             max_beam: int = 4, max_n_best: Optional[int] = None, max_input_bytes: int = 16384,
             alignments: bool = False, threads: int = 1, profiling: bool = False,
             profile_events: int = 0, max_text_bytes: int = 65536) -> Dict[str, Any]:
        """Model facts for planning memory (the limits are those of Translator()):

        - "path", "file_size", "version", "config", "limits";
        - "size_profile": the file's bytes per component, in model order, summing exactly to
          file_size: a list of {"name", "bytes", "dtypes"} (dtypes: sorted list of "f32",
          "f16", "int8", "bytes", "strings", "flatbuffer", "zero"; empty for an empty
          component), as `mtlite info` prints it;
        - "arena_bytes": the arena a Translator with these limits would allocate (no arena is
          allocated here);
        - "arena_plan": how that arena is laid out: {"total_bytes" (== arena_bytes),
          "unshared_bytes" (the sum of all buffers, as if none shared memory), "phases" (of a
          translate call, in order), "buffers": a list of {"name", "offset", "bytes",
          "first_phase", "last_phase", "persistent"}}; buffers whose live ranges (first to
          last phase) do not intersect may share memory.

        Raises InvalidArgumentError for limits the runtime rejects.
        """
        limits = _limits(max_batch, max_source_tokens, max_target_tokens, max_beam, max_n_best,
                         max_input_bytes, alignments, threads, profiling, profile_events, max_text_bytes)
        plan: Dict[str, Any] = self._impl.arena_plan(limits)
        return {
            "path": self._path,
            "file_size": self.file_size,
            "version": version(),
            "config": self.config,
            "limits": limits.as_dict(),
            "size_profile": self.size_profile(),
            "arena_bytes": plan["total_bytes"],
            "arena_plan": plan,
        }

    def size_profile(self) -> List[Dict[str, Any]]:
        """The file's bytes per component (see info()["size_profile"]); they sum to file_size."""
        return self._impl.size_profile()

    def verify_checksums(self) -> None:
        """Checks every data buffer's CRC32C; raises ChecksumMismatchError naming the first bad one."""
        self._impl.verify_checksums()

    def encode(self, text: Text, *, target: bool = False, add_eos: bool = True) -> np.ndarray:
        """Token ids (int32) of `text` with the model's source (or target) tokenizer, as HF
        MarianTokenizer gives them: a leading `>>xx<<` language code is one token; `</s>` is
        appended unless add_eos is False."""
        ids = self._impl.encode(_utf8(text, "text"), bool(target))
        if add_eos:
            ids = np.append(ids, np.int32(self._config["eos_id"]))
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """Target ids -> text, like MarianTokenizer.decode(ids, skip_special_tokens=True)."""
        return self._impl.decode(np.asarray(ids, dtype=np.int64).reshape(-1))

    def __repr__(self) -> str:
        c = self._config
        return (f"mtlite.Model({self._path!r}, {c['weight_type']}, d_model={c['d_model']}, "
                f"layers={c['encoder_layers']}+{c['decoder_layers']})")


@dataclass(frozen=True)
class TranslationResult:
    """Translation of one input: up to n_best hypotheses, best first.

    hypotheses: the texts. ids: generated target ids (int32, without the final </s>).
    scores: length-penalised log-probabilities (HF: sum_logprob / length**length_penalty) when
    return_scores was set, else None. alignments: per hypothesis a float32 array
    [len(ids) + 1, source tokens] of cross-attention weights (last decoder layer by default,
    mean over heads; the last row is </s>) when return_alignments was set, else None.
    """
    hypotheses: List[str]
    ids: List[np.ndarray]
    scores: Optional[List[float]] = None
    alignments: Optional[List[np.ndarray]] = None

    @property
    def text(self) -> str:
        """The best hypothesis."""
        return self.hypotheses[0] if self.hypotheses else ""


@dataclass(frozen=True)
class ScoreResult:
    """Teacher-forced score of one (source, target) pair.

    tokens: the target ids scored (int32), ending with </s>. log_probs: float32, the natural-log
    probability of each token given the source and the tokens before it: log_softmax of the
    model's raw logits (final_logits_bias included; no pad masking, bad-word or forced-</s>
    processing, no length penalty). score: their sum (float64).
    """
    tokens: np.ndarray
    log_probs: np.ndarray
    score: float


@dataclass(frozen=True)
class StreamEvent:
    """One event of Translator.translate_stream().

    text: the translation so far (greedy: after every generated token; beam search: the best
    running hypothesis, which may change, not only grow). ids: its target ids (int32, without
    </s>). final: True for the last event, whose text and ids equal the result of
    translate_batch with the same options. time: seconds from the start of the runtime call to
    this event (measured on the translating thread; the first event's time is the latency to
    the first token).
    """
    text: str
    ids: np.ndarray
    final: bool
    time: float


def _record(cls: Any, **fields: Any) -> Any:
    r = cls()
    for k, v in fields.items():
        setattr(r, k, v)
    return r


@dataclass(frozen=True)
class TextSentence:
    """One sentence of Translator.translate_text().

    source, translation: the sentence and its translation (with html: text content, without
    markup). source_start/source_end and target_start/target_end: its place, in characters, in
    TextTranslation.source_text / .plain_text. error: None, or the error code name
    ("INVALID_ARGUMENT", ...) of a sentence that was kept untranslated. pieces: > 1 when a long
    sentence was cut (max_length_break). score: the sum of its pieces' scores.
    """
    source: str
    translation: str
    source_start: int
    source_end: int
    target_start: int
    target_end: int
    error: Optional[str] = None
    pieces: int = 1
    score: float = 0.0
    quality: Optional[float] = None
    words: Optional[List["TextWord"]] = None


@dataclass(frozen=True)
class TextWord:
    """A word of a translation (translate_text(quality=True)): its text, its place (characters) in
    TextTranslation.plain_text, and the mean log-probability of its tokens (<= 0; closer to 0 is
    more confident), as Bergamot's simple quality estimator."""
    text: str
    start: int
    end: int
    score: float


@dataclass(frozen=True)
class TextTranslation:
    """The result of Translator.translate_text().

    text: the translation (HTML with html=True). sentences: the TextSentence of each sentence,
    in order. failed: how many were kept untranslated (first_error: the first one's message).
    source_text, plain_text: the texts the sentences' offsets index (the input and the
    translation; with html their text content).
    """
    text: str
    sentences: List[TextSentence]
    failed: int
    first_error: str
    source_text: str
    plain_text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class TextChunk:
    """One piece of Translator.translate_text_stream(): the chunks' texts, joined, are the
    translation. sentence: the TextSentence the chunk translates, or None for the text between
    sentences (whitespace, passed through)."""
    text: str
    sentence: Optional[TextSentence] = None


_SPLIT_MODES = {"none": 0, "sentence": 1, "paragraph": 2, "wrapped": 3}


def _split_mode(split: str) -> int:
    if split not in _SPLIT_MODES:
        raise InvalidArgumentError(f"split must be one of {', '.join(_SPLIT_MODES)}, not {split!r}")
    return _SPLIT_MODES[split]


def _char_offsets(data: bytes) -> List[int]:
    """For every byte offset of UTF-8 data, the index of the character it is in (len(data): the
    number of characters)."""
    out = [0] * (len(data) + 1)
    count = 0
    current = 0
    for i, byte in enumerate(data):
        if (byte & 0xC0) != 0x80:
            current = count
            count += 1
        out[i] = current
    out[len(data)] = count
    return out


def _limits(max_batch: int, max_source_tokens: int, max_target_tokens: int, max_beam: int,
            max_n_best: Optional[int], max_input_bytes: int, alignments: bool, threads: int,
            profiling: bool = False, profile_events: int = 0, max_text_bytes: int = 65536) -> Any:
    return _record(_mtlite._Limits, max_batch=int(max_batch), max_source_tokens=int(max_source_tokens),
                   max_target_tokens=int(max_target_tokens), max_beam=int(max_beam),
                   max_n_best=int(max_beam if max_n_best is None else max_n_best),
                   max_input_bytes=int(max_input_bytes), alignments=bool(alignments), threads=int(threads),
                   profiling=bool(profiling), profile_events=int(profile_events),
                   max_text_bytes=int(max_text_bytes))


_SENTENCE_PREFIX = re.compile(r"^sentence (\d+): ")


class Translator:
    """Translates with one model and one arena.

    Args:
        model_or_path: a Model, or the path of a `.mtlite` file (loaded here); or a list of two
            (Models or paths): a chain through a pivot language (de-en, then en-fr), every call
            going through both (the second model's max_input_bytes is what the first produces).
        threads: worker threads inside each translation (the runtime's thread pool).
        max_batch: sentences per runtime call; translate_batch() splits longer lists.
        max_beam, max_n_best: largest beam_size / n_best a call may ask for (max_beam defaults
            to 4, or the model's recorded beam when larger; n_best to max_beam).
        max_source_tokens: per sentence, including </s>; longer inputs raise OutOfRangeError.
        max_target_tokens: generated tokens per sentence, including </s>; the default max_length.
        max_input_bytes: UTF-8 bytes per input sentence.
        alignments: reserve room for alignments (needed for return_alignments=True).
        profiling: reserve the profiler's records (needed for profile=True; see last_profile).
        profile_events: trace events kept per call (0: enough for a call of max_target_tokens
            steps); when the trace is full, later events are dropped (counted in
            "dropped_events") and the per-op aggregates stay complete.
        max_text_bytes: UTF-8 bytes of text per translate_text() call (its buffers are part of
            the arena; 0: no text layer). translate_text(html=True) also needs alignments=True.

    The arena (`arena_bytes`) is allocated once, here, for these limits; translating allocates
    nothing in the runtime. Calls on one Translator are serialised; use one Translator per
    thread for parallelism (they release the GIL).
    """

    def __init__(self, model_or_path: Union[Model, PathLike], threads: int = 1, max_batch: int = 16, *,
                 max_beam: Optional[int] = None, max_n_best: Optional[int] = None, max_source_tokens: int = 256,
                 max_target_tokens: int = 256, max_input_bytes: int = 16384, alignments: bool = False,
                 profiling: bool = False, profile_events: int = 0, max_text_bytes: int = 65536) -> None:
        second: Optional[Model] = None
        if isinstance(model_or_path, (list, tuple)):  # two models chained through a pivot language
            if len(model_or_path) != 2:
                raise InvalidArgumentError(f"a Translator takes one model or two (a pivot chain), not {len(model_or_path)}")
            first, other = model_or_path
            second = other if isinstance(other, Model) else Model(other)
            model_or_path = first
        self._model = model_or_path if isinstance(model_or_path, Model) else Model(model_or_path)
        self._second = second
        if max_beam is None:  # room for the model's recorded beam
            max_beam = max(4, self._model.decoding_defaults.get("beam_size", 4))
        limits = _limits(max_batch, max_source_tokens, max_target_tokens, max_beam, max_n_best, max_input_bytes,
                         alignments, threads, profiling, profile_events, max_text_bytes)
        self._impl = (_mtlite._Translator(self._model._impl, limits, second._impl) if second is not None
                      else _mtlite._Translator(self._model._impl, limits))
        self._limits: Dict[str, Any] = self._impl.limits()

    @property
    def model(self) -> Model:
        return self._model

    @property
    def arena_bytes(self) -> int:
        """Bytes of the arena allocated for the declared limits."""
        return self._impl.arena_bytes

    @property
    def limits(self) -> Dict[str, Any]:
        """The declared limits (a copy)."""
        return dict(self._limits)

    def _options(self, beam_size: Optional[int], n_best: int, return_scores: bool, return_alignments: bool,
                 max_length: Optional[int], max_length_ratio: Optional[float], max_length_offset: Optional[int],
                 length_penalty: Optional[float], alignment_layer: int, profile: bool, use_shortlist: bool) -> Any:
        # An option not given (None): the model's recorded decoding default (Model.decoding_defaults),
        # else the package's own (beam 4, max_target_tokens, no ratio cap, offset 10, penalty 1).
        d = self._model.decoding_defaults
        if beam_size is None:
            beam_size = d.get("beam_size", 4)
        if max_length is None:
            max_length = min(d.get("max_length", self._limits["max_target_tokens"]), self._limits["max_target_tokens"])
        if max_length_ratio is None:
            max_length_ratio = d.get("max_length_ratio", 0.0)
        if max_length_offset is None:
            max_length_offset = d.get("max_length_offset", 10)
        if length_penalty is None:
            length_penalty = d.get("length_penalty", 1.0)
        return _record(_mtlite._Options, beam_size=int(beam_size), max_length=int(max_length),
                       max_length_ratio=float(max_length_ratio), max_length_offset=int(max_length_offset),
                       length_penalty=float(length_penalty), n_best=int(n_best), return_scores=bool(return_scores),
                       return_alignments=bool(return_alignments), alignment_layer=int(alignment_layer),
                       profile=bool(profile), use_shortlist=bool(use_shortlist))

    def _run(self, chunk: List[bytes], start: int, options: Any) -> List[TranslationResult]:
        try:
            raw = self._impl.translate(chunk, options)
        except Error as e:
            # The runtime names the sentence within this call; name it within the caller's list.
            msg = str(e)
            m = _SENTENCE_PREFIX.match(msg)
            if m and start:
                raise type(e)(f"sentence {start + int(m.group(1))}: {msg[m.end():]}") from None
            raise
        out = []
        for hyps in raw:
            out.append(TranslationResult(
                hypotheses=[h[0] for h in hyps],
                ids=[h[1] for h in hyps],
                scores=[h[2] for h in hyps] if options.return_scores else None,
                alignments=[h[3] for h in hyps] if options.return_alignments else None))
        return out

    def translate_batch(self, texts: Sequence[Text], beam_size: Optional[int] = None, n_best: int = 1,
                        return_scores: bool = False, return_alignments: bool = False,
                        max_length: Optional[int] = None, *, max_length_ratio: Optional[float] = None,
                        max_length_offset: Optional[int] = None, length_penalty: Optional[float] = None,
                        alignment_layer: int = -1, profile: bool = False,
                        use_shortlist: bool = False) -> List[TranslationResult]:
        """Translates `texts` (str or UTF-8 bytes), max_batch sentences per runtime call, and
        returns the results in input order. A list longer than max_batch is sorted by source
        length (tokens; ties by position) before it is cut into calls, so that each call holds
        sentences of similar length (less padding, decoder rows that finish together); the
        results are the same as in any order (with use_shortlist, a call's candidates are its
        sentences' union, so the grouping can matter there).

        Args:
            beam_size: 1 = greedy; up to the translator's max_beam.
            Options left out (None) take the model's recorded decoding defaults
            (Model.decoding_defaults: what its release translates with), else beam_size 4,
            max_length max_target_tokens, max_length_ratio 0, max_length_offset 10,
            length_penalty 1.
            n_best: hypotheses per sentence (<= beam_size, <= max_n_best).
            return_scores: fill TranslationResult.scores.
            return_alignments: fill TranslationResult.alignments (Translator(alignments=True)).
            max_length: cap on generated tokens including </s> (default: max_target_tokens);
                </s> is forced at the cap, as HF's forced_eos_token_id does.
            max_length_ratio, max_length_offset: if ratio > 0, also cap at
                ratio * source tokens + offset.
            length_penalty: score = sum_logprob / length**length_penalty (HF's exponent; Marian's
                normalize for a model whose config says search 'marian').
            alignment_layer: decoder layer whose cross-attention is averaged (-1 = last).
            profile: record where the time goes (Translator(profiling=True)); read it with
                last_profile(), which describes the last runtime call (for a longer list, the
                max_batch longest sentences: the last call after sorting).
            use_shortlist: restrict the output vocabulary to the shortlist candidates of the
                sentences of each runtime call (the union of their lists; the model's shortlist
                section, made by `mtlite shortlist`, see Model.has_shortlist): faster on large
                vocabularies; a translation may then differ slightly from the one without, and
                depend on which sentences share its call. UnsupportedError when the model has
                no shortlist section.

        An empty input translates to "". Raises an mtlite.Error subclass (e.g.
        InvalidArgumentError for invalid UTF-8, OutOfRangeError for an input beyond the limits)
        whose message names the sentence; nothing is returned for the other sentences then.
        """
        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a sequence of str or bytes, not a single string")
        options = self._options(beam_size, n_best, return_scores, return_alignments, max_length,
                                max_length_ratio, max_length_offset, length_penalty, alignment_layer, profile,
                                use_shortlist)
        data = [_utf8(t, "texts[%d]" % i) for i, t in enumerate(texts)]
        return self._translate_sorted(data, options, self._limits["max_batch"])

    def _batch_options(self, beam_size: Optional[int] = None, n_best: int = 1, return_scores: bool = False,
                       return_alignments: bool = False, max_length: Optional[int] = None, *,
                       max_length_ratio: Optional[float] = None, max_length_offset: Optional[int] = None, length_penalty: Optional[float] = None,
                       alignment_layer: int = -1, profile: bool = False, use_shortlist: bool = False) -> Any:
        # translate_batch's options (same names and defaults) for translate_iterable / translate_file.
        return self._options(beam_size, n_best, return_scores, return_alignments, max_length, max_length_ratio,
                             max_length_offset, length_penalty, alignment_layer, profile, use_shortlist)

    def _length_order(self, data: List[bytes]) -> List[int]:
        # Indices of data by source length in tokens, ties by position (a stable sort).
        lengths = self._model._impl.source_lengths(data, self._limits["max_input_bytes"],
                                                   self._limits["max_source_tokens"])
        return sorted(range(len(data)), key=lengths.__getitem__)

    def _translate_sorted(self, data: List[bytes], options: Any, step: int, base: int = 0,
                          per_line_errors: bool = False) -> List[Any]:
        """Translates data in runtime calls of `step` sentences of similar length (sorted by
        source length when there is more than one call) and returns the results in input order.

        An error (e.g. invalid UTF-8) is raised as without sorting: the calls are redone in
        input order, so the error names the same sentence (its index in data + base). With
        per_line_errors, a failing call is retried sentence by sentence instead and a failing
        sentence's result is its Error (the runtime's "sentence 0: " prefix included)."""
        n = len(data)
        order = self._length_order(data) if n > step else list(range(n))
        out: List[Any] = [None] * n
        for k in range(0, n, step):
            idx = order[k:k + step]
            chunk = [data[i] for i in idx]
            try:
                results: List[Any] = self._run(chunk, 0, options)
            except Error:
                if not per_line_errors:
                    for j in range(0, n, step):  # raises the error the unsorted calls raise
                        self._run(data[j:j + step], base + j, options)
                    raise  # (not reached: the same inputs fail in any order)
                results = []
                for text in chunk:
                    try:
                        results.append(self._run([text], 0, options)[0])
                    except Error as e:
                        results.append(e)
            for i, r in zip(idx, results):
                out[i] = r
        return out

    def translate_text(self, text: Text, html: bool = False, split: str = "paragraph", *,
                       max_length_break: int = 128, language: str = "", beam_size: Optional[int] = None,
                       max_length: Optional[int] = None, max_length_ratio: Optional[float] = None,
                       max_length_offset: Optional[int] = None, length_penalty: Optional[float] = None,
                       use_shortlist: bool = False, quality: bool = False) -> TextTranslation:
        """Translates text, not a sentence: it is cut into sentences (split: "paragraph" -- a
        line is a paragraph --, "sentence" -- one per line --, "wrapped" -- blank lines separate
        paragraphs --, or "none"), each is translated and put back in place with the text's own
        whitespace between them. html=True: the text is HTML; the markup is kept (inline tags
        around the aligned target words, block tags in place; script, style and translate="no"
        untranslated); needs Translator(alignments=True). A sentence longer than
        max_length_break source tokens is translated in pieces. A sentence that fails alone is
        kept untranslated (TextSentence.error); the call raises only for errors of the whole text
        (more than max_text_bytes, bad options). language: the splitter's rules (default: the
        model's source language). quality=True: TextSentence.quality and .words, the words'
        scores (the mean log-probability of their tokens) and the sentence's (their mean). The
        other options are translate_batch's."""
        data = _utf8(text, "text")
        options = self._options(beam_size, 1, False, False, max_length, max_length_ratio, max_length_offset,
                                length_penalty, -1, False, use_shortlist)
        out, sents, failed, first_error, plain_src, plain_tgt, words = self._impl.translate_text(
            data, options, _split_mode(split), bool(html), int(max_length_break), str(language), bool(quality))
        src_chars, tgt_chars = _char_offsets(plain_src), _char_offsets(plain_tgt)
        all_words = [TextWord(plain_tgt[b:e].decode("utf-8", "replace"), tgt_chars[b], tgt_chars[e], score)
                     for b, e, score in words]
        sentences = [TextSentence(
            source=plain_src[sb:se].decode("utf-8", "replace"), translation=plain_tgt[tb:te].decode("utf-8", "replace"),
            source_start=src_chars[sb], source_end=src_chars[se], target_start=tgt_chars[tb],
            target_end=tgt_chars[te], error=err, pieces=pieces, score=score,
            quality=q if quality else None, words=all_words[fw:fw + nw] if quality else None)
            for sb, se, tb, te, err, pieces, score, q, fw, nw in sents]
        return TextTranslation(text=out.decode("utf-8", "replace"), sentences=sentences, failed=failed,
                               first_error=first_error, source_text=plain_src.decode("utf-8", "replace"),
                               plain_text=plain_tgt.decode("utf-8", "replace"))

    def translate_text_stream(self, text: Text, split: str = "paragraph", *, language: str = "",
                              **options: Any) -> Iterator[TextChunk]:
        """translate_text (plain text) one sentence at a time: yields TextChunk objects whose
        texts, joined, are translate_text(text, split=split).text -- the whitespace between
        sentences as it comes, each sentence as soon as it is translated."""
        if options.get("html"):
            raise InvalidArgumentError("translate_text_stream: html is not streamed; use translate_text")
        data = _utf8(text, "text")
        spans = _mtlite.split_sentences(data, _split_mode(split), str(language or self._model.config.get(
            "source_lang", "")))
        chars = _char_offsets(data)
        at = 0
        for b, e in spans:
            if b > at:
                yield TextChunk(data[at:b].decode("utf-8", "replace"))
            r = self.translate_text(data[b:e], split="none", language=language, **options)
            s = r.sentences[0] if r.sentences else None
            if s is not None:
                s = TextSentence(source=s.source, translation=s.translation, source_start=chars[b],
                                 source_end=chars[e], target_start=0, target_end=len(r.text), error=s.error,
                                 pieces=s.pieces, score=s.score)
            yield TextChunk(r.text, s)
            at = e
        if at < len(data):
            yield TextChunk(data[at:].decode("utf-8", "replace"))

    def translate(self, text: Text, **options: Any) -> str:
        """The best translation of one sentence (options as translate_batch: the model's decoding
        defaults, else beam_size=4)."""
        return self.translate_batch([text], **options)[0].text

    def translate_stream(self, text: Text, beam_size: Optional[int] = None, max_length: Optional[int] = None, *,
                         max_length_ratio: Optional[float] = None, max_length_offset: Optional[int] = None, length_penalty: Optional[float] = None,
                         profile: bool = False, use_shortlist: bool = False) -> Iterator[StreamEvent]:
        """Translates one sentence and yields StreamEvents while it is being translated: greedy
        (beam_size=1) after every generated token, beam search whenever the best running
        hypothesis changes, and at the end one event with final=True whose text and ids equal
        translate_batch([text], same options)[0]'s best hypothesis. Options as translate_batch.

        A generator: nothing runs until the first next(). The runtime call runs on a worker
        thread without the GIL and hands events over through a queue, so other Python threads
        keep running. Closing the generator early (break, close(), garbage collection) waits
        for the running call to finish (the runtime cannot cancel it: at most max_length decoder
        steps) and drops the rest of its events; no thread is left behind. Errors (e.g.
        InvalidArgumentError for invalid UTF-8) are raised by next().
        """
        options = self._options(beam_size, 1, False, False, max_length, max_length_ratio, max_length_offset,
                                length_penalty, -1, profile, use_shortlist)
        return _stream_events(self._impl.stream(_utf8(text, "text"), options))

    def last_profile(self) -> Optional[Dict[str, Any]]:
        """The profile of this translator's last runtime call (translate_batch(...,
        profile=True) or translate_stream(..., profile=True)), or None when that call was not
        profiled or failed:

        - "wall_ns" (the whole call), "steps" (decoder steps), "sentences", "threads",
          "dropped_events" (trace events that did not fit; the entries are still complete);
        - "entries": one dict per op and layer that ran: "op" (e.g.
          "decoder.cross_attn.attention"), "component" ("tokenizer", "encoder", "cross_kv",
          "decoder.self_attn", ...), "parent" (the op it nests in; "" for "translate"),
          "layer" (-1: not a per-layer op), "calls", "total_ns", "bytes" (weight or K/V bytes
          read), "macs" (multiply-accumulates), aggregated over the call on the calling thread;
        - "events": the trace, one dict per span: "op", "layer", "lane" (0: the calling thread,
          1..: pool workers), "depth" (nesting in its lane), "step" (decoder step or -1),
          "start_ns", "end_ns" (from the start of the call), "bytes", "macs", "m", "n", "k"
          (shape: rows x outputs x inputs, or rows x keys x head dim).
        """
        return self._impl.last_profile()

    def _window(self, batch_size: Optional[int], sort_window: Optional[int]) -> Tuple[int, int]:
        # (batch size, lines per window) of translate_iterable / translate_file.
        batch_size = self._limits["max_batch"] if batch_size is None else int(batch_size)
        if not 1 <= batch_size <= self._limits["max_batch"]:
            raise ValueError(f"batch_size must be in [1, max_batch={self._limits['max_batch']}], got {batch_size}")
        window = 64 * batch_size if sort_window is None else int(sort_window)
        if window < 0:
            raise ValueError(f"sort_window must be >= 0 (0 or 1: no sorting), got {sort_window}")
        return batch_size, max(window, batch_size)

    def translate_iterable(self, lines: Iterable[Text], batch_size: Optional[int] = None, *,
                           sort_window: Optional[int] = None, **options: Any) -> Iterator[TranslationResult]:
        """Translates an iterable of lines lazily (e.g. an open file), yielding one
        TranslationResult per line, in input order. A trailing "\\n" or "\\r\\n" of each line is
        removed. Options as translate_batch.

        sort_window lines (default 64 * batch_size; 0 or 1: batch_size) are read at a time and
        translated in runtime calls of batch_size lines (default: max_batch) of similar source
        length (as translate_batch sorts); their results are yielded, in input order, when the
        window is done. Sorting does not change any result. An error (e.g. invalid UTF-8) is
        raised as translate_batch raises it, naming the sentence by its 0-based position in
        `lines`; the results of its window are not yielded."""
        batch_size, window = self._window(batch_size, sort_window)
        opts = self._batch_options(**options)
        buf: List[bytes] = []
        base = 0
        for line in lines:
            buf.append(_utf8(_strip_newline(line), "lines[%d]" % (base + len(buf))))
            if len(buf) == window:
                yield from self._translate_sorted(buf, opts, batch_size, base)
                base += len(buf)
                buf = []
        if buf:
            yield from self._translate_sorted(buf, opts, batch_size, base)

    def translate_file(self, input_path: PathLike, output_path: PathLike, batch_size: Optional[int] = None, *,
                       on_error: str = "raise", sort_window: Optional[int] = None, **options: Any) -> Dict[str, Any]:
        """Translates a UTF-8 text file line by line into `output_path` (one best translation
        per line, "\\n"-terminated), like `mtlite translate`: windows of sort_window lines
        (default 64 * batch_size) translated sorted by length, written in input order, as
        translate_iterable does.

        on_error: "raise" (default) raises the first error (in input order), naming the
            1-based line, after writing the lines before it; "empty" writes an empty line for
            a line that fails and goes on, like the CLI.
        Returns {"lines": lines translated, "errors": [(line number, message), ...]}.
        Options as translate_batch (n_best must be 1)."""
        if on_error not in ("raise", "empty"):
            raise ValueError(f"on_error must be 'raise' or 'empty', got {on_error!r}")
        if options.get("n_best", 1) != 1:
            raise ValueError("translate_file writes one translation per line: n_best must be 1")
        batch_size, window = self._window(batch_size, sort_window)
        opts = self._batch_options(**options)
        errors: List[Tuple[int, str]] = []
        count = 0
        with open(input_path, "rb") as fin, open(output_path, "w", encoding="utf-8", newline="\n") as fout:
            def flush(buf: List[bytes], first_line: int) -> None:
                texts = []
                for j, r in enumerate(self._translate_sorted(buf, opts, batch_size, per_line_errors=True)):
                    if isinstance(r, Error):
                        msg = _SENTENCE_PREFIX.sub("", str(r), count=1)  # "sentence 0: " of a 1-line call
                        if on_error == "raise":
                            fout.write("".join(t + "\n" for t in texts))
                            raise type(r)(f"{os.fspath(input_path)}:{first_line + j}: {msg}") from None
                        errors.append((first_line + j, msg))
                        texts.append("")
                    else:
                        texts.append(r.text)
                fout.write("".join(t + "\n" for t in texts))

            buf: List[bytes] = []
            for raw in fin:
                buf.append(_strip_newline(raw))
                count += 1
                if len(buf) == window:
                    flush(buf, count - len(buf) + 1)
                    buf = []
            if buf:
                flush(buf, count - len(buf) + 1)
        return {"lines": count, "errors": errors}

    def score_batch(self, sources: Sequence[Text], targets: Sequence[Text]) -> List[ScoreResult]:
        """Teacher-forced log-probabilities of `targets` given `sources` (see ScoreResult).

        Both sides are tokenized as HF MarianTokenizer does (source / target tokenizer) and end
        with </s>. Raises OutOfRangeError when a side exceeds max_source_tokens /
        max_target_tokens, InvalidArgumentError for invalid UTF-8 or mismatched lengths."""
        if isinstance(sources, (str, bytes)) or isinstance(targets, (str, bytes)):
            raise TypeError("sources and targets must be sequences of str or bytes")
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
        src = [self._model.encode(s) for s in sources]
        tgt = [self._model.encode(t, target=True) for t in targets]
        log_probs = self._impl.score(src, tgt)
        return [ScoreResult(tokens=t, log_probs=lp, score=float(np.sum(lp, dtype=np.float64)))
                for t, lp in zip(tgt, log_probs)]

    def __repr__(self) -> str:
        return f"mtlite.Translator({self._model!r}, arena_bytes={self.arena_bytes}, limits={self._limits})"


def _stream_events(stream: Any) -> Iterator[StreamEvent]:
    # The generator of translate_stream: starts the worker on the first next(); `finally` runs
    # on exhaustion, on an error and on close() (GeneratorExit), and waits for the worker.
    try:
        stream.start()
        while True:
            event = stream.next()
            if event is None:
                return
            yield StreamEvent(*event)
    finally:
        stream.close()


def _strip_newline(line: Text) -> Text:
    if isinstance(line, bytes):
        return line[:-2] if line.endswith(b"\r\n") else line[:-1] if line.endswith(b"\n") else line
    return line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith("\n") else line


def convert(src: PathLike, out_path: PathLike, quantize: str = "int8", vocab: Optional[Sequence[PathLike]] = None,
            semantics: Optional[str] = None, decoding_defaults: str = "auto") -> Dict[str, Any]:
    """Converts a model into one `.mtlite` file, written atomically (as `mtlite convert`). src:

      * a HuggingFace MarianMT checkpoint directory (config.json, model.safetensors, source.spm,
        target.spm, vocab.json, ...);
      * a Marian model file (.npz, or Marian .bin: float32 or intgemm8) with `vocab`: one .spm
        (shared) or source and target .spm, optionally with Marian's .yml vocabulary (its ids);
      * a folder as OPUS-MT / Firefox Translations ship models (model file, vocabularies, an
        optional lex.* shortlist, which is built in).

    quantize: "int8" (per-output-channel weights; intgemm8 weights keep their own int8 values),
    "fp16" or "fp32". semantics: "marian" (Marian's layer-norm eps, sinusoid and zero start
    vector; the default for Marian input) or "hf" (as the transformers port computes; the default
    for HF directories); see docs/marian.md. decoding_defaults: which decoding settings of the
    input become the model's defaults ("auto": a Marian folder's decoder.yml / config*.yml;
    "record": also an HF generation_config.json; "none"). Returns {"path", "quantize", "file_bytes",
    "safetensors_bytes" (bytes of the checkpoint file), "kind" ("hf" or "marian"), "semantics",
    "vocab", "lex", "warnings", "decoding_defaults_recorded"}. Raises InvalidModelError / InvalidArgumentError /
    UnsupportedError (the message names the file and field, tensor or option) or IoError. Only in
    host builds (the converter is a host tool): elsewhere raises UnsupportedError."""
    if not _mtlite.HAS_CONVERTER:
        raise UnsupportedError("this build of mtlite has no converter (it is a host tool)")
    if quantize not in ("int8", "fp16", "fp32"):
        raise InvalidArgumentError(f"quantize must be 'int8', 'fp16' or 'fp32', got {quantize!r}")
    if semantics not in (None, "marian", "hf"):
        raise InvalidArgumentError(f"semantics must be 'marian' or 'hf', got {semantics!r}")
    if isinstance(vocab, (str, bytes, os.PathLike)):
        vocab = [vocab]
    vocabs = [os.fspath(v) for v in (vocab or [])]
    return _mtlite.convert(os.fspath(src), os.fspath(out_path), quantize, vocabs, semantics or "",
                           str(decoding_defaults))
