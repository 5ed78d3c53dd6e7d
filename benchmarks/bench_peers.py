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

Writes its section of ``benchmarks/RESULTS.md`` (``--smoke``: tiny models and sizes, a
temporary file unless ``--results`` is given). Exits 1 when any equality check fails.

Usage::

    .venv/bin/python benchmarks/bench_peers.py            # ~6-8 minutes on 2 idle cores
    .venv/bin/python benchmarks/bench_peers.py --smoke    # < 1 minute, not a measurement
"""

from __future__ import annotations

import os

for _name in (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import importlib.util
import json
import logging
import platform
import shlex
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import transformers
from _released_code import similarity_to_diversity
from _report import (
    DAILYDIALOG,
    DATA_ROOT,
    RESULTS_PATH,
    Contention,
    Timing,
    dailydialog_records,
    details_head,
    interleaved,
    log,
    package_versions,
    write_section,
)

from dialeval.hub import resolve_model_path
from dialeval.io import read_tevet_csv

DECTEST_FILE = (
    DATA_ROOT / "tevet-diversity-eval" / "raw" / "decTest" / "dec_test_200_with_hds_resp_gen.csv"
)
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SCRIPT = "bench_peers"
LABELS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}  # the library's canonical order
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
PROBABILITY_ATOL = 1e-4  # padding and batch shapes change float32 summation order
VECTOR_ATOL = 1e-5
DIVERSITY_ATOL = 1e-5
VENDI_RTOL = 1e-5
BERTSCORE_ATOL = 1e-5
SELF_BLEU_ATOL = 1e-12
BERTSCORE_LAYERS = 4  # of 6: about roberta-large's layer 17 of 24, bert_score's choice

FULL = {
    "repeats": 3,
    "nli_sets": 6,
    "nli_batch_size": 32,
    "nli_shape": "distilroberta",
    "embed_texts": 10_000,
    "sets": 400,
    "lexical_responses": 100_000,
    "self_bleu_responses": 500,
    "vendi_rows": 50_000,
    "vendi_sets": 2_000,
    "bertscore_sets": 20,
    "sem_ent_texts": 1_000,
    "selection_questions": 60,
    "template_texts": 1_000,
}
SMOKE = {
    "repeats": 2,
    "nli_sets": 2,
    "nli_batch_size": 32,
    "nli_shape": "tiny",
    "embed_texts": 200,
    "sets": 20,
    "lexical_responses": 5_000,
    "self_bleu_responses": 60,
    "vendi_rows": 2_000,
    "vendi_sets": 100,
    "bertscore_sets": 3,
    "sem_ent_texts": 60,
    "selection_questions": 4,
    "template_texts": 100,
}
SHAPES = {
    "distilroberta": {
        "hidden_size": 768,
        "num_hidden_layers": 6,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 50265,
    },
    "tiny": {
        "hidden_size": 32,
        "num_hidden_layers": 6,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "vocab_size": None,
    },
}


@dataclass
class Row:
    key: str
    path: str
    data: str
    ours: str
    peer: str
    ours_timing: Timing
    peer_timing: Timing
    equal: bool | None  # None: different definitions, nothing to compare
    equal_detail: str
    ratio_kind: str = "peer"  # "peer": peer/ours; "ceiling": ours as a fraction of the ceiling
    others: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.peer_timing.wall_median / self.ours_timing.wall_median


# ---------------------------------------------------------------- data


def dailydialog_responses(records: list[dict]) -> list[str]:
    """Every ``*_responses`` string, file order, duplicates kept."""
    return [
        text
        for record in records
        for key in record
        if key.endswith("_responses")
        for text in record[key]
    ]


def dailydialog_strings(records: list[dict]) -> list[str]:
    """Every string of the records: context turns and responses."""
    out = []
    for record in records:
        for value in record.values():
            if isinstance(value, list):
                out += [text for text in value if isinstance(text, str)]
    return out


def dailydialog_sets(count: int) -> list[list[str]]:
    """Sets of 5-10: the 5 positive responses of a dev/test record plus 0-5 of its adversarial ones."""
    records = dailydialog_records(("dev.json", "test.json"))
    sets = []
    for index, record in enumerate(records[:count]):
        extra = [text for text in record.get("adversarial_negative_responses", []) if text.strip()][
            : index % 6
        ]
        sets.append([text for text in record["positive_responses"] if text.strip()] + extra)
    return [s for s in sets if len(s) >= 2]


def cycled(texts: list[str], size: int) -> list[str]:
    return (texts * (size // len(texts) + 1))[:size]


# ---------------------------------------------------------------- models


def train_bpe(texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=30000,
            special_tokens=SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", 2), ("<s>", 0), add_prefix_space=False
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        model_max_length=512,
        bos_token="<s>",
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
    )


def build_classifier(directory: Path, texts: list[str], shape: str) -> str:
    """A seeded random RoBERTa NLI classifier of ``SHAPES[shape]`` and a BPE trained on ``texts``."""
    from transformers import RobertaConfig, RobertaForSequenceClassification

    tokenizer = train_bpe(texts)
    dims = dict(SHAPES[shape])
    dims["vocab_size"] = dims["vocab_size"] or len(tokenizer)
    config = RobertaConfig(
        max_position_embeddings=514,
        num_labels=3,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
        initializer_range=0.02,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **dims,
    )
    torch.manual_seed(0)
    RobertaForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def with_roberta_tokenizer_class(source: str, directory: Path) -> str:
    """A copy of ``source`` whose tokenizer is declared ``RobertaTokenizer`` (roberta-large's conventions)."""
    shutil.copytree(source, directory)
    config_file = directory / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["tokenizer_class"] = "RobertaTokenizer"
    config_file.write_text(json.dumps(config))
    return str(directory)


def shape_text(path: str) -> str:
    config = transformers.AutoConfig.from_pretrained(path)
    ffn = (
        getattr(config, "intermediate_size", None)
        or getattr(config, "n_inner", None)
        or 4 * config.hidden_size
    )
    return (
        f"{config.num_hidden_layers} x {config.hidden_size}, {config.num_attention_heads} heads, "
        f"FFN {ffn}, {config.vocab_size:,}-token table"
    )


# ---------------------------------------------------------------- 1. NLI


def ordered_pair_list(response_sets: list[list[str]]) -> list[tuple[str, str]]:
    return [
        (s[i], s[j]) for s in response_sets for i in range(len(s)) for j in range(len(s)) if i != j
    ]


def prepare_ceiling(path: str, pairs: list[tuple[str, str]], batch_size: int):
    """Distinct pairs tokenized, sorted longest first, right-padded per batch (before any timer)."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    unique: dict[tuple[str, str], int] = {}
    rows = np.array([unique.setdefault(pair, len(unique)) for pair in pairs], dtype=np.int64)
    distinct = list(unique)
    encoded = tokenizer(
        [a for a, _ in distinct], [b for _, b in distinct], truncation=True, verbose=False
    )
    features = [{key: values[i] for key, values in encoded.items()} for i in range(len(distinct))]
    order = sorted(range(len(distinct)), key=lambda i: len(features[i]["input_ids"]), reverse=True)
    batches, members_of = [], []
    for start in range(0, len(order), batch_size):
        members = order[start : start + batch_size]
        batches.append(
            tokenizer.pad([features[i] for i in members], padding_side="right", return_tensors="pt")
        )
        members_of.append(members)
    return batches, members_of, rows, len(distinct)


def bench_nli(
    path: str, response_sets: list[list[str]], batch_size: int, repeats: int
) -> list[Row]:
    from sentence_transformers import CrossEncoder

    from dialeval.metrics import nli_diversity

    pairs = ordered_pair_list(response_sets)
    log(f"NLI: {len(response_sets)} sets, {len(pairs)} ordered pairs")
    cross_encoder = CrossEncoder(path, device="cpu")
    classify = transformers.pipeline("text-classification", model=path, device="cpu")
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path).eval()
    batches, members_of, rows, num_distinct = prepare_ceiling(path, pairs, batch_size)
    pipeline_inputs = [{"text": a, "text_pair": b} for a, b in pairs]
    label_index = {name.lower(): index for index, name in LABELS.items()}

    def ours():
        return nli_diversity(
            response_sets, model=path, device="cpu", batch_size=batch_size, return_matrices=True
        )

    def cross():
        return cross_encoder.predict(pairs, batch_size=batch_size, show_progress_bar=False)

    def pipe():
        return classify(pipeline_inputs, batch_size=batch_size)

    def ceiling():
        return ceiling_forward(model, batches)

    first = response_sets[:1]
    first_pairs = ordered_pair_list(first)
    warmups = {
        "ours": lambda: nli_diversity(first, model=path, device="cpu", batch_size=batch_size),
        "CrossEncoder": lambda: cross_encoder.predict(
            first_pairs, batch_size=batch_size, show_progress_bar=False
        ),
        "pipeline": lambda: classify(
            [{"text": a, "text_pair": b} for a, b in first_pairs], batch_size=batch_size
        ),
        "ceiling": lambda: ceiling_forward(model, batches[:1] + batches[-1:]),
    }
    with Contention() as contention:
        timings = interleaved(
            {"ours": ours, "CrossEncoder": cross, "pipeline": pipe, "ceiling": ceiling},
            repeats,
            warmups,
        )

    # Every path as (argmax class, probability of that class) per ordered pair, in `pairs` order.
    matrices = timings["ours"].value["matrices"]
    ours_probabilities = np.concatenate(
        [m.probabilities[~np.eye(m.size, dtype=bool)] for m in matrices]
    )
    predicted = ours_probabilities.argmax(axis=1)
    ceiling_logits = np.empty((num_distinct, 3))
    for members, logits in zip(members_of, timings["ceiling"].value):
        ceiling_logits[members] = logits.double().numpy()
    outputs = {}
    for name, logits in (
        ("CrossEncoder", np.asarray(timings["CrossEncoder"].value, dtype=np.float64)),
        ("ceiling", ceiling_logits[rows]),
    ):
        probabilities = torch.from_numpy(logits).softmax(-1).numpy()
        classes = probabilities.argmax(axis=1)
        outputs[name] = (classes, probabilities[np.arange(len(classes)), classes])
    outputs["pipeline"] = (
        np.array([label_index[out["label"].lower()] for out in timings["pipeline"].value]),
        np.array([out["score"] for out in timings["pipeline"].value]),
    )
    checks = {}
    for name, (classes, top) in outputs.items():
        same = float((classes == predicted).mean())
        difference = float(np.abs(top - ours_probabilities[np.arange(len(classes)), classes]).max())
        checks[name] = (
            same == 1.0 and difference <= PROBABILITY_ATOL,
            f"same argmax class on {same:.1%} of pairs, max |Δp| of it {difference:.1e} (tol. {PROBABILITY_ATOL:.0e})",
        )
    counts = np.bincount(predicted, minlength=3).tolist()
    data = (
        f"{len(response_sets)} decTest sets x 90 = {len(pairs):,} ordered pairs ({num_distinct:,} distinct), "
        f"batch {batch_size}"
    )
    rate = len(pairs) / timings["ours"].wall_median
    out = []
    for name, peer in (
        ("CrossEncoder", "sentence-transformers `CrossEncoder(DIR).predict(pairs)`"),
        ("pipeline", 'transformers `pipeline("text-classification", model=DIR)`'),
    ):
        out.append(
            Row(
                key=f"nli_{name.lower()}",
                path="1. NLI Diversity",
                data=data,
                ours=f"`nli_diversity` ({rate:.0f} pairs/s)",
                peer=f"{peer} ({len(pairs) / timings[name].wall_median:.0f} pairs/s)",
                ours_timing=timings["ours"],
                peer_timing=timings[name],
                equal=checks[name][0],
                equal_detail=checks[name][1],
                others=contention.share,
            )
        )
    out.append(
        Row(
            key="nli_ceiling",
            path="1. NLI Diversity",
            data=data,
            ours=f"`nli_diversity` ({rate:.0f} pairs/s)",
            peer=f"bare forwards on pre-padded batches ({len(pairs) / timings['ceiling'].wall_median:.0f} pairs/s)",
            ours_timing=timings["ours"],
            peer_timing=timings["ceiling"],
            equal=checks["ceiling"][0],
            equal_detail=checks["ceiling"][1],
            ratio_kind="ceiling",
            others=contention.share,
            notes=[f"predicted classes (contradiction, neutral, entailment): {counts}"],
        )
    )
    return out


def ceiling_forward(model, batches):
    with torch.inference_mode():
        return [model(**batch).logits for batch in batches]


# ---------------------------------------------------------------- 2. embeddings


def bench_embeddings(texts: list[str], response_sets: list[list[str]], repeats: int) -> list[Row]:
    from sentence_transformers import SentenceTransformer

    from dialeval.metrics import sent_bert_diversity
    from dialeval.metrics.engines.embedders import embed_unique

    path = str(resolve_model_path(MINILM))
    model = SentenceTransformer(path, device="cpu")
    encode = {
        "batch_size": 64,
        "normalize_embeddings": True,
        "convert_to_numpy": True,
        "show_progress_bar": False,
    }
    warm = texts[:64]
    warmups = {
        "ours": lambda: embed_unique(warm, path, 64, "cpu"),
        "peer": lambda: model.encode(warm, **encode),
    }
    log(f"Embeddings: {len(texts):,} texts ({len(set(texts)):,} distinct)")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: embed_unique(texts, path, 64, "cpu"),
                "peer": lambda: model.encode(texts, **encode),
            },
            repeats,
            warmups,
        )
    unique, index = timings["ours"].value
    difference = float(np.abs(unique[index] - timings["peer"].value).max())
    rows = [
        Row(
            key="embed_unique",
            path="2. Embeddings",
            data=f"{len(texts):,} DailyDialog++ responses ({len(set(texts)):,} distinct), "
            "all-MiniLM-L6-v2, batch 64",
            ours="`embed_unique(texts)`",
            peer="`SentenceTransformer.encode(texts)`",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= VECTOR_ATOL,
            equal_detail=f"max abs diff {difference:.1e} (tol. {VECTOR_ATOL:.0e})",
            others=contention.share,
        )
    ]

    flat = [text for response_set in response_sets for text in response_set]

    def peer_sets():
        vectors = model.encode(flat, **encode)
        out, start = [], 0
        for response_set in response_sets:
            out.append(similarity_to_diversity(vectors[start : start + len(response_set)]))
            start += len(response_set)
        return out

    log(
        f"Sent-BERT diversity: {len(response_sets)} sets, {len(flat):,} texts ({len(set(flat)):,} distinct)"
    )
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: sent_bert_diversity(response_sets, model=path, device="cpu"),
                "peer": peer_sets,
            },
            repeats,
            {
                "ours": lambda: sent_bert_diversity(response_sets[:2], model=path, device="cpu"),
                "peer": lambda: model.encode(flat[:10], **encode),
            },
        )
    difference = float(
        np.abs(np.array(timings["ours"].value) - np.array(timings["peer"].value)).max()
    )
    rows.append(
        Row(
            key="sent_bert",
            path="2. Sent-BERT diversity",
            data=f"{len(response_sets)} DailyDialog++ sets of 5-10 ({len(flat):,} "
            f"texts, {len(set(flat)):,} distinct), all-MiniLM-L6-v2",
            ours="`sent_bert_diversity(sets)`",
            peer="one `encode` of all texts + numpy §5 reduction per set",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= DIVERSITY_ATOL,
            equal_detail=f"max abs diff {difference:.1e} (tol. {DIVERSITY_ATOL:.0e})",
            others=contention.share,
        )
    )
    return rows


# ---------------------------------------------------------------- 3. lexical


def load_peer_module(name: str):
    """``diversity/<name>.py`` alone, without running ``diversity/__init__.py``; None when not installed."""
    spec = importlib.util.find_spec("diversity")
    if spec is None or spec.origin is None:
        return None
    location = Path(spec.origin).parent / f"{name}.py"
    module_spec = importlib.util.spec_from_file_location(f"peer_{name}", location)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def load_peer_ngram_diversity():
    """``diversity/ngram_diversity.py``'s ``ngram_diversity_score``, or None."""
    module = load_peer_module("ngram_diversity")
    return None if module is None else module.ngram_diversity_score


def whitespace_tokens(text: str) -> list[str]:
    """The peer's tokens: ``split(" ")``, empty strings kept."""
    return text.split(" ")


def bench_lexical(responses: list[str], repeats: int) -> list[Row]:
    from dialeval.metrics import corpus_ngram_diversity

    peer = load_peer_ngram_diversity()
    if peer is None:
        log(
            "lexical: the `diversity` package is not installed (pip install --no-deps diversity==0.3.1); skipped"
        )
        return []
    data = f"{len(responses):,} DailyDialog++ strings ({len(set(responses)):,} distinct)"
    log(f"Lexical: {data}")
    warm = responses[:200]
    with Contention() as contention:
        timings = interleaved(
            {"ours": lambda: corpus_ngram_diversity(responses), "peer": lambda: peer(responses)},
            repeats,
            {"ours": lambda: corpus_ngram_diversity(warm), "peer": lambda: peer(warm)},
        )
    ours_value = timings["ours"].value
    rows = [
        Row(
            key="lexical_casual",
            path="3. Corpus Dist-n / Ent-n, defaults",
            data=data,
            ours="`corpus_ngram_diversity(responses)` (casual tokens, Dist/Ent-1..3)",
            peer="`diversity.ngram_diversity_score(responses)` (whitespace tokens, sum of distinct-1..4)",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=None,
            equal_detail=f"different definitions (ours: {ours_value['num_tokens']:,} casual tokens; the peer's value is row 3b's)",
            others=contention.share,
        )
    ]

    def ours_peer_definition():
        result = corpus_ngram_diversity([" ".join(responses)], max_n=4, tokenizer=whitespace_tokens)
        return sum(result[f"distinct_{n}"] for n in range(1, 5))

    with Contention() as contention:
        timings = interleaved(
            {"ours": ours_peer_definition, "peer": lambda: peer(responses)},
            repeats,
            {
                "ours": lambda: corpus_ngram_diversity(
                    [" ".join(warm)], max_n=4, tokenizer=whitespace_tokens
                ),
                "peer": lambda: peer(warm),
            },
        )
    ours_sum, peer_value = timings["ours"].value, timings["peer"].value
    rows.append(
        Row(
            key="lexical_whitespace",
            path="3b. Corpus distinct-n, the peer's definition",
            data=data,
            ours='`corpus_ngram_diversity([" ".join(responses)], max_n=4, tokenizer=split(" "))`, distinct-1..4 summed',
            peer="`diversity.ngram_diversity_score(responses)`",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=round(ours_sum, 3) == peer_value,
            equal_detail=f"ours {ours_sum:.6f} → {round(ours_sum, 3)}, peer {peer_value}",
            others=contention.share,
        )
    )
    return rows


# ---------------------------------------------------------------- 4. Self-BLEU


def nltk_self_bleu(responses: list[str], max_n: int = 3) -> float:
    from nltk.tokenize.casual import casual_tokenize
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    tokens = [casual_tokenize(text) for text in responses]
    smoothing, weights = SmoothingFunction().method1, (1 / max_n,) * max_n
    scores = [
        sentence_bleu(
            tokens[:i] + tokens[i + 1 :], tokens[i], weights, smoothing_function=smoothing
        )
        for i in range(len(tokens))
    ]
    return sum(scores) / len(scores)


def bench_self_bleu(responses: list[str], repeats: int) -> list[Row]:
    from dialeval.metrics import self_bleu

    log(f"Self-BLEU: {len(responses)} responses")
    warm = responses[:20]
    with Contention() as contention:
        timings = interleaved(
            {"ours": lambda: self_bleu(responses), "peer": lambda: nltk_self_bleu(responses)},
            repeats,
            {"ours": lambda: self_bleu(warm), "peer": lambda: nltk_self_bleu(warm)},
        )
    difference = abs(timings["ours"].value - timings["peer"].value)
    return [
        Row(
            key="self_bleu",
            path="4. Self-BLEU-3",
            data=f"{len(responses)} DailyDialog++ dev responses",
            ours="`self_bleu(responses)`",
            peer="NLTK `sentence_bleu` of each response against all others",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= SELF_BLEU_ATOL,
            equal_detail=f"|diff| {difference:.1e} (value {timings['ours'].value:.6f})",
            others=contention.share,
        )
    ]


# ---------------------------------------------------------------- 5. Vendi


def bench_vendi(num_rows: int, num_sets: int, repeats: int) -> list[Row]:
    from vendi_score import vendi

    from dialeval.metrics import vendi_score_from_embeddings

    rng = np.random.default_rng(0)
    embeddings = rng.standard_normal((num_rows, 384)).astype(np.float32)
    log(f"Vendi: corpus {num_rows:,} x 384 float32")
    small = embeddings[:500]
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: vendi_score_from_embeddings(embeddings)["vendi_score"],
                "peer": lambda: float(vendi.score_dual(embeddings)),
            },
            max(repeats, 7),
            {
                "ours": lambda: vendi_score_from_embeddings(small),
                "peer": lambda: vendi.score_dual(small),
            },
        )
    ours, peer = timings["ours"].value, timings["peer"].value
    relative = abs(ours - peer) / abs(peer)
    rows = [
        Row(
            key="vendi_corpus",
            path="5. Vendi Score, corpus",
            data=f"{num_rows:,} x 384 float32 Gaussian rows",
            ours="`vendi_score_from_embeddings(X)`",
            peer="`vendi_score.vendi.score_dual(X)`",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=relative <= VENDI_RTOL,
            equal_detail=f"rel. diff {relative:.1e} (value {ours:.4f})",
            others=contention.share,
        )
    ]

    sizes = rng.integers(5, 11, size=num_sets)
    sets = [rng.standard_normal((int(size), 384)).astype(np.float32) for size in sizes]
    log(f"Vendi: {num_sets:,} sets of 5-10")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: [vendi_score_from_embeddings(x)["vendi_score"] for x in sets],
                "peer": lambda: [float(vendi.score_X(x)) for x in sets],
            },
            repeats,
            {
                "ours": lambda: vendi_score_from_embeddings(sets[0]),
                "peer": lambda: vendi.score_X(sets[0]),
            },
        )
    ours, peer = np.array(timings["ours"].value), np.array(timings["peer"].value)
    relative = float((np.abs(ours - peer) / np.abs(peer)).max())
    rows.append(
        Row(
            key="vendi_sets",
            path="5. Vendi Score, per set",
            data=f"{num_sets:,} sets of 5-10 Gaussian float32 384-d rows",
            ours="`vendi_score_from_embeddings(x)` per set",
            peer="`vendi_score.vendi.score_X(x)` per set",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=relative <= VENDI_RTOL,
            equal_detail=f"max rel. diff {relative:.1e}",
            others=contention.share,
        )
    )
    return rows


