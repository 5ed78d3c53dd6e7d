"""Compression ratio: hand-computed values, the `diversity` package's xz definition, edge cases."""

import gzip
import lzma

import evaluate
import pytest

from dialeval.metrics import evaluate_module_path
from dialeval.metrics.compression_ratio import (
    compression_ratio,
    compression_ratio_per_set,
    compression_ratio_scores,
)

TEXTS = [
    "I enjoy walking with my cute dog.",
    "I enjoy walking with my cute dog, really.",
    "Nothing much, you?",
]


def test_gzip_ratio_is_raw_over_one_compression():
    raw = " ".join(TEXTS).encode("utf-8")
    assert compression_ratio(TEXTS) == len(raw) / len(gzip.compress(raw, mtime=0))


def test_xz_ratio_matches_the_diversity_package_container(tmp_path):
    # diversity 0.3.1 writes the joined text with lzma.open(path, "wb") and divides the text file's
    # size by the compressed file's size.
    raw = " ".join(TEXTS).encode("utf-8")
    with lzma.open(tmp_path / "c.xz", "wb") as handle:
        handle.write(raw)
    expected = len(raw) / (tmp_path / "c.xz").stat().st_size
    assert compression_ratio(TEXTS, "xz") == pytest.approx(expected, rel=0, abs=1e-12)


def test_repetition_raises_the_ratio_and_unicode_counts_bytes():
    assert compression_ratio(["I don't know."] * 50) > 10 * compression_ratio(
        ["I don't know.", "We ate seafood."]
    )
    emoji = compression_ratio(["😀 مرحبا\u200b"] * 3)
    raw = " ".join(["😀 مرحبا\u200b"] * 3).encode("utf-8")
    assert emoji == len(raw) / len(gzip.compress(raw, mtime=0))


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="`algorithm`"):
        compression_ratio(TEXTS, "zip")
    with pytest.raises(ValueError, match="texts"):
        compression_ratio([])
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        compression_ratio(["a", ""])
    assert compression_ratio(["a", ""], allow_empty=True) > 0
    with pytest.raises(ValueError, match=r"response_sets\[0\]"):
        compression_ratio_per_set([[]])
    with pytest.raises(ValueError, match="mixes nesting"):
        compression_ratio_scores(["a", ["b"]])


def test_evaluate_module_both_scopes():
    module = evaluate.load(evaluate_module_path("compression_ratio"))
    corpus = module.compute(predictions=TEXTS)
    assert corpus == {
        "scope": "corpus",
        "compression_ratio": compression_ratio(TEXTS),
        "algorithm": "gzip",
        "num_responses": 3,
    }
    sets = module.compute(predictions=[TEXTS[:2], TEXTS[1:]], algorithm="xz")
    expected = compression_ratio_per_set([TEXTS[:2], TEXTS[1:]], "xz")
    assert [row["compression_ratio"] for row in sets["per_set"]] == expected
    assert sets["compression_ratio"] == pytest.approx(sum(expected) / 2)
