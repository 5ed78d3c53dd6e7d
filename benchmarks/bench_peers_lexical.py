"""Corpus Dist-n / Ent-n against the diversity package, and Self-BLEU against the NLTK loop.

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

Rows of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only lexical self_bleu`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_lexical.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

from _peers import Inputs, Row, cycled, dailydialog_strings, load_peer_module, main
from _report import Contention, dailydialog_records, interleaved, log

SELF_BLEU_ATOL = 1e-12


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


def run_lexical(inputs: Inputs) -> list[Row]:
    return bench_lexical(
        cycled(dailydialog_strings(inputs.records), inputs.settings["lexical_responses"]),
        inputs.repeats,
    )


def run_self_bleu(inputs: Inputs) -> list[Row]:
    dev = [
        text
        for record in dailydialog_records(("dev.json",))
        for text in record["positive_responses"]
    ]
    return bench_self_bleu(dev[: inputs.settings["self_bleu_responses"]], inputs.repeats)


ROWS = {"lexical": run_lexical, "self_bleu": run_self_bleu}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