# ---------------------------------------------------------------- 6. BERTScore


def reference_sent_encode(tokenizer, sent):
    """bert_score 0.3.13's ``sent_encode`` as on transformers 4 (tests/metrics/test_bertscore.py's patch)."""
    from transformers import GPT2Tokenizer, RobertaTokenizer

    sent = sent.strip()
    if sent == "":
        return tokenizer.encode("", add_special_tokens=True)
    if isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)) and not sent[0].isspace():
        sent = " " + sent
    return tokenizer.encode(
        sent, add_special_tokens=True, max_length=tokenizer.model_max_length, truncation=True
    )


def bench_bertscore(path: str, response_sets: list[list[str]], repeats: int) -> list[Row]:
    import bert_score

    from dialeval.metrics import bertscore_diversity
    from dialeval.metrics.similarity_diversity import bertscore_similarity_matrices

    bert_score.utils.sent_encode = (
        reference_sent_encode  # score() reaches it through bert_score.utils' globals
    )
    scorer = bert_score.BERTScorer(
        model_type=path, num_layers=BERTSCORE_LAYERS, batch_size=64, device="cpu"
    )
    options = {
        "model": path,
        "num_layers": BERTSCORE_LAYERS,
        "rescale_with_baseline": False,
        "batch_size": 64,
        "device": "cpu",
    }
    pairs = [
        (s, i, j)
        for s, responses in enumerate(response_sets)
        for i in range(len(responses))
        for j in range(i + 1, len(responses))
    ]
    candidates = [response_sets[s][i] for s, i, _ in pairs]
    references = [response_sets[s][j] for s, _, j in pairs]

    def peer():
        _, _, f1 = scorer.score(candidates, references, batch_size=64)
        f1 = f1.double().numpy()
        out, start = [], 0
        for responses in response_sets:
            count = len(responses) * (len(responses) - 1) // 2
            out.append(-float(f1[start : start + count].mean()))
            start += count
        return out, f1

    log(f"BERTScore: {len(response_sets)} sets, {len(pairs):,} unordered pairs")
    warm = [response_sets[0][:3]]
    with Contention() as contention:
        timings = interleaved(
            {"ours": lambda: bertscore_diversity(response_sets, **options), "peer": peer},
            repeats,
            {
                "ours": lambda: bertscore_diversity(warm, **options),
                "peer": lambda: scorer.score(warm[0][:2], warm[0][1:3]),
            },
        )
    peer_diversity, peer_f1 = timings["peer"].value
    timings["peer"].value = peer_diversity
    matrices = bertscore_similarity_matrices(response_sets, **{k: v for k, v in options.items()})
    ours_f1 = np.array([matrices[s][i, j] for s, i, j in pairs])
    difference = float(np.abs(ours_f1 - peer_f1).max())
    diversity_difference = float(
        np.abs(np.array(timings["ours"].value) - np.array(peer_diversity)).max()
    )
    return [
        Row(
            key="bertscore",
            path="6. BERTScore diversity",
            data=f"{len(response_sets)} decTest sets x 45 = {len(pairs):,} "
            f"unordered pairs, layer {BERTSCORE_LAYERS}, batch 64",
            ours="`bertscore_diversity(sets, rescale_with_baseline=False)`",
            peer="`bert_score.BERTScorer(...).score(cands, refs)` on every unordered pair (sent_encode patched)",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= BERTSCORE_ATOL,
            equal_detail=f"max abs F1 diff {difference:.1e} (tol. {BERTSCORE_ATOL:.0e}); diversities {diversity_difference:.1e}",
            others=contention.share,
        )
    ]


