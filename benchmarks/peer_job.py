"""The script a user would write with the peer libraries to score a JSONL file of response sets.

``bench_job.py`` times it against ``dialeval evaluate ... --metric lexical_diversity --metric
corpus_lexical_diversity --metric sent_bert --metric vendi``; it computes the same figures:

- per set, Tevet & Berant's averaged distinct-n and n-gram cosine diversity (n = 1..5), as their
  released code computes them (the ports in ``_released_code.py``);
- over all responses, the Sem-Ent paper's Dist-1..3, Ent-1..3 (log base 2) and LF-100, as a user
  would write them: NLTK's casual tokenizer once per response, then a ``Counter`` of n-grams per
  order (the release's calculators, ``_released_code.sement_*``, tokenize the corpus once each;
  this script does not, so that the peer side is the better script a user would write);
- one ``SentenceTransformer.encode`` of every response (unit rows), then per set the sent-BERT
  diversity (Tevet §5: the negated mean cosine over pairs) and ``vendi_score``'s ``vendi.score_X``.

Writes ``{"summary": {...}, "per_set": [{...}, ...], "seconds": {part: s}}`` to ``--output``.

Usage::

    python benchmarks/peer_job.py sets.jsonl -o peer.json --model DIR_OR_ID [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

import numpy as np
from _released_code import (
    similarity_to_diversity,
    tevet_averaged,
    tevet_cosine_diversity,
    tevet_distinct_ngrams,
)
from nltk.tokenize.casual import casual_tokenize
from sentence_transformers import SentenceTransformer
from vendi_score import vendi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input", help='JSONL, {"responses": [...]} per line')
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    seconds, lap = {}, time.perf_counter()

    def took(part: str) -> None:
        nonlocal lap
        seconds[part], lap = time.perf_counter() - lap, time.perf_counter()

    with open(args.input, encoding="utf-8") as handle:
        sets = [json.loads(line)["responses"] for line in handle if line.strip()]
    responses = [text for response_set in sets for text in response_set]
    took("read")

    per_set = [
        {
            "averaged_distinct_n": float(tevet_averaged(tevet_distinct_ngrams, response_set)),
            "ngram_cosine_diversity": float(tevet_averaged(tevet_cosine_diversity, response_set)),
        }
        for response_set in sets
    ]
    took("set lexical")
    tokens = [casual_tokenize(response) for response in responses]
    corpus = {}
    for k in (1, 2, 3):
        counts = Counter(gram for words in tokens for gram in zip(*(words[i:] for i in range(k))))
        total = sum(counts.values())
        shares = np.fromiter(counts.values(), dtype=np.float64) / total
        corpus[f"distinct_{k}"] = len(counts) / total
        corpus[f"entropy_{k}"] = float(-(shares * np.log2(shares)).sum())
        if k == 1:
            corpus["lf"] = sum(count for count in counts.values() if count <= 100) / total
    took("corpus lexical")

    model = SentenceTransformer(args.model, device=args.device)
    vectors = model.encode(
        responses, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True
    )
    took("embeddings")
    start = 0
    for row, response_set in zip(per_set, sets):
        rows = vectors[start : start + len(response_set)]
        start += len(response_set)
        row["sent_bert_diversity"] = similarity_to_diversity(rows)
        row["vendi_score"] = float(vendi.score_X(rows))
    took("sent-BERT and Vendi")

    summary = {key: float(np.mean([row[key] for row in per_set])) for key in per_set[0]} | corpus
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump({"summary": summary, "per_set": per_set, "seconds": seconds}, handle)


if __name__ == "__main__":
    main()
