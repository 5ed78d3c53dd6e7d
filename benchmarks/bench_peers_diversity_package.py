"""The diversity package's measures: part-of-speech templates, remote clique and chamfer distance,
self-repetition and homogenization.

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


Rows of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only templates embedding_distances self_repetition`` does. Homogenization runs only when named (``--only homogenization``), as in
``bench_peers.py``.

Usage::

    .venv/bin/python benchmarks/bench_peers_diversity_package.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it
import importlib.util
import sys
from pathlib import Path

import numpy as np
from _peers import (
    BERTSCORE_ATOL,
    BERTSCORE_LAYERS,
    MINILM,
    Inputs,
    Row,
    build_classifier,
    dailydialog_responses,
    load_peer_module,
    main,
    reference_sent_encode,
    with_roberta_tokenizer_class,
)
from _report import Contention, interleaved, log

from dialeval.hub import resolve_model_path

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


def run_templates(inputs: Inputs) -> list[Row]:
    return bench_templates(
        dailydialog_responses(inputs.records)[: inputs.settings["template_texts"]], inputs.repeats
    )


def distance_sizes(inputs: Inputs) -> tuple[int, ...]:
    return SMOKE_DISTANCE_SIZES if inputs.smoke else DISTANCE_SIZES


def run_embedding_distances(inputs: Inputs) -> list[Row]:
    return bench_embedding_distances(
        dailydialog_responses(inputs.records), distance_sizes(inputs), inputs.repeats
    )


def run_self_repetition(inputs: Inputs) -> list[Row]:
    return bench_self_repetition(
        dailydialog_responses(inputs.records), distance_sizes(inputs), inputs.repeats
    )


def run_homogenization(inputs: Inputs) -> list[Row]:
    responses = [text for text in dailydialog_responses(inputs.records) if text.strip()]
    tiny = with_roberta_tokenizer_class(
        build_classifier(inputs.workdir / "homogenization", responses[:2000], "tiny"),
        inputs.workdir / "homogenization-bertscore",
    )
    return bench_homogenization(
        responses[: 60 if inputs.smoke else HOMOGENIZATION_TEXTS], tiny, inputs.repeats
    )


ROWS = {
    "templates": run_templates,
    "embedding_distances": run_embedding_distances,
    "self_repetition": run_self_repetition,
    "homogenization": run_homogenization,
}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