# ---------------------------------------------------------------- 7. Sem-Ent


class KeepingEmbedder:
    """Delegates to ``inner`` and keeps the last vectors (for the check, untimed use)."""

    def __init__(self, inner):
        self.inner = inner
        self.vectors = None

    def identity(self) -> dict:
        return self.inner.identity()

    def embed(self, texts):
        self.vectors = self.inner.embed(texts)
        return self.vectors


def bench_sem_ent(size: int, repeats: int) -> list[Row]:
    import bench_sem_ent as reference
    from sklearn.metrics import adjusted_rand_score

    from dialeval.metrics.engines.embedders import load_embedder
    from dialeval.metrics.sem_ent.clusters import SemanticClusters

    texts, _ = reference.load_texts(DATA_ROOT, seed=0)
    sample, warm = texts[:size], texts[-min(100, size) :]
    embedder = load_embedder("sentence_transformers", batch_size=64)
    keeping = KeepingEmbedder(embedder)
    fit_options = {
        "num_clusters": reference.NUM_CLUSTERS,
        "seed": reference.SEED,
        "n_init": reference.N_INIT,
        "max_iter": reference.MAX_ITER,
    }
    log(f"Sem-Ent: {size:,} texts")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: SemanticClusters.fit(sample, keeping, **fit_options),
                "peer": lambda: reference.measure_naive(sample, embedder.loaded),
            },
            repeats,
            {
                "ours": lambda: SemanticClusters.fit(warm, embedder, **fit_options),
                "peer": lambda: reference.measure_naive(
                    warm[: reference.NUM_CLUSTERS], embedder.loaded
                ),
            },
        )
    clusters, naive = timings["ours"].value, timings["peer"].value
    labels = clusters.assign_embeddings(keeping.vectors)
    ari = float(adjusted_rand_score(naive["labels"], labels))
    same_dims = clusters.settings["pca_dims"] == naive["pca_dims"]
    timings["peer"].value = None
    return [
        Row(
            key="sem_ent",
            path="7. Sem-Ent cluster fit",
            data=f"{size:,} distinct DailyDialog++ / Tevet texts, all-MiniLM-L6-v2, "
            f"k = {reference.NUM_CLUSTERS}",
            ours="`SemanticClusters.fit(texts, embedder)`",
            peer="MAUVE pipeline (`encode` per text, PCA, KMeans; `bench_sem_ent.measure_naive`)",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=same_dims and ari >= reference.ARI_TARGET,
            equal_detail=f"same PCA dims: {same_dims}; ARI {ari:.4f} (>= {reference.ARI_TARGET})",
            others=contention.share,
        )
    ]


