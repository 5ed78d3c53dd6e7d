"""Sent-BERT diversity with the embedded all-MiniLM-L6-v2 (a real model, offline)."""

import numpy as np
import pytest

from dialeval.metrics.engines.embedders import embed_unique, load_sentence_model
from dialeval.metrics.similarity_diversity.sent_bert import sent_bert_diversity


def test_paraphrases_are_less_diverse_than_different_content():
    paraphrases = [
        "I stayed at home and relaxed.",
        "I just relaxed at home.",
        "Nothing much, relaxing at home.",
    ]
    different = [
        "I went hiking in the mountains.",
        "I fixed the kitchen sink.",
        "We ate seafood on the coast.",
    ]
    low, high = sent_bert_diversity([paraphrases, different])
    assert high > low + 0.2


def test_identical_responses_score_minus_one():
    assert sent_bert_diversity([["same words here"] * 4])[0] == pytest.approx(-1.0, abs=1e-5)


def test_equals_explicit_cosine_reduction():
    texts = ["a red car", "a blue boat", "the weather is nice", "a red car"]
    model = load_sentence_model()
    raw = model.encode(texts, convert_to_numpy=True).astype(np.float64)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    pairs = [unit[i] @ unit[j] for i in range(4) for j in range(i)]
    assert sent_bert_diversity([texts])[0] == pytest.approx(-np.mean(pairs), abs=1e-6)


def test_model_loaded_once_and_duplicates_embedded_once():
    assert load_sentence_model() is load_sentence_model()
    embeddings, index = embed_unique(["x y", "z", "x y"])
    assert embeddings.shape[0] == 2 and list(index) == [0, 1, 0]


def test_bad_input():
    with pytest.raises(ValueError, match="response_sets.*at least 2"):
        sent_bert_diversity([["lonely"]])
    with pytest.raises(ValueError, match="batch_size"):
        sent_bert_diversity([["a", "b"]], batch_size=0)
    with pytest.raises(ValueError, match="dtype"):
        load_sentence_model(dtype="int8")


@pytest.mark.parametrize("model", [None, 3, ["a model"]])
def test_a_model_that_is_neither_an_id_nor_an_encoder_is_a_value_error(model):
    """Found by tests/property: None or a number gave an AttributeError ('encode')."""
    with pytest.raises(ValueError, match="`model` must be a sentence-transformers id"):
        sent_bert_diversity([["a", "b"]], model)


def test_token_length_order_is_the_same_when_texts_are_tokenized_in_chunks(monkeypatch):
    """Lengths come from chunks of texts (bounded memory); the order must not depend on the chunk size."""
    from dialeval.metrics.engines import embedders

    model = load_sentence_model()
    texts = [" ".join(["word"] * (i * 7 % 11 + 1)) + f" {i}" for i in range(50)]
    lengths = [len(ids) for ids in model.tokenizer(texts)["input_ids"]]
    # stable: ties in input order
    expected = sorted(range(len(texts)), key=lambda i: lengths[i], reverse=True)
    whole = embedders.token_length_order(model, texts)
    monkeypatch.setattr(embedders, "LENGTH_CHUNK", 7)
    assert embedders.token_length_order(model, texts) == whole == expected
