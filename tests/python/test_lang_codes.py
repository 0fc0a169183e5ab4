"""OPUS-MT language codes (">>deu<<") through the Python package on a converted random checkpoint
whose vocabulary holds them (make_random_checkpoint.py --preset multi), against the
python3-sentencepiece reimplementation of MarianTokenizer (tests/data/tokenizer/lang_codes.jsonl)."""
from conftest import run_cli


def test_encode_matches_marian_tokenizer(mtlite, multi_model, lang_code_cases):
    m = mtlite.Model(multi_model)
    eos = m.config["eos_id"]
    assert m.config["source_vocab_size"] == 8007
    with_code = 0
    for case in lang_code_cases:
        text = case["text"]
        assert m.encode(text, add_eos=False).tolist() == case["source_ids"], text
        assert m.encode(text, target=True, add_eos=False).tolist() == case["target_ids"], text
        assert m.decode(case["target_ids"]) == case["decoded"], text
        assert m.encode(text).tolist() == case["source_ids"] + [eos]
        with_code += bool(case["source_ids"]) and case["source_ids"][0] >= 8001
    assert with_code >= 10


def test_translation_depends_on_the_code_and_equals_cli(mtlite, cli, multi_model, lang_code_cases):
    tr = mtlite.Translator(multi_model, max_batch=8)
    texts = [c["text"] for c in lang_code_cases if "\n" not in c["text"] and "\r" not in c["text"]]
    got = [" ".join(map(str, r.ids[0])) for r in tr.translate_batch(texts, beam_size=2)]
    _, want, _ = run_cli(cli, ["translate", "-m", multi_model, "--beam", "2", "--batch", "8", "--output-ids", "-q"],
                         texts)
    assert got == want
    a, b, c = tr.translate_batch([">>deu<< A man.", ">>fra<< A man.", "A man."], beam_size=1)
    assert len({tuple(a.ids[0]), tuple(b.ids[0]), tuple(c.ids[0])}) == 3  # the code token is a real input