# ---------------------------------------------------------------- 8. response selection


def one_forward_per_candidate(tokenizer, model, contexts, candidates) -> list[list[float]]:
    """``bench_selection.naive_nll_sums`` with the model loaded once, outside the timing."""
    separator = tokenizer.eos_token
    out = []
    with torch.no_grad():
        for turns, options in zip(contexts, candidates):
            prefix = tokenizer(separator.join(turns) + separator, add_special_tokens=False)[
                "input_ids"
            ]
            row = []
            for option in options:
                target = tokenizer(option, add_special_tokens=False)["input_ids"] + [
                    tokenizer.eos_token_id
                ]
                labels = torch.tensor([[-100] * len(prefix) + target])
                row.append(
                    float(model(input_ids=torch.tensor([prefix + target]), labels=labels).loss)
                    * len(target)
                )
            out.append(row)
    return out


def build_tiny_gpt2(directory: Path, texts: list[str]) -> str:
    """A 2 x 32 GPT-2 with bench_selection's tokenizer recipe (for --smoke)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<|endoftext|>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=2000,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        model_max_length=1024,
        eos_token="<|endoftext|>",
        bos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=1024,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def bench_selection(workdir: Path, count: int, repeats: int, tiny: bool) -> list[Row]:
    import bench_selection as reference

    from dialeval.metrics.engines.lm_scorer import CandidateScorer
    from dialeval.metrics.response_selection import response_selection

    contexts, candidates, labels = reference.questions_from_dailydialog_pp(
        reference.DATA_FILE, count
    )
    texts = [text for turns, options in zip(contexts, candidates) for text in (*turns, *options)]
    if tiny:
        path = build_tiny_gpt2(workdir / "tiny-gpt2", texts)
    else:
        path = reference.build_model(workdir / "distilgpt2-shape", texts)
    shape = shape_text(path)
    scorer = CandidateScorer(path, device="cpu", batch_size=16)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModelForCausalLM.from_pretrained(path).eval()
    log(f"Selection: {count} questions x 4 candidates")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: response_selection(contexts, candidates, labels, scorer=scorer),
                "peer": lambda: one_forward_per_candidate(tokenizer, model, contexts, candidates),
            },
            repeats,
            {
                "ours": lambda: response_selection(
                    contexts[:2], candidates[:2], labels[:2], scorer=scorer
                ),
                "peer": lambda: one_forward_per_candidate(
                    tokenizer, model, contexts[:2], candidates[:2]
                ),
            },
        )
    ours, naive = timings["ours"].value, timings["peer"].value
    difference = max(
        float(np.abs(np.array(row["nll_sums"]) - np.array(ref)).max())
        for row, ref in zip(ours["per_question"], naive)
    )
    same = all(
        row["selected"] == int(np.argmin(ref)) for row, ref in zip(ours["per_question"], naive)
    )
    return [
        Row(
            key="selection",
            path="8. Response selection",
            data=f"{count} DailyDialog++ dev questions x 4 candidates, random "
            f"GPT-2 ({shape}), batch 16",
            ours="`response_selection(..., scorer=CandidateScorer(DIR))`",
            peer="one `tokenizer()` + forward (`labels=`) per candidate",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=same and difference <= reference.LOSS_TOLERANCE,
            equal_detail=f"same selection: {same}; max |Δ NLL| {difference:.1e} (tol. {reference.LOSS_TOLERANCE:.0e})",
            others=contention.share,
        )
    ]


# ---------------------------------------------------------------- 9-10. embedding distances, self-repetition

DISTANCE_SIZES = (1_000, 10_000)
SMOKE_DISTANCE_SIZES = (200,)
PEER_ROUNDING = 5e-4 + 1e-6  # the package rounds to 3 decimals
SELF_REPETITION_RTOL = 1e-12


class PrecomputedVectors:
    """Stands in for the package's ``SentenceTransformer``: returns the rows computed before the timers."""

    rows: np.ndarray | None = None

    def __init__(self, model):
        self.model = model

    def encode(self, data, batch_size=64, show_progress_bar=False):
        assert len(data) == len(PrecomputedVectors.rows)
        return PrecomputedVectors.rows


