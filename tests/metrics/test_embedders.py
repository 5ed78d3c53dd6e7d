"""Sem-Ent's embedders (Han et al. 2022, §3.1): each equals a one-text-at-a-time reference."""

import json
import time
from typing import ClassVar

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from dialeval.hub import EMBEDDED_SENTENCE_MODEL, ModelNotAvailableError
from dialeval.metrics.engines.embedders import (
    DEFAULT_EMBEDDER_KIND,
    KINDS,
    PAPER_EMBEDDER,
    LastTokenEmbedder,
    MeanPoolingEmbedder,
    SentenceTransformerEmbedder,
    TextEmbedder,
    embedder_from_identity,
    load_embedder,
    load_sentence_model,
)

TEXTS = [
    "hi there!",
    "i'm doing well, thanks for asking. how about you?",
    "yes",
    "that sounds nice. was the weather good? i love sunny days, do you?",
    "okay, see you later",
    "what are you going to cook?",
    "a man is playing a guitar on the stage.",
]
# Longer than any max_length used below, and than the tiny models' 128 positions when untruncated.
LONG_TEXT = " ".join(["i think i will visit my parents and cook dinner with them."] * 20)


@pytest.fixture(scope="module")
def gpt2_reference(tiny_gpt2_path):
    """The released code's featurizer for one text: no padding, no mask, final layer, last token."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_path)
    model = AutoModel.from_pretrained(tiny_gpt2_path).eval()

    def embed_one(text: str, max_length: int = 256, layer: int = -1) -> np.ndarray:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"][-max_length:]
        with torch.inference_mode():
            outputs = model(input_ids=torch.tensor([ids]), output_hidden_states=True)
        return outputs.hidden_states[layer][0, -1].numpy()

    embed_one.tokenizer = tokenizer
    return embed_one


@pytest.fixture(scope="module")
def roberta_reference(tiny_roberta_nli_path):
    tokenizer = AutoTokenizer.from_pretrained(tiny_roberta_nli_path)
    model = AutoModel.from_pretrained(tiny_roberta_nli_path).eval()

    def embed_one(text: str) -> np.ndarray:
        encoded = tokenizer(text, return_tensors="pt")
        with torch.inference_mode():
            return (
                model(**encoded, output_hidden_states=True).hidden_states[-1][0].mean(dim=0).numpy()
            )

    return embed_one


# ---------------------------------------------------------------- the paper's last-token embedder


@pytest.mark.parametrize("batch_size", [1, 2, 7])
def test_last_token_equals_one_text_at_a_time(tiny_gpt2_path, gpt2_reference, batch_size):
    embedder = LastTokenEmbedder(tiny_gpt2_path, max_length=64, batch_size=batch_size, device="cpu")
    vectors = embedder.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 32)
    expected = np.stack([gpt2_reference(text) for text in TEXTS])
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    # lengths really differ
    assert len({len(gpt2_reference.tokenizer(t)["input_ids"]) for t in TEXTS}) > 3


def test_last_token_other_layer(tiny_gpt2_path, gpt2_reference):
    vectors = LastTokenEmbedder(tiny_gpt2_path, max_length=64, layer=1, device="cpu").embed(
        TEXTS[:3]
    )
    np.testing.assert_allclose(
        vectors, np.stack([gpt2_reference(t, layer=1) for t in TEXTS[:3]]), atol=1e-5
    )


def test_left_truncation_keeps_the_last_tokens(tiny_gpt2_path, gpt2_reference):
    tokenizer = gpt2_reference.tokenizer
    ids = tokenizer(LONG_TEXT, add_special_tokens=False)["input_ids"]
    assert len(ids) > 150
    embedder = LastTokenEmbedder(tiny_gpt2_path, max_length=20, device="cpu")
    long_vector, short_vector = embedder.embed([LONG_TEXT, "yes"])
    tail = torch.tensor([ids[-20:]])
    with torch.inference_mode():
        expected = embedder.loaded.model(input_ids=tail, output_hidden_states=True).hidden_states[
            -1
        ][0, -1]
    np.testing.assert_allclose(long_vector, expected.numpy(), atol=1e-5)
    np.testing.assert_allclose(short_vector, gpt2_reference("yes"), atol=1e-5)


def test_max_length_beyond_the_position_table_is_refused(tiny_gpt2_path):
    with pytest.raises(ValueError, match="max_length.*128 positions"):
        LastTokenEmbedder(tiny_gpt2_path, device="cpu").embed(["hi"])  # default 256 > tiny's 128
    with pytest.raises(ValueError, match="layer"):
        LastTokenEmbedder(tiny_gpt2_path, max_length=64, layer=5, device="cpu").embed(["hi"])


def test_duplicates_run_once_and_come_back_in_input_order(
    tiny_gpt2_path, gpt2_reference, monkeypatch
):
    embedder = LastTokenEmbedder(tiny_gpt2_path, max_length=64, batch_size=2, device="cpu")
    model = embedder.loaded.model
    rows_fed = []
    original_forward = model.forward

    def counting_forward(*args, **kwargs):
        rows_fed.append(kwargs["input_ids"].shape[0])
        return original_forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", counting_forward)
    texts = ["yes", "hi there!", "yes", "okay, see you later", "hi there!", "yes"]
    done = []
    vectors = embedder.embed(texts, progress=done.append)
    assert sum(rows_fed) == 3 and rows_fed == [2, 1]
    assert done == [2, 1]
    np.testing.assert_allclose(vectors, np.stack([gpt2_reference(t) for t in texts]), atol=1e-5)
    np.testing.assert_array_equal(vectors[0], vectors[2])
    np.testing.assert_array_equal(vectors[1], vectors[4])


# ---------------------------------------------------------------- alternatives (§6.3)


@pytest.mark.parametrize("batch_size", [1, 3])
def test_mean_pooling_equals_one_text_at_a_time(
    tiny_roberta_nli_path, roberta_reference, batch_size
):
    embedder = MeanPoolingEmbedder(
        tiny_roberta_nli_path, max_length=100, batch_size=batch_size, device="cpu"
    )
    vectors = embedder.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(vectors, np.stack([roberta_reference(t) for t in TEXTS]), atol=1e-5)


def test_mean_pooling_truncates_on_the_right(tiny_roberta_nli_path):
    embedder = MeanPoolingEmbedder(tiny_roberta_nli_path, max_length=12, device="cpu")
    tokenizer, model = embedder.loaded.tokenizer, embedder.loaded.model
    ids = tokenizer(LONG_TEXT)["input_ids"]
    head = ids[:11] + [ids[-1]]  # first tokens, then the closing </s> the tokenizer keeps
    with torch.inference_mode():
        expected = (
            model(input_ids=torch.tensor([head]), output_hidden_states=True)
            .hidden_states[-1][0]
            .mean(0)
        )
    np.testing.assert_allclose(embedder.embed([LONG_TEXT])[0], expected.numpy(), atol=1e-5)


def test_sentence_transformer_equals_encode():
    texts = [
        "I stayed at home and relaxed.",
        "We ate seafood on the coast.",
        "ok",
        "I stayed at home and relaxed.",
    ]
    vectors = SentenceTransformerEmbedder(batch_size=2, device="cpu").embed(texts)
    expected = load_sentence_model(device="cpu").encode(
        texts, convert_to_numpy=True, normalize_embeddings=False
    )
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    np.testing.assert_allclose(vectors, expected, atol=1e-5)


# ---------------------------------------------------------------- identity and factories


def test_identity_round_trips_through_json(tiny_gpt2_path, tiny_roberta_nli_path):
    embedders = [
        LastTokenEmbedder(tiny_gpt2_path, max_length=64, device="cpu"),
        MeanPoolingEmbedder(tiny_roberta_nli_path, max_length=100, device="cpu"),
        SentenceTransformerEmbedder(device="cpu"),
    ]
    for embedder in embedders:
        assert isinstance(embedder, TextEmbedder)
        identity = json.loads(json.dumps(embedder.identity()))
        assert identity == embedder.identity()
        rebuilt = embedder_from_identity(identity, batch_size=3, device="cpu")
        assert type(rebuilt) is type(embedder) and rebuilt.identity() == identity
        np.testing.assert_allclose(rebuilt.embed(TEXTS[:4]), embedder.embed(TEXTS[:4]), atol=1e-5)


def test_identity_contents(tiny_gpt2_path):
    embedder = LastTokenEmbedder(
        tiny_gpt2_path, max_length=64, batch_size=5, device="cpu", dtype="float32"
    )
    assert embedder.identity() == {**PAPER_EMBEDDER, "model": tiny_gpt2_path, "max_length": 64}
    assert LastTokenEmbedder(tiny_gpt2_path, max_length=32).identity() != embedder.identity()
    assert SentenceTransformerEmbedder().identity() == {
        "kind": "sentence_transformers",
        "model": EMBEDDED_SENTENCE_MODEL,
        "normalize": False,
    }


def test_load_embedder(tiny_gpt2_path, tiny_roberta_nli_path):
    assert DEFAULT_EMBEDDER_KIND == "sentence_transformers"
    assert load_embedder().identity()["model"] == EMBEDDED_SENTENCE_MODEL
    assert load_embedder("last_token", tiny_gpt2_path, max_length=8).identity()["max_length"] == 8
    assert isinstance(load_embedder("mean_pooling", tiny_roberta_nli_path), MeanPoolingEmbedder)
    with pytest.raises(ValueError, match="kind.*last_token.*mean_pooling.*sentence_transformers"):
        load_embedder("bag_of_words")
    with pytest.raises(ValueError, match="normalize"):
        load_embedder("last_token", tiny_gpt2_path, normalize=True)


def test_embedder_from_identity_refuses_what_it_cannot_reproduce(tiny_gpt2_path):
    identity = LastTokenEmbedder(tiny_gpt2_path, max_length=64).identity()
    with pytest.raises(ValueError, match="truncation_side"):
        embedder_from_identity({**identity, "truncation_side": "right"})
    with pytest.raises(ValueError, match="pooling"):
        embedder_from_identity({**identity, "pooling": "max"})
    with pytest.raises(ValueError, match="kind"):
        embedder_from_identity({**identity, "kind": "tf_idf"})
    with pytest.raises(ValueError, match="max_length"):
        embedder_from_identity(identity, max_length=32)


def test_the_loader_is_shared(tiny_gpt2_path):
    first = LastTokenEmbedder(tiny_gpt2_path, max_length=64, batch_size=1, device="cpu")
    second = LastTokenEmbedder(tiny_gpt2_path, max_length=32, batch_size=8, device="cpu")
    assert first.loaded is second.loaded and first.loaded.model is second.loaded.model
    assert first.loaded.model.training is False
    third = SentenceTransformerEmbedder(device="cpu", batch_size=1)
    assert third.loaded is SentenceTransformerEmbedder(device="cpu").loaded


# ---------------------------------------------------------------- errors


def test_bad_texts(tiny_gpt2_path):
    last_token = LastTokenEmbedder(tiny_gpt2_path, max_length=64, device="cpu")
    for embedder in (last_token, SentenceTransformerEmbedder(device="cpu")):
        with pytest.raises(ValueError, match="`texts` is empty"):
            embedder.embed([])
        with pytest.raises(ValueError, match=r"`texts\[1\]` must be a string"):
            embedder.embed(["fine", 3])
        with pytest.raises(ValueError, match=r"`texts\[2\]` is empty"):
            embedder.embed(["fine", "also fine", ""])
        with pytest.raises(ValueError, match=r"`texts\[0\]` is empty or whitespace"):
            embedder.embed(["  \n"])
        with pytest.raises(ValueError, match="`texts` must be a list"):
            embedder.embed("a single string")


def test_bad_settings(tiny_gpt2_path, tiny_roberta_nli_path):
    with pytest.raises(ValueError, match="dtype"):
        LastTokenEmbedder(tiny_gpt2_path, dtype="int8")
    with pytest.raises(ValueError, match="dtype"):
        SentenceTransformerEmbedder(dtype="float64")
    with pytest.raises(ValueError, match="batch_size"):
        MeanPoolingEmbedder(tiny_roberta_nli_path, batch_size=0)
    with pytest.raises(ValueError, match="max_length"):
        LastTokenEmbedder(tiny_gpt2_path, max_length=True)
    with pytest.raises(ValueError, match="model"):
        LastTokenEmbedder(model="")
    assert set(KINDS) == {"last_token", "mean_pooling", "sentence_transformers"}


def test_missing_model_fails_fast(tmp_path):
    start = time.perf_counter()
    with pytest.raises(ValueError, match="no such folder"):
        LastTokenEmbedder(str(tmp_path / "no-such-model"))
    with pytest.raises(ModelNotAvailableError, match="hf download"):
        load_embedder("mean_pooling", "nobody/no-such-model-anywhere")
    with pytest.raises(ValueError, match="no such folder"):
        SentenceTransformerEmbedder(str(tmp_path / "absent"))
    assert time.perf_counter() - start < 5


def test_caching_embedder_embeds_each_text_once_across_calls():
    from dialeval.metrics.engines.embedders import CachingEmbedder

    class Counting:
        def __init__(self):
            self.seen = []

        def identity(self):
            return {"kind": "counting", "model": "m"}

        def embed(self, texts):
            self.seen.extend(texts)
            return np.array([[len(t), t.count("a")] for t in texts], dtype=np.float32)

    inner = Counting()
    cached = CachingEmbedder(inner)
    first = cached.embed(["aa", "b", "aa"])
    second = cached.embed(["b", "ccc", "aa"])
    assert inner.seen == ["aa", "b", "ccc"]
    np.testing.assert_array_equal(first, [[2, 2], [1, 0], [2, 2]])
    np.testing.assert_array_equal(second, [[1, 0], [3, 0], [2, 2]])
    assert cached.identity() == inner.identity()
    with pytest.raises(ValueError, match="`embedder`"):
        CachingEmbedder("minilm")


def test_embed_unique_batches_by_token_length_not_characters():
    """encode() sorts by characters; batches sorted by tokens pad less (benchmarks/RESULTS.md row 2)."""
    import numpy as np

    from dialeval.metrics.engines.embedders import embed_unique

    class WordTokenEncoder:  # one token per word, so characters and tokens order the texts differently
        max_seq_length = None
        batches: ClassVar[list] = []

        def tokenizer(self, texts, **kwargs):
            return {"input_ids": [text.split() for text in texts]}

        def encode(self, texts, **kwargs):
            self.batches.append(list(texts))
            return np.array([[float(len(text.split())), 1.0] for text in texts]) / np.sqrt(2)

    encoder = WordTokenEncoder()
    texts = ["a b c d", "extraordinarily", "x y", "a b c d", "p q r"]
    embeddings, index = embed_unique(texts, encoder, batch_size=2)
    assert encoder.batches == [["a b c d", "p q r"], ["x y", "extraordinarily"]]
    # rows come back in input order, L2-normalized (the fake encoder's rows are not)
    assert [round(float(embeddings[i][0] / embeddings[i][1]), 5) for i in index] == [
        4.0,
        1.0,
        2.0,
        4.0,
        3.0,
    ]
    assert np.allclose(np.linalg.norm(embeddings, axis=1), 1.0)
