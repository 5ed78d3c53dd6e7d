"""Response selection against one forward per candidate.

8. Response selection: ``response_selection(..., scorer=CandidateScorer(DIR))`` vs one forward per
   candidate (``bench_selection.naive_nll_sums``' loop with the model loaded once, outside the
   timings) on ``--selection-questions`` DailyDialog++ dev questions with bench_selection's random
   distilgpt2-shaped model; check as in bench_selection (same selection, NLL within 1e-3).

Row of ``bench_peers.py`` (timing, checks and report as its docstring says). Run alone,
this script writes the ``bench_peers`` section of ``benchmarks/RESULTS.md`` with its own rows only,
as ``bench_peers.py --only selection`` does.

Usage::

    .venv/bin/python benchmarks/bench_peers_selection.py --smoke    # tiny sizes, not a measurement
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import sys
from pathlib import Path

import numpy as np
import torch
import transformers
from _peers import Inputs, Row, main, shape_text
from _report import Contention, interleaved, log

from dialeval.runtimes import DEFAULT_BACKEND

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


def bench_selection(
    workdir: Path, count: int, repeats: int, tiny: bool, backend: str = DEFAULT_BACKEND
) -> list[Row]:
    import bench_selection as reference

    from dialeval.metrics.engines.lm_scorer import CandidateScorer
    from dialeval.metrics.response_selection import response_selection

    contexts, candidates, labels = reference.questions_from_dailydialog_pp(
        reference.DATA_FILE, count
    )
    texts = [text for turns, options in zip(contexts, candidates) for text in (*turns, *options)]
    if tiny:
        path = reference.build_model(
            workdir / "tiny-gpt2", texts, tokenizer_vocab=2000, shape=(32, 2, 2), model_vocab=None
        )
    else:
        path = reference.build_model(workdir / "distilgpt2-shape", texts)
    shape = shape_text(path)
    scorer = CandidateScorer(path, device="cpu", batch_size=16, backend=backend)
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
            ours=f"`response_selection(..., scorer=CandidateScorer(DIR))`, {backend}",
            peer="one `tokenizer()` + forward (`labels=`) per candidate",
            ours_timing=timings["ours"],
            peer_timing=timings["peer"],
            equal=same and difference <= reference.LOSS_TOLERANCE,
            equal_detail=f"same selection: {same}; max |Δ NLL| {difference:.1e} (tol. {reference.LOSS_TOLERANCE:.0e})",
            others=contention.share,
        )
    ]


def run_selection(inputs: Inputs) -> list[Row]:
    return bench_selection(
        inputs.workdir,
        inputs.settings["selection_questions"],
        inputs.repeats,
        tiny=inputs.smoke,
        backend=inputs.backend,
    )


ROWS = {"selection": run_selection}


if __name__ == "__main__":
    sys.exit(main(ROWS, __doc__, Path(__file__).name))