def bench_embedding_distances(
    responses: list[str], sizes: tuple[int, ...], repeats: int
) -> list[Row]:
    from dialeval.metrics import chamfer_distance_from_embeddings, remote_clique_from_embeddings
    from dialeval.metrics.engines.embedders import sentence_vectors

    peer = load_peer_module("embedding")
    if peer is None:
        log(
            "embedding_distances: the `diversity` package is not installed (pip install --no-deps diversity==0.3.1); skipped"
        )
        return []
    peer.SentenceTransformer = PrecomputedVectors
    path = str(resolve_model_path(MINILM))
    rows = []
    for size in sizes:
        texts = responses[:size]
        vectors, index = sentence_vectors(texts, path, 64, "cpu")
        embeddings = np.ascontiguousarray(vectors[index])
        PrecomputedVectors.rows = embeddings
        data = (
            f"{len(texts):,} DailyDialog++ responses ({len(set(texts)):,} distinct); the same precomputed "
            "all-MiniLM-L6-v2 float32 rows on both sides (distance part only)"
        )
        warm = embeddings[:50]
        for key, ours, peer_function, name in (
            ("remote_clique", remote_clique_from_embeddings, peer.remote_clique, "remote_clique"),
            (
                "chamfer_distance",
                chamfer_distance_from_embeddings,
                peer.chamfer_dist,
                "chamfer_dist",
            ),
        ):
            log(f"{key}: {size:,} rows")

            def peer_call(function=peer_function, count=size):
                return function(texts[:count], model=path, verbose=False)

            def peer_warm(function=peer_function):
                PrecomputedVectors.rows = warm
                try:
                    return function(texts[:50], model=path, verbose=False)
                finally:
                    PrecomputedVectors.rows = embeddings

            with Contention() as contention:
                timings = interleaved(
                    {"ours": lambda function=ours: function(embeddings), "peer": peer_call},
                    repeats,
                    {"ours": lambda function=ours: function(warm), "peer": peer_warm},
                )
            difference = abs(timings["ours"].value - float(timings["peer"].value))
            rows.append(
                Row(
                    key=f"{key}_{size}",
                    path=f"10. {key.replace('_', ' ').capitalize()}",
                    data=data,
                    ours=f"`{ours.__name__}(X)`",
                    peer=f"`diversity.embedding.{name}(texts)`, encoder stubbed to return X",
                    ours_timing=timings["ours"],
                    peer_timing=timings["peer"],
                    equal=difference <= PEER_ROUNDING,
                    equal_detail=f"ours {timings['ours'].value:.6f}, peer {float(timings['peer'].value):.3f} (rounded; tol. 5e-4)",
                    others=contention.share,
                )
            )
    return rows


