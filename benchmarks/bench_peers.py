"""Benchmark every dialeval path against the library a user would pick instead ("dialeval vs peers").

Each row times ours and its peer in the same process and run, on the same inputs, checks that
they give the same outputs, and reports the ratio peer time / our time (>= 1.0: we are at least
as fast). Timing: the calls of a row are interleaved (round r runs them in an order rotated by r,
``--repeats`` rounds; every contender is called once on a small input first, untimed, for its
one-time costs: model load, thread pools, oneDNN kernels); per call ``time.perf_counter`` wall
time and CPU time (``time.process_time`` of this process, all threads, plus the CPU time of
reaped child processes from ``os.times``: ours tokenizes large corpora in worker processes).
The table gives the medians; the ratio is that of the wall medians (the cheap corpus Vendi row runs
at least 7 rounds). The share of the machine's CPU that other processes took during each row
(``/proc/stat``) is reported: this 2-core machine is shared, and timings under contention are
noisy. ``--threads`` sets torch's thread count (default: torch's, one per core) and, through
threadpoolctl, that of numpy's and scipy's BLAS (OpenBLAS starts one thread per core whatever torch
uses: without the limit a "1 thread" run still multiplied the Vendi rows' matrices on two threads,
which under contention spin and wait for each other). On a busy machine
two OpenMP threads that wait for each other at every operation's barrier slow small forwards
down by an order of magnitude (one MiniLM ``encode`` of one text: 0.8 s with 2 threads, 0.09 s with
1, measured here at a load average of 3 on 2 cores), which inflates the ratios of the rows whose
peer runs one small forward per item (7, 8); ``--threads 1`` keeps such a run comparable.

Rows (peers are in the ``bench`` extra of setup.py; ``make bench`` installs ``diversity`` with
``--no-deps``):

1. NLI Diversity: pairs/s of ``dialeval.metrics.nli_diversity(sets, model=DIR, batch_size=B)``
   vs sentence-transformers ``CrossEncoder(DIR).predict(pairs, batch_size=B)`` vs the transformers
   ``pipeline("text-classification", model=DIR)`` on ``{"text", "text_pair"}`` dicts with
   ``batch_size=B``, vs the bare-forward ceiling: the same distinct pairs tokenized, sorted
   longest first and right-padded per batch of B *before* the timer, only the forwards timed under
   ``torch.inference_mode`` (ours as a fraction of it). Pairs: every ordered pair of the first
   ``--nli-sets`` sets of Tevet & Berant's ``dec_test_200_with_hds_resp_gen.csv`` (10 responses,
   90 pairs a set); the peers get all pairs, ours and the ceiling score each distinct pair once.
   Model: a seeded random ``RobertaForSequenceClassification`` of distilroberta-base's shape
   (6 x 768, 12 heads, FFN 3072, 50,265-token table, 3 labels) with a byte-level BPE trained on the
   file (as ``bench_nli.py``). Check: the same argmax class for every pair on all four paths, and
   its probability within 1e-4 of ours (softmax of the CrossEncoder's and the ceiling's logits,
   the pipeline's score); a random classifier may predict one class for every pair, so the
   probabilities are the informative part.
2. Embeddings: ``dialeval.metrics.engines.embedders.embed_unique(texts)`` vs
   ``SentenceTransformer.encode(texts, normalize_embeddings=True)`` on the first ``--embed-texts``
   DailyDialog++ responses (file order, duplicates kept) with the embedded all-MiniLM-L6-v2;
   and ``dialeval.metrics.sent_bert_diversity(sets)`` vs one ``encode`` of all the sets' texts plus
   the §5 reduction per set in numpy (negated mean cosine over unordered pairs), on
   ``--sets`` DailyDialog++ dev/test sets of 5-10 responses (5 positive responses plus 0-5
   adversarial ones). Checks: vectors within 1e-5, diversities within 1e-5.
3. Corpus lexical: ``dialeval.metrics.corpus_ngram_diversity(responses)`` at its defaults (NLTK
   casual tokenizer, Dist-1..3 and Ent-1..3) vs the PyPI ``diversity`` package's
   ``ngram_diversity_score(responses)`` at its defaults (whitespace tokens of the joined corpus,
   sum of distinct-1..4) on ``--lexical-responses`` DailyDialog++ strings (every context turn and
   response of ``data_positives``, ``dev`` and ``test``, cycled to the size): different
   definitions, so no equality; and ours computing the peer's exact definition
   (``corpus_ngram_diversity([" ".join(responses)], max_n=4, tokenizer=lambda s: s.split(" "))``,
   distinct-1..4 summed, rounded to 3 decimals) vs the peer: equal values. The peer's module
   file is loaded alone (``importlib``), never ``diversity/__init__.py`` (heavy optional imports).
4. Self-BLEU: ``dialeval.metrics.self_bleu(responses)`` vs the plain NLTK loop (casual tokens;
   ``sentence_bleu(all others, hypothesis, (1/3,) * 3, SmoothingFunction().method1)`` per
   response, the mean; Texygen's definition) on the first ``--self-bleu-responses`` DailyDialog++
   dev positive responses. Check: equal within 1e-12.
5. Vendi Score: corpus ``vendi_score_from_embeddings(X)`` vs ``vendi_score.vendi.score_dual(X)``
   on ``--vendi-rows`` x 384 seeded Gaussian float32 rows (equal within 1e-5 relative); set level,
   a loop of ``vendi_score_from_embeddings`` vs a loop of the package's ``vendi.score_X`` over
   ``--vendi-sets`` sets of 5-10 such rows (each set equal within 1e-5 relative).
6. BERTScore: ``dialeval.metrics.bertscore_diversity(sets, model=DIR, num_layers=4,
   rescale_with_baseline=False)`` vs ``bert_score.BERTScorer(model_type=DIR, num_layers=4)
   .score`` on every unordered pair of the first ``--bertscore-sets`` decTest sets, reduced the
   same way. ``DIR`` is the model of (1) declared ``RobertaTokenizer`` (roberta-large's
   conventions: prefix space, ``<s>``/``</s>`` weigh 0); ``bert_score.utils.sent_encode`` is
   patched for transformers 5 as ``tests/metrics/test_bertscore.py`` does. Check: F1 of every
   pair within 1e-5.
7. Sem-Ent fit: ``SemanticClusters.fit`` vs the MAUVE pipeline the Sem-Ent release uses
   (``bench_sem_ent.measure_naive``: one ``encode`` per text, PCA, KMeans) on ``--sem-ent-texts``
   texts of ``bench_sem_ent.load_texts``; check as in bench_sem_ent (same PCA dims, ARI >= 0.99).
8. Response selection: ``response_selection(..., scorer=CandidateScorer(DIR))`` vs one forward per
   candidate (``bench_selection.naive_nll_sums``' loop with the model loaded once, outside the
   timings) on ``--selection-questions`` DailyDialog++ dev questions with bench_selection's random
   distilgpt2-shaped model; check as in bench_selection (same selection, NLL within 1e-3).
9. Part-of-speech templates: ``pos_template_scores(texts)`` vs the ``diversity`` package's
   ``extract_patterns`` + ``template_rate`` + ``templates_per_token`` on the first
   ``--template-texts`` DailyDialog++ responses, both tagging with the tests' deterministic tagger
   (``bench_templates``); check: same templates, equal rate and per-text values.
10. Remote clique and chamfer distance: ``remote_clique_from_embeddings(X)`` and
   ``chamfer_distance_from_embeddings(X)`` vs the package's ``diversity.embedding.remote_clique`` /
   ``chamfer_dist`` on the first 1,000 and 10,000 DailyDialog++ responses (file order, duplicates
   kept; ``--smoke``: 200). ``X``: their all-MiniLM-L6-v2 vectors, computed once before the timers
   by our engine; the package's ``SentenceTransformer`` is replaced by a stub returning ``X``, so
   both sides time the distance part alone on the same float32 rows. Check: within 5e-4 + 1e-6 of
   the package's value (it rounds to 3 decimals).
11. Self-repetition: ``dialeval.metrics.self_repetition(texts)`` vs the package's
   ``self_repetition_score(texts)`` on the same 1,000 and 10,000 responses. Check: equal within 1e-12
   relative.
12. Homogenization (``--only homogenization``; not in the default run): ``homogenization(texts,
   measure)`` vs the ``diversity`` package's ``homogenization_score`` (its file loaded alone, round
   patched out, ``evaluate.load("bleu")`` answered by the copy vendored under tests/) on the first
   1,000 non-blank DailyDialog++ responses for ROUGE-L and BLEU (equal within 1e-12 relative, the
   peer's BLEU times n - 1) and on 100 of them for BERTScore on the tiny random RoBERTa at layer 4
   (the peer's evaluate bertscore played by a cached ``bert_score.BERTScorer``; within 1e-5).


The rows live in one script per comparison, each runnable alone (it then writes the section with
its own rows, as ``--only`` does): ``bench_peers_nli.py`` (1), ``bench_peers_embeddings.py`` (2),
``bench_peers_lexical.py`` (3, 4), ``bench_peers_vendi.py`` (5), ``bench_peers_bertscore.py`` (6),
``bench_peers_sem_ent.py`` (7), ``bench_peers_selection.py`` (8) and
``bench_peers_diversity_package.py`` (9-12); what they share is in ``_peers.py``.

Writes its section of ``benchmarks/RESULTS.md`` (``--smoke``: tiny models and sizes, a
temporary file unless ``--results`` is given). Exits 1 when any equality check fails.

Usage::

    .venv/bin/python benchmarks/bench_peers.py            # ~6-8 minutes on 2 idle cores
    .venv/bin/python benchmarks/bench_peers.py --smoke    # < 1 minute, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

import bench_peers_bertscore
import bench_peers_diversity_package
import bench_peers_embeddings
import bench_peers_lexical
import bench_peers_nli
import bench_peers_selection
import bench_peers_sem_ent
import bench_peers_vendi
from _peers import main

ROWS = {
    **bench_peers_nli.ROWS,
    **bench_peers_embeddings.ROWS,
    **bench_peers_lexical.ROWS,
    **bench_peers_vendi.ROWS,
    **bench_peers_bertscore.ROWS,
    **bench_peers_sem_ent.ROWS,
    **bench_peers_selection.ROWS,
    **bench_peers_diversity_package.ROWS,
}

if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
