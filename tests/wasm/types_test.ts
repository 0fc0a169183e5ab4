// Compiles against web/mtlite.d.ts (tsc --noEmit --strict; scripts/wasm_test.sh): the declarations
// are valid TypeScript and describe the API as tests/wasm/api_test.mjs uses it.
import { Hypothesis, Mtlite, MtliteError, Profile, hasSimd128 } from '../../web/mtlite.js';

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