def bench_self_repetition(responses: list[str], sizes: tuple[int, ...], repeats: int) -> list[Row]:
    from dialeval.metrics import self_repetition

    peer = load_peer_module("self_repetition")
    if peer is None:
        log(
            "self_repetition: the `diversity` package is not installed (pip install --no-deps diversity==0.3.1); skipped"
        )
        return []
    rows = []
    for size in sizes:
        texts = responses[:size]
        log(f"Self-repetition: {size:,} responses")
        warm = texts[:50]
        with Contention() as contention:
            timings = interleaved(
                {
                    "ours": lambda t=texts: self_repetition(t),
                    "peer": lambda t=texts: peer.self_repetition_score(t, verbose=False),
                },
                repeats,
                {
                    "ours": lambda: self_repetition(warm),
                    "peer": lambda: peer.self_repetition_score(warm, verbose=False),
                },
            )
        ours_value, peer_value = timings["ours"].value, float(timings["peer"].value)
        rows.append(
            Row(
                key=f"self_repetition_{size}",
                path="11. Self-repetition (n = 4)",
                data=f"{len(texts):,} DailyDialog++ responses ({len(set(texts)):,} distinct)",
                ours="`self_repetition(texts)`",
                peer="`diversity.self_repetition_score(texts)`",
                ours_timing=timings["ours"],
                peer_timing=timings["peer"],
                equal=abs(ours_value - peer_value) <= SELF_REPETITION_RTOL * abs(peer_value),
                equal_detail=f"ours {ours_value:.12f}, peer {peer_value:.12f}",
                others=contention.share,
            )
        )
    return rows


# ---------------------------------------------------------------- report


# ---------------------------------------------------------------- 9. part-of-speech templates


