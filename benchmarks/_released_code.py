"""Faithful ports of the papers' released code, the peers the benchmarks measure dialeval against.

Pure Python, numpy and NLTK (no dialeval import), so that ``peer_job.py`` (the script a user would
write with the peers) runs without loading dialeval:

- Sem-Ent (``hyperconnect/sem-ent``, ``codes/utils/dist.py``, ``ent.py``):
  Dist-k and Ent-k calculators, each tokenizing the corpus with NLTK's casual tokenizer and
  counting n-gram tuples with a ``set`` / ``Counter``.
- Tevet & Berant (``GuyTevet/diversity-eval``): averaged distinct-n and n-gram cosine diversity
  of a response set, and the §5 similarity-to-diversity reduction of sentence embeddings.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from nltk.tokenize.casual import casual_tokenize
from nltk.util import ngrams
from scipy.spatial.distance import cosine

# ==================================================================================================
# NAIVE REFERENCE 1 — Sem-Ent released code (hyperconnect/sem-ent, codes/utils/dist.py, ent.py,
# low_frequency.py).
# A faithful port: every calculator tokenizes the whole corpus itself with nltk's casual_tokenize,
# builds n-gram tuples with nltk.util.ngrams and counts them with a set / a Counter.
# (The released calculate() methods return (score, count); only the score is kept here.)
# ==================================================================================================


def sement_dist_k(instances: list[str], k: int) -> float:
    """``DistKCalculator(k)._calculate(instances)[0]``."""
    tokenized_responses = [casual_tokenize(instance) for instance in instances]
    num_all_ngrams = 0
    all_ngram_set = set()
    for tokens in tokenized_responses:
        token_ngrams = list(ngrams(tokens, k))
        num_all_ngrams += len(token_ngrams)
        all_ngram_set.update(token_ngrams)
    return len(all_ngram_set) / num_all_ngrams


def sement_ent_k(instances: list[str], k: int) -> float:
    """``EntKCalculator(k)._calculate(instances)[0]``."""
    tokenized_responses = [casual_tokenize(instance) for instance in instances]
    num_all_ngrams = 0
    all_ngram_list = []
    for tokens in tokenized_responses:
        token_ngrams = list(ngrams(tokens, k))
        num_all_ngrams += len(token_ngrams)
        all_ngram_list.extend(token_ngrams)
    counter = Counter(all_ngram_list)
    ent = 0
    for _, v in list(counter.items()):
        prob = float(v) / float(num_all_ngrams)
        ent -= prob * np.log2(prob)
    return ent


def sement_reference(instances: list[str]) -> dict[str, float]:
    """The six released calculators (Dist-1..3, Ent-1..3), each run separately as in the paper's code."""
    scores = {}
    for k in (1, 2, 3):
        scores[f"distinct_{k}"] = sement_dist_k(instances, k)
    for k in (1, 2, 3):
        scores[f"entropy_{k}"] = float(sement_ent_k(instances, k))
    return scores


# ==================================================================================================
# NAIVE REFERENCE 2 — Tevet & Berant released code (GuyTevet/diversity-eval: utils.py,
# diversity_metrics.py, similarity_metrics.py, metric.py), with the class machinery flattened into
# functions. As in the release, CosineSimilarity re-tokenizes both strings of every pair.
# ==================================================================================================


def tevet_lines_to_ngrams(lines: list[str], n: int = 3) -> list[list[tuple[str, ...]]]:
    """``utils.lines_to_ngrams``."""
    ngram_lists = []
    for s in lines:
        words = [e for e in s.replace(".", "").replace("\n", "").split(" ") if e != ""]
        ngram_lists.append([tuple(words[i : i + n]) for i in range(len(words) - n + 1)])
    return ngram_lists


def tevet_distinct_ngrams(response_set: list[str], n: int) -> float:
    """``DistinctNgrams({'n': n})(response_set)``."""
    ngram_lists = tevet_lines_to_ngrams(response_set, n=n)
    flat = [item for sublist in ngram_lists for item in sublist]
    return len(set(flat)) / len(flat) if len(flat) > 0 else 0.0


def tevet_ngram_cosine_distance(ngram1: list, ngram2: list) -> float:
    """``CosineSimilarity.ngram_cosine_distance``."""

    def intersection(lst1, lst2):
        return list(set(lst1) & set(lst2))

    if len(intersection(ngram1, ngram2)) == 0:  # "acceleration step"
        return 1.0
    n_space = list(set().union(ngram1, ngram2))
    vectors = []
    for n_gram in [ngram1, ngram2]:
        vectors.append([n_gram.count(e) for e in n_space])
    return cosine(vectors[0], vectors[1])


def tevet_cosine_similarity(str1: str, str2: str, n: int) -> float:
    """``CosineSimilarity({'n': n})(str1, str2)``."""
    ngram_lists = tevet_lines_to_ngrams([str1, str2], n)
    return 1 - tevet_ngram_cosine_distance(ngram_lists[0], ngram_lists[1])


def tevet_cosine_diversity(response_set: list[str], n: int) -> float:
    """``CosineSimilarity2Diversity({'n': n})(response_set)`` (Similarity2DiversityMetric)."""
    similarity_list = []
    for i in range(len(response_set)):
        for j in range(i):
            similarity_list.append(tevet_cosine_similarity(response_set[i], response_set[j], n))
    return -np.mean(similarity_list)


def tevet_averaged(ngram_metric, response_set: list[str], n_min: int = 1, n_max: int = 5) -> float:
    """``AveragedNgramDiversityMetric``: the mean of ``ngram_metric`` over n = n_min..n_max."""
    return np.mean([ngram_metric(response_set, n) for n in range(n_min, n_max + 1)])


def similarity_to_diversity(vectors: np.ndarray) -> float:
    """Tevet & Berant's §5: the negated mean similarity over unordered pairs, from unit rows (their
    sent-BERT diversity when the rows are sentence embeddings)."""
    similarity = vectors @ vectors.T
    upper = np.triu_indices(len(vectors), k=1)
    return -float(similarity[upper].mean())
