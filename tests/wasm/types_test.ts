// Compiles against web/mtlite.d.ts (tsc --noEmit --strict; scripts/wasm_test.sh): the declarations
// are valid TypeScript and describe the API as tests/wasm/api_test.mjs uses it.
import { AsyncTranslator, Hypothesis, Model, ModelConfig, Mtlite, MtliteError, Profile, TextResult, Tokens, TranslatorOptions,
  hasSimd128 } from '../../web/mtlite.js';

export async function translateOne(bytes: Uint8Array, text: string): Promise<string> {
  const mt = await Mtlite.load({ simd: hasSimd128(), env: { MTLITE_KERNELS: 'reference' } });
  const model = mt.loadModel(bytes, { verify: true });
  const tr = model.createTranslator({ maxBatch: 2, maxBeam: 4, maxNBest: 2, alignments: true, profiling: true });
  try {
    const results = tr.translate([text, new Uint8Array([65])], {
      beam: 4, nBest: 2, scores: true, alignments: true, profile: true,
      onToken: (e) => console.log(e.sentence, e.ids.length, e.text, e.final),
    });
    const h: Hypothesis = results[0].hypotheses[0];
    const p: Profile = tr.profile();
    const ms: number = p.wallNs / 1e6;
    return `${h.text} ${h.score ?? 0} ${h.alignment?.length ?? 0} ${ms} ${model.config.dModel} ${mt.kernelTable}`;
  } catch (e) {
    if (e instanceof MtliteError) return e.code === 'BUSY' ? 'busy' : `${e.code} ${e.status} ${e.reason}`;
    throw e;
  } finally {
    tr.dispose();
    model.dispose();
  }
}

export async function translateTexts(bytes: Uint8Array, html: string): Promise<string> {
  const mt = await Mtlite.load();
  const model = mt.loadModel(bytes);
  const tr = model.createTranslator({ alignments: true, maxTextBytes: 4096 });
  const r: TextResult = tr.translateText(html, { html: true, split: 'wrapped', maxLengthBreak: 64, language: 'en', beam: 2 });
  const t: Tokens = model.tokenize(r.sentences[0]?.source ?? '');
  const low = r.sentences.filter((s) => s.error === null && (s.words ?? []).some((w) => w.score < -1));
  tr.translateText('A dog.', { quality: true });
  const at = await AsyncTranslator.create({ model: bytes, limits: { alignments: true } });
  try {
    const a: TextResult = await at.translateText(html, { html: true, key: 'page' });
    const [s] = await at.translate(['A dog.'], { key: 1, onToken: (e) => console.log(e.text) });
    const p: Tokens = await at.tokenize('A dog.');
    return `${r.text} ${r.plainTarget ?? ''} ${t.pieces.join(' ')} ${low.length} ${a.failed} ${s.hypotheses[0].text} ${p.ids.length}`;
  } catch (e) {
    if (e instanceof MtliteError && e.code === 'CANCELLED') return 'cancelled';
    throw e;
  } finally {
    at.dispose();
    tr.dispose();
    model.dispose();
  }
}

// Two models chained through a pivot language (de-en, then en-fr).
export async function translateViaPivot(first: Uint8Array, second: Uint8Array, text: string): Promise<string> {
  const mt = await Mtlite.load();
  const a = mt.loadModel(first), b = mt.loadModel(second);
  const options: TranslatorOptions = { maxBeam: 2, alignments: true, pivot: b };
  const tr = a.createTranslator(options);
  const chained: Model | null = tr.pivot;
  const at = await AsyncTranslator.create({ model: first, pivot: second, limits: { maxBeam: 2 } });
  try {
    const [r] = tr.translate([text], { beam: 2 });
    const h: TextResult = tr.translateText(`<p>${text}</p>`, { html: true });
    const [s] = await at.translate([text], { beam: 2 });
    const c: ModelConfig | null = at.pivotConfig;
    return `${r.hypotheses[0].text} ${h.text} ${s.hypotheses[0].text} ${chained === b} ${c?.dModel ?? 0}`;
  } finally {
    at.dispose();
    tr.dispose();
    a.dispose();
    b.dispose();
  }
}