def bench_templates(texts: list[str], repeats: int) -> list[Row]:
    """Ours (``pos_template_scores``: one extraction, both figures) vs the ``diversity`` package's
    ``extract_patterns`` + ``template_rate`` + ``templates_per_token`` (its ``compute_all_metrics``
    flow, default ``shard_size=500``), both on the tests' deterministic tagger and splitter
    (``tests/pos_tagging_fixtures.py``; spaCy's model cannot be installed here), so the row measures
    the template logic, not the tagger."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from pos_tagging_fixtures import lexicon_tagger, load_peer_templates, regex_sentence_splitter

    from dialeval.metrics.pos_templates import extract_templates, pos_template_scores

    peer = load_peer_templates()
    if peer is None:
        log(
            "templates: the `diversity` package is not installed (pip install --no-deps diversity==0.3.1); skipped"
        )
        return []
    log(f"templates: {len(texts):,} texts ({len(set(texts)):,} distinct)")

    def ours():
        result = pos_template_scores(
            texts, tagger=lexicon_tagger, sentence_splitter=regex_sentence_splitter
        )
        return result["template_rate"], result["templates_per_token_scores"]

    def theirs():
        patterns = peer.extract_patterns(texts)
        return peer.template_rate(texts, templates=patterns), peer.templates_per_token(
            texts, templates=patterns
        )

    warm = texts[:30]
    with Contention() as contention:
        timings = interleaved(
            {"ours": ours, "peer": theirs},
            repeats,
            {
                "ours": lambda: pos_template_scores(
                    warm, tagger=lexicon_tagger, sentence_splitter=regex_sentence_splitter
                ),
                "peer": lambda: peer.template_rate(warm),
            },
        )
    templates = extract_templates(
        texts, tagger=lexicon_tagger, sentence_splitter=regex_sentence_splitter
    )
    patterns = peer.extract_patterns(texts)
    spans = {span for found in patterns.values() for span in found}
    same_templates = list(templates) == list(patterns) and all(
        set(templates[key]) == patterns[key] for key in templates
    )
    (rate, per_token), (peer_rate, peer_per_token) = timings["ours"].value, timings["peer"].value
    one_shard = peer.templates_per_token(texts, templates=patterns, shard_size=len(spans))
    equal = same_templates and rate == peer_rate and per_token == one_shard
    return [
        Row(
            key="templates",
            path="9. POS templates (rate + per token)",
            data=f"{len(texts):,} DailyDialog++ responses, {len(spans):,} template spans, the tests' lexicon tagger on both sides",
            ours="`pos_template_scores(texts, tagger=, sentence_splitter=)`",
            peer="`extract_patterns` + `template_rate` + `templates_per_token` (get_pos / sent_tokenize patched to the same tagger)",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=equal,
            equal_detail=(
                f"same templates {same_templates}; rate {rate:.4f} vs {peer_rate:.4f}; per token equal to the package's "
                f"with one regex shard {per_token == one_shard}, with its default 500-span shards "
                f"{per_token == peer_per_token} (it counts a start once per shard: see the card)"
            ),
            others=contention.share,
        )
    ]


def verdict(row: Row) -> str:
    if row.ratio_kind == "ceiling":
        return f"**{row.ratio:.2f}** of the ceiling"
    text = f"{row.ratio:.2f}x"
    return f"**{text}**" if row.ratio >= 1.0 else f"**{text}** (peer faster)"


def equality(row: Row) -> str:
    if row.equal is None:
        return f"n/a: {row.equal_detail}"
    return f"{'yes' if row.equal else '**NO**'}: {row.equal_detail}"


def render(rows: list[Row], settings: dict, command: str, shapes: dict) -> str:
    lines = [
        f"<!-- {SCRIPT}:start -->",
        "## bench_peers: dialeval vs peers",
        "",
        (
            "Each path against the library a user would pick instead, in the same run on the same inputs, calls "
            f"interleaved ({settings['repeats']} rounds, rotated order, one untimed warm-up each), medians. Ratio = peer "
            "wall time / our wall time (>= 1.0: ours at least as fast); for the ceiling row, ours as a fraction of the "
            "bare-forward ceiling."
        ),
        "",
        "| path | data | ours | peer | ours: wall / CPU | peer: wall / CPU | ratio (wall) | equal outputs |",
        "|---|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.path} | {row.data} | {row.ours} | {row.peer} | {row.ours_timing.wall_median:.3f} / "
            f"{row.ours_timing.cpu_median:.3f} s | {row.peer_timing.wall_median:.3f} / {row.peer_timing.cpu_median:.3f} s | "
            f"{verdict(row)} | {equality(row)} |"
        )
    losing = [row for row in rows if row.ratio_kind == "peer" and row.ratio < 1.0]
    disturbed = [row for row in rows if row.others > 0.10]
    if disturbed:
        lines += [
            "",
            (
                f"**Disturbed**: other processes took more than 10% of the machine's CPU during {len(disturbed)} of "
                f"{len(rows)} rows (up to {max(row.others for row in disturbed):.0%}); the ratios are indicative, "
                "re-measure on an idle machine."
            ),
        ]
    if torch.get_num_threads() < (os.cpu_count() or 1):
        lines += [
            "",
            (
                f"torch and BLAS ran with {torch.get_num_threads()} thread(s) (`--threads`), fewer than the "
                f"{os.cpu_count()} cores: see the script's docstring."
            ),
        ]
    lines += [
        "",
        (
            "Rows where the peer is faster: "
            + "; ".join(f"{row.path} ({row.ratio:.2f}x)" for row in losing)
            + "."
            if losing
            else "No row where the peer is faster."
        ),
        "",
        *details_head(command),
        (
            f"- Versions: Python {platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
            f"transformers {transformers.__version__}, {peer_versions()}"
        ),
        (
            "- Timing: `time.perf_counter` wall time and CPU time (`time.process_time`, all threads, plus reaped child "
            "processes' CPU from `os.times`) of each whole call; CPU > wall means several cores worked."
        ),
        (
            f"- NLI model: seeded random `RobertaForSequenceClassification` ({shapes.get('nli', '?')}), byte-level BPE "
            "trained on the decTest file; float32 on CPU. BERTScore uses the same weights with the tokenizer declared "
            f"`RobertaTokenizer`, layer {BERTSCORE_LAYERS}."
        ),
        (
            "- Other processes' share of the machine's CPU during each row (from `/proc/stat`; above ~10% the timings are "
            "disturbed): " + ", ".join(f"{row.key} {row.others:.0%}" for row in rows) + "."
        ),
        "",
        "All runs (wall seconds; ours | peer):",
        "",
    ]
    for row in rows:
        lines.append(
            f"- {row.key}: {', '.join(f'{t:.3f}' for t in row.ours_timing.wall)} | "
            f"{', '.join(f'{t:.3f}' for t in row.peer_timing.wall)}"
            + (f" ({'; '.join(row.notes)})" if row.notes else "")
        )
    lines += ["", f"Settings: `{json.dumps(settings)}`.", f"<!-- {SCRIPT}:end -->"]
    return "\n".join(lines) + "\n"


def peer_versions() -> str:
    return package_versions(
        ("sentence-transformers", "diversity", "nltk", "vendi-score", "bert-score", "scikit-learn")
    )


# ---------------------------------------------------------------- 12. homogenization


HOMOGENIZATION_RTOL = 1e-12
HOMOGENIZATION_TEXTS = 1_000
HOMOGENIZATION_BERTSCORE_TEXTS = 100


def load_peer_homogenization(bleu_dir: Path):
    """``diversity/homogenization.py`` alone, unrounded, its ``evaluate.load("bleu")`` pointed at the
    copy of evaluate's bleu module vendored under tests/ (the Hub is unreachable)."""
    import evaluate

    spec = importlib.util.find_spec("diversity")
    if spec is None or spec.submodule_search_locations is None:
        raise SystemExit(
            "bench_peers: the diversity package is not installed (pip install --no-deps diversity==0.3.1)"
        )
    location = Path(next(iter(spec.submodule_search_locations))) / "homogenization.py"
    module_spec = importlib.util.spec_from_file_location("peer_homogenization", location)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    module.round = lambda value, digits: value
    bleu = evaluate.load(str(bleu_dir))
    module.load = lambda name: bleu
    return module


