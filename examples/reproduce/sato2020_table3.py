"""Reproduce Table 3 and Fig. 2 of Sato et al. (2020), "Evaluating Dialogue Generation Systems via
Response Selection", given the systems' checkpoints and their human scores.

Table 3 ranks the systems (App. B: ten GRU / LSTM / Transformer seq2seq models trained on
OpenSubtitles; not released) by the selection accuracy of each (argmin of the candidate loss,
§4.1.2) and compares that ranking with the human one by Spearman's ρ:

- CHOSEN: accuracy on the test set (``--questions``: the builder's rows as JSONL, or the TSV the
  authors' ``create_test.sh`` writes);
- RANDOM: the mean ρ over ``--num-trials`` (paper: 100) test sets whose false candidates are drawn
  at random (footnote 5), either from ``--repository`` (one utterance per line, read into memory;
  ``--exclude``: the systems' training utterances, which §3.2 keeps out of the repository) or
  from ``--random-questions`` (JSONL rows with a ``trial`` field: the ``response_selection``
  builder's ``random`` config exported, the way to draw from the full OpenSubtitles file);
- HUMAN (when ``--human-scores`` gives each annotator's score per response): ρ and its p-value
  between the rankings of two random halves of the annotators, from ONE random split, as the paper
  (§4.2: "We randomly divided human evaluation into two groups"; Table 3: 0.87, p = 0.0038); the
  split is drawn with ``default_rng([--seed, 0])``. Beside it, "HUMAN (mean of N splits)": the
  mean ρ over ``--human-splits`` (default 100) splits ``default_rng([--seed, s])``, s < N, the
  first being HUMAN's; not the paper's protocol, a steadier estimate of the same bound.

Before the table the script prints its numbers next to the paper's and every setting that differs
from the paper (also in ``table3.md`` and, as ``differs_from_paper``, in ``table3.json``).

Fig. 2 (the box plot of RANDOM's per-trial ρ, CHOSEN as a blue dot) is written to
``OUTPUT/fig2_random_vs_chosen.png``; the figures to ``OUTPUT/table3.json`` and a Markdown table
beside the paper's values to ``OUTPUT/table3.md``. BLEU-1/2, METEOR and ROUGE-L (the other rows)
need the systems' generations on 7,393 DailyDialog dialogues and are not computed here.

Systems: ``--system NAME=MODEL`` per system (a Hugging Face causal or seq2seq checkpoint directory
or cached Hub id; the paper's fairseq-style systems must be converted first). Human scores
(``--human-scores``, JSON): ``{"NAME": s_final}`` (§4.1.2: the mean over responses of the mean of
five annotators) or ``{"NAME": [[s1, ..., s5], ...]}`` (per response, every annotator's score).

Usage::

    python examples/reproduce/sato2020_table3.py --questions test.jsonl --human-scores human.json \\
        --system gru1=runs/gru1 --system lstm2=runs/lstm2 --system tf8=runs/tf8 ... \\
        --repository opensubtitles_sample.txt --exclude training_utterances.txt --num-trials 100 \\
        --device cuda:0 --output-dir runs/table3
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

#: Table 3 and §4.3 of the paper, for comparison.
PAPER = {
    "BLEU-1": -0.36,
    "BLEU-2": 0.085,
    "METEOR": 0.073,
    "ROUGE-L": 0.35,
    "RANDOM": 0.43,
    "CHOSEN": 0.48,
    "HUMAN": 0.87,
    "RANDOM range": (0.06, 0.67),
}
#: Table 3's p-values (RANDOM, a mean over trials, has none).
PAPER_P_VALUES = {
    "BLEU-1": 0.30,
    "BLEU-2": 0.82,
    "METEOR": 0.84,
    "ROUGE-L": 0.33,
    "CHOSEN": 0.19,
    "HUMAN": 0.0038,
}
#: The paper's setting (§4.1, footnote 5, §4.2), for the list of what differs here.
PAPER_SETTING = {
    "systems": 10,
    "questions": 1019,
    "random_trials": 100,
    "human_responses": 56,
    "annotators": 5,
    "human_splits": 1,
}
ROWS = ("BLEU-1", "BLEU-2", "METEOR", "ROUGE-L", "RANDOM", "CHOSEN", "HUMAN")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--system",
        action="append",
        required=True,
        metavar="NAME=MODEL",
        help="a system and its checkpoint (>= 3)",
    )
    parser.add_argument(
        "--human-scores",
        required=True,
        help="JSON: system -> s_final, or -> per-response annotator scores",
    )
    parser.add_argument(
        "--questions", required=True, help="CHOSEN questions: JSONL rows or the create_test.sh TSV"
    )
    random = parser.add_mutually_exclusive_group()
    random.add_argument(
        "--repository", help="RANDOM: utterances to draw false candidates from, one per line"
    )
    random.add_argument(
        "--random-questions",
        help="RANDOM: JSONL rows with a 'trial' field (the builder's random config)",
    )
    parser.add_argument(
        "--exclude",
        help="with --repository: utterances never drawn (the systems' training data, §3.2)",
    )
    parser.add_argument(
        "--num-trials",
        type=int,
        default=100,
        help="RANDOM trials with --repository (footnote 5: 100)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="RANDOM: trial t draws with default_rng([seed, t])"
    )
    parser.add_argument(
        "--human-splits",
        type=int,
        default=100,
        help="the 'HUMAN (mean of N splits)' row: random annotator halves averaged over (HUMAN itself, "
        "as the paper: one split)",
    )
    parser.add_argument("--reduction", choices=("sum", "mean"), default="sum")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default=None)
    parser.add_argument("--dtype", default=None, choices=(None, "float32", "float16", "bfloat16"))
    parser.add_argument("--turn-separator", default=None, help="default: the tokenizer's EOS token")
    parser.add_argument("--output-dir", required=True)
    args = parser.parse_args(argv)
    systems = {}
    for item in args.system:
        name, sep, model = item.partition("=")
        if not sep or not name or not model:
            parser.error(f"--system must be NAME=MODEL, got {item!r}")
        if name in systems:
            parser.error(f"--system {name!r} is given twice")
        systems[name] = model
    if len(systems) < 3:
        parser.error(f"a ranking correlation needs at least 3 systems, got {len(systems)}")
    if args.exclude and not args.repository:
        parser.error("--exclude goes with --repository")
    if args.num_trials < 1 or args.human_splits < 1:
        parser.error("--num-trials and --human-splits must be positive")
    args.systems = systems
    return args


def read_human_scores(path, systems) -> tuple[dict[str, float], dict[str, np.ndarray] | None]:
    """s_final per system, and (when given) the per-response annotator scores."""
    scores = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(scores, dict) or set(scores) != set(systems):
        raise SystemExit(f"{path}: must map exactly the systems {sorted(systems)} to scores")
    if all(isinstance(value, (int, float)) for value in scores.values()):
        return {name: float(value) for name, value in scores.items()}, None
    per_annotator = {}
    for name, value in scores.items():
        array = np.asarray(value, dtype=float)
        if array.ndim != 2 or array.shape[1] < 2:
            raise SystemExit(
                f"{path}: {name!r} must be a number or a list of per-response score lists (>= 2 annotators)"
            )
        per_annotator[name] = array
    # §4.1.2: s_mean per response (mean of its annotators), s_final the mean over responses.
    return {
        name: float(array.mean(axis=1).mean()) for name, array in per_annotator.items()
    }, per_annotator


def human_split(per_annotator: dict[str, np.ndarray], seed: int, split: int) -> dict:
    """§4.2 HUMAN, one split: per response, the annotators go at random into two groups (the first
    ``n // 2`` of a permutation drawn by ``default_rng([seed, split])``); ρ and p between the two rankings."""
    from dialeval.metrics.response_selection import system_ranking_correlation

    rng = np.random.default_rng([seed, split])
    first, second = {}, {}
    for name, array in per_annotator.items():
        half = array.shape[1] // 2
        order = np.argsort(rng.random(array.shape), axis=1)
        first[name] = float(np.take_along_axis(array, order[:, :half], axis=1).mean())
        second[name] = float(np.take_along_axis(array, order[:, half:], axis=1).mean())
    return {**system_ranking_correlation(first, second), "seed": seed, "split": split}


def human_upper_bound(per_annotator: dict[str, np.ndarray], splits: int, seed: int) -> dict:
    """HUMAN as the paper (split 0 only) and the mean ρ over ``splits`` splits (0 to splits - 1)."""
    results = [human_split(per_annotator, seed, split) for split in range(splits)]
    # None: a constant half
    defined = [result["spearman"] for result in results if result["spearman"] is not None]
    return {
        "one_split": results[0],
        "spearman_mean": float(np.mean(defined)) if defined else None,
        "num_splits": splits,
        "num_undefined": len(results) - len(defined),
    }


def settings_that_differ(args, num_questions: int, num_trials: int, per_annotator) -> list[str]:
    """Every setting of this run that is not the paper's (§4.1, footnote 5, §4.2, Table 3)."""
    paper = PAPER_SETTING
    differ = [
        (
            f"systems: {len(args.systems)} of ours ({', '.join(args.systems)}); the paper's {paper['systems']} "
            "seq2seq systems trained on OpenSubtitles2018 (App. B) are not released"
        )
    ]
    if num_questions != paper["questions"]:
        differ.append(f"CHOSEN / RANDOM questions: {num_questions} (paper: {paper['questions']:,})")
    if not num_trials:
        differ.append("RANDOM: not run (no --repository / --random-questions)")
    elif num_trials != paper["random_trials"]:
        differ.append(f"RANDOM: {num_trials} trials (paper, footnote 5: {paper['random_trials']})")
    if args.repository and not args.exclude:
        differ.append(
            "RANDOM: the systems' training utterances are not excluded from --repository (§3.2 excludes them)"
        )
    if per_annotator is None:
        differ.append(
            "HUMAN: not computed (--human-scores gives s_final only, not each annotator's scores)"
        )
    else:
        shapes = sorted({array.shape for array in per_annotator.values()})
        if shapes != [(paper["human_responses"], paper["annotators"])]:
            given = ", ".join(
                f"{responses} responses x {annotators} annotators"
                for responses, annotators in shapes
            )
            differ.append(
                f"human scores: {given} per system (paper: {paper['human_responses']} x {paper['annotators']})"
            )
        differ.append(
            f"HUMAN (mean of {args.human_splits} splits): a row the paper does not have (it used one split, "
            "as our HUMAN row)"
        )
    differ.append(
        "BLEU-1 / BLEU-2 / METEOR / ROUGE-L: not computed (they need 7,393 generated responses per system)"
    )
    return differ


def random_trials(args, questions) -> list[list[dict]]:
    from dialeval.io import iter_jsonl, iter_lines
    from dialeval.metrics.response_selection import build_repository, random_trial

    if args.random_questions:
        trials: dict[int, list[dict]] = {}
        for where, row in iter_jsonl(args.random_questions):
            if (
                not isinstance(row, dict)
                or not {"trial", "context", "candidates", "label"} <= row.keys()
            ):
                raise SystemExit(
                    f"{where}: expected a row with 'trial', 'context', 'candidates' and 'label'"
                )
            trials.setdefault(int(row["trial"]), []).append(row)
        return [trials[t] for t in sorted(trials)]
    repository = build_repository(line for _, line in iter_lines(args.repository))
    exclude = [line for _, line in iter_lines(args.exclude)] if args.exclude else []
    rows = [
        {"context": c, "candidates": cands, "label": label}
        for c, cands, label in zip(
            questions["contexts"], questions["candidates"], questions["labels"]
        )
    ]
    return [
        random_trial(rows, repository, seed=args.seed, trial=t, exclude=exclude)
        for t in range(args.num_trials)
    ]


def _rho(row: dict | None) -> str:
    return (
        "not computed"
        if row is None
        else "undefined"
        if row["spearman"] is None
        else f"{row['spearman']:.3f}"
    )


def comparison(report: dict) -> str:
    """What the script prints before its table: ours next to the paper's, then what differs."""
    lines = ["Sato et al. (2020) Table 3, Spearman's rho, ours vs the paper:"]
    for row in ROWS:
        if row in report["rows"]:
            lines.append(f"  {row}: ours {_rho(report['rows'][row])}, paper {PAPER[row]}")
    mean_row = next((row for row in report["rows"] if row.startswith("HUMAN (mean")), None)
    if mean_row:
        lines.append(f"  {mean_row}: ours {_rho(report['rows'][mean_row])}, paper - (one split)")
    lines.append("Settings that differ from the paper:")
    lines.extend(f"  - {item}" for item in report["differs_from_paper"])
    return "\n".join(lines) + "\n"


def markdown(report: dict) -> str:
    lines = [
        "| Metric | Spearman (ours) | p-value (ours) | Spearman (paper) | p-value (paper) |",
        "|---|---:|---:|---:|---:|",
    ]
    extra = [row for row in report["rows"] if row not in ROWS]
    for row in (*ROWS, *extra):
        ours = report["rows"].get(row)
        p = "-" if ours is None or ours.get("p_value") is None else f"{ours['p_value']:.3g}"
        paper_p = PAPER_P_VALUES.get(row)
        # as printed: 0.30
        paper_p = "-" if paper_p is None else format(paper_p, ".2f" if paper_p >= 0.1 else ".2g")
        lines.append(f"| {row} | {_rho(ours)} | {p} | {PAPER.get(row, '-')} | {paper_p} |")
    if "HUMAN" in report["rows"]:
        human = report["rows"]["HUMAN"]
        lines.append(
            f"\nHUMAN: one random split of the annotators (seed {human['seed']}), as the paper (§4.2)."
        )
    if "RANDOM" in report["rows"]:
        low, high = report["rows"]["RANDOM"]["range"]
        lines.append(
            f"\nRANDOM range over {report['rows']['RANDOM']['num_trials']} trials: {low:.2f} to {high:.2f} "
            f"(paper, Fig. 2: {PAPER['RANDOM range'][0]} to {PAPER['RANDOM range'][1]})."
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    args = parse_args(argv)
    from dialeval.metrics.engines.lm_scorer import CandidateScorer
    from dialeval.metrics.response_selection import (
        random_protocol_accuracies,
        random_protocol_correlation,
        random_protocol_figure,
        read_selection_questions,
        response_selection,
        system_ranking_correlation,
    )

    human, per_annotator = read_human_scores(args.human_scores, args.systems)
    questions = read_selection_questions(args.questions)
    trials = random_trials(args, questions) if (args.repository or args.random_questions) else []
    chosen, random_accuracies = {}, {}
    for name, model in args.systems.items():
        scorer = CandidateScorer(
            model,
            device=args.device,
            dtype=args.dtype,
            batch_size=args.batch_size,
            turn_separator=args.turn_separator,
        )
        result = response_selection(
            questions["contexts"],
            questions["candidates"],
            questions["labels"],
            scorer=scorer,
            reduction=args.reduction,
        )
        chosen[name] = result["accuracy"]
        if trials:
            random_accuracies[name] = random_protocol_accuracies(
                scorer, trials, reduction=args.reduction
            )
        print(
            f"{name}: CHOSEN accuracy {chosen[name]:.3f}"
            + (f", RANDOM mean accuracy {np.mean(random_accuracies[name]):.3f}" if trials else "")
        )
    rows = {"CHOSEN": system_ranking_correlation(human, chosen)}
    output = Path(args.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    if trials:
        per_trial = [
            {name: random_accuracies[name][t] for name in args.systems} for t in range(len(trials))
        ]
        random = random_protocol_correlation(human, per_trial)
        rows["RANDOM"] = {
            "spearman": random["spearman_mean"],
            "p_value": None,
            "num_trials": random["num_trials"],
            "num_undefined_trials": random["num_undefined_trials"],
            "range": (random["spearman_min"], random["spearman_max"]),
            "per_trial": random["spearman_per_trial"],
        }
        chosen_rho = rows["CHOSEN"]["spearman"]
        figure = random_protocol_figure(
            random, chosen_spearman=float("nan") if chosen_rho is None else chosen_rho
        )
        figure.savefig(output / "fig2_random_vs_chosen.png", dpi=150)
    if per_annotator is not None:
        upper = human_upper_bound(per_annotator, args.human_splits, args.seed)
        one = upper["one_split"]
        rows["HUMAN"] = {
            "spearman": one["spearman"],
            "p_value": one["p_value"],
            "seed": one["seed"],
            "split": one["split"],
            "undefined_reason": one["undefined_reason"],
        }
        rows[f"HUMAN (mean of {upper['num_splits']} splits)"] = {
            "spearman": upper["spearman_mean"],
            "p_value": None,
            "num_splits": upper["num_splits"],
            "num_undefined": upper["num_undefined"],
            "seed": args.seed,
        }
    report = {
        "systems": args.systems,
        "human_scores": human,
        "chosen_accuracy": chosen,
        "random_accuracy": random_accuracies,
        "rows": rows,
        "reduction": args.reduction,
        "num_questions": len(questions["contexts"]),
        "paper": PAPER,
        "paper_p_values": PAPER_P_VALUES,
        "not_computed": ["BLEU-1", "BLEU-2", "METEOR", "ROUGE-L"],
        "differs_from_paper": settings_that_differ(
            args, len(questions["contexts"]), len(trials), per_annotator
        ),
    }
    (output / "table3.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (output / "table3.md").write_text(
        comparison(report) + "\n" + markdown(report), encoding="utf-8"
    )
    print(comparison(report))
    print(markdown(report))
    return report


if __name__ == "__main__":
    main()