def bench_homogenization(texts: list[str], bertscore_path: str, repeats: int) -> list[Row]:
    """12. ``homogenization(texts, measure)`` vs the package's ``homogenization_score`` (unrounded)."""
    import bert_score

    from dialeval.metrics import homogenization

    peer = load_peer_homogenization(
        Path(__file__).resolve().parents[1] / "tests" / "metrics" / "vendored_evaluate" / "bleu"
    )
    rows = []
    for measure in ("rougel", "bleu"):
        log(f"homogenization {measure}: {len(texts)} texts ({len(set(texts))} distinct)")
        with Contention() as contention:
            timings = interleaved(
                {
                    "ours": lambda: homogenization(texts, measure),
                    "peer": lambda: peer.homogenization_score(texts, measure, verbose=False),
                },
                repeats,
                {
                    "ours": lambda: homogenization(texts[:5], measure),
                    "peer": lambda: peer.homogenization_score(texts[:5], measure, verbose=False),
                },
            )
        # The package divides BLEU (one corpus BLEU per reference) by n - 1 once more (metrics/homogenization/README.md).
        expected = timings["peer"].value * (len(texts) - 1 if measure == "bleu" else 1)
        difference = abs(timings["ours"].value - expected) / abs(expected)
        rows.append(
            Row(
                key=f"homogenization_{measure}",
                path=f"12. homogenization ({measure})",
                data=f"{len(texts):,} DailyDialog++ responses ({len(set(texts)):,} distinct), one corpus",
                ours=f'`homogenization(texts, "{measure}")`',
                peer=f'`diversity.homogenization_score(texts, "{measure}")` (unrounded; evaluate\'s bleu vendored)',
                ours_timing=timings["ours"],
                peer_timing=timings["peer"],
                equal=difference <= HOMOGENIZATION_RTOL,
                equal_detail=f"rel. diff {difference:.1e} (tol. {HOMOGENIZATION_RTOL:.0e})"
                + ("; the peer's BLEU x (n - 1)" if measure == "bleu" else ""),
                others=contention.share,
            )
        )

    bert_score.utils.sent_encode = reference_sent_encode
    scorer = bert_score.BERTScorer(
        model_type=bertscore_path, num_layers=BERTSCORE_LAYERS, batch_size=64, device="cpu"
    )

    class EvaluateBertScore:  # evaluate's bertscore module: a cached BERTScorer's score, F1 as a list
        def compute(self, predictions, references, model_type, batch_size):
            return {"f1": scorer.score(predictions, references, batch_size=batch_size)[2].tolist()}

    small = texts[:HOMOGENIZATION_BERTSCORE_TEXTS]
    peer.load = lambda name: EvaluateBertScore()
    options = {"model": bertscore_path, "num_layers": BERTSCORE_LAYERS, "device": "cpu"}
    log(f"homogenization bertscore: {len(small)} texts")
    with Contention() as contention:
        timings = interleaved(
            {
                "ours": lambda: homogenization(small, "bertscore", **options),
                "peer": lambda: peer.homogenization_score(
                    small, "bertscore", model=bertscore_path, verbose=False
                ),
            },
            repeats,
            {
                "ours": lambda: homogenization(small[:3], "bertscore", **options),
                "peer": lambda: peer.homogenization_score(
                    small[:3], "bertscore", model=bertscore_path, verbose=False
                ),
            },
        )
    difference = abs(timings["ours"].value - timings["peer"].value)
    rows.append(
        Row(
            key="homogenization_bertscore",
            path="12. homogenization (bertscore)",
            data=f"{len(small):,} DailyDialog++ responses, the tiny random RoBERTa, layer {BERTSCORE_LAYERS}, batch 64",
            ours='`homogenization(texts, "bertscore", model=DIR)`',
            peer='`diversity.homogenization_score(texts, "bertscore", model=DIR)` (bert_score.BERTScorer as evaluate\'s bertscore)',
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=difference <= BERTSCORE_ATOL,
            equal_detail=f"abs diff {difference:.1e} (tol. {BERTSCORE_ATOL:.0e})",
            others=contention.share,
        )
    )
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny models and sizes (< 1 minute; not a measurement)"
    )
    for name, value in FULL.items():
        if name != "nli_shape":
            parser.add_argument(
                f"--{name.replace('_', '-')}",
                type=int,
                default=None,
                help=f"default {value} (smoke {SMOKE[name]})",
            )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=(
            "nli",
            "embeddings",
            "lexical",
            "self_bleu",
            "vendi",
            "bertscore",
            "sem_ent",
            "selection",
            "templates",
            "embedding_distances",
            "self_repetition",
            "homogenization",
        ),
        help="run only these rows (the written section then holds only them)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch and BLAS threads (default: the cores); 1 on a busy shared machine, see the docstring",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="Markdown file to update (default RESULTS.md; smoke: a temp file)",
    )
    args = parser.parse_args(argv)
    settings = dict(SMOKE if args.smoke else FULL)
    for name in settings:
        given = getattr(args, name, None)
        if given is not None:
            settings[name] = given
    results = args.results or (
        Path(tempfile.gettempdir()) / "bench_peers_smoke.md" if args.smoke else RESULTS_PATH
    )
    for required in (DECTEST_FILE, DAILYDIALOG):
        if not required.exists():
            print(
                f"bench_peers: {required} not found (the papers' data lives in ../shared/data); nothing measured"
            )
            return 1
    logging.getLogger("transformers").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    transformers.utils.logging.disable_progress_bar()
    if args.threads is not None:
        if args.threads < 1:
            parser.error("--threads must be positive")
        torch.set_num_threads(args.threads)
        from threadpoolctl import threadpool_limits

        threadpool_limits(
            args.threads
        )  # numpy's and scipy's BLAS (and OpenMP) pools, for the whole run
    wanted = set(
        args.only
        or (
            "nli",
            "embeddings",
            "lexical",
            "self_bleu",
            "vendi",
            "bertscore",
            "sem_ent",
            "selection",
            "templates",
            "embedding_distances",
            "self_repetition",
        )
    )
    repeats = settings["repeats"]
    started = time.perf_counter()

    decTest_sets = [s.responses for s in read_tevet_csv(DECTEST_FILE)]
    records = dailydialog_records()
    rows: list[Row] = []
    shapes: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench_peers_") as workdir:
        workdir = Path(workdir)
        nli_path = None
        if wanted & {"nli", "bertscore"}:
            texts = [text for responses in decTest_sets for text in responses]
            nli_path = build_classifier(workdir / "nli", texts, settings["nli_shape"])
            shapes["nli"] = shape_text(nli_path)
        if "nli" in wanted:
            rows += bench_nli(
                nli_path, decTest_sets[: settings["nli_sets"]], settings["nli_batch_size"], repeats
            )
        if "embeddings" in wanted:
            rows += bench_embeddings(
                dailydialog_responses(records)[: settings["embed_texts"]],
                dailydialog_sets(settings["sets"]),
                repeats,
            )
        if "lexical" in wanted:
            rows += bench_lexical(
                cycled(dailydialog_strings(records), settings["lexical_responses"]), repeats
            )
        if "self_bleu" in wanted:
            dev = [
                text
                for record in dailydialog_records(("dev.json",))
                for text in record["positive_responses"]
            ]
            rows += bench_self_bleu(dev[: settings["self_bleu_responses"]], repeats)
        if "vendi" in wanted:
            rows += bench_vendi(settings["vendi_rows"], settings["vendi_sets"], repeats)
        if "bertscore" in wanted:
            path = with_roberta_tokenizer_class(nli_path, workdir / "bertscore")
            rows += bench_bertscore(path, decTest_sets[: settings["bertscore_sets"]], repeats)
        if "sem_ent" in wanted:
            rows += bench_sem_ent(settings["sem_ent_texts"], repeats)
        if "selection" in wanted:
            rows += bench_selection(
                workdir, settings["selection_questions"], repeats, tiny=args.smoke
            )
        if "templates" in wanted:
            rows += bench_templates(
                dailydialog_responses(records)[: settings["template_texts"]], repeats
            )
        distance_sizes = SMOKE_DISTANCE_SIZES if args.smoke else DISTANCE_SIZES
        if "embedding_distances" in wanted:
            rows += bench_embedding_distances(
                dailydialog_responses(records), distance_sizes, repeats
            )
        if "self_repetition" in wanted:
            rows += bench_self_repetition(dailydialog_responses(records), distance_sizes, repeats)
        if "homogenization" in wanted:
            responses = [text for text in dailydialog_responses(records) if text.strip()]
            tiny = with_roberta_tokenizer_class(
                build_classifier(workdir / "homogenization", responses[:2000], "tiny"),
                workdir / "homogenization-bertscore",
            )
            rows += bench_homogenization(
                responses[: 60 if args.smoke else HOMOGENIZATION_TEXTS], tiny, repeats
            )

    command = ".venv/bin/python benchmarks/bench_peers.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(results, SCRIPT, render(rows, settings, command.strip(), shapes))
    print()
    for row in rows:
        print(
            f"{row.key:20s} ours {row.ours_timing.wall_median:8.3f} s  peer {row.peer_timing.wall_median:8.3f} s  "
            f"ratio {row.ratio:6.2f}  equal {row.equal}  ({row.equal_detail})"
        )
    print(f"wrote {results} after {time.perf_counter() - started:.0f} s")
    failed = [row.key for row in rows if row.equal is False]
    if failed:
        print(f"ERROR: outputs differ in {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
