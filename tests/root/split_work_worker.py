"""Run by tests/root/test_split_work.py under torchrun: the model-backed engines inside split_work."""

import json
import os
import sys

for _variable in (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
):
    os.environ[_variable] = "1"

from dialeval.distributed import broadcast_int, end_processes, process_state, split_work
from dialeval.metrics import LastTokenEmbedder, bertscore_diversity, nli_diversity
from dialeval.metrics.engines.embedders import embed_unique

SETS = [
    ["I went hiking.", "I fixed the sink.", "Nothing much.", "I went hiking."],
    ["Not much.", "Not much, you?", "We ate seafood on the coast.", "Yes."],
    ["Maybe tomorrow?", "Sure!", "I don't know."],
]


def compute(nli_path: str, roberta_path: str, gpt2_path: str) -> dict:
    from accelerate.utils import gather_object

    from dialeval.metrics.engines.pair_scorer import load_pair_classifier

    texts = [text for response_set in SETS for text in response_set]
    classifier = load_pair_classifier(nli_path, device="cpu")
    forward, rows = classifier.model.forward, []

    def counting_forward(*args, **kwargs):
        rows.append(len(kwargs["input_ids"]))
        return forward(*args, **kwargs)

    classifier.model.forward = counting_forward
    try:
        nli = nli_diversity(SETS, model=nli_path, device="cpu", batch_size=3)
    finally:
        classifier.model.forward = forward
    bertscore = bertscore_diversity(
        SETS, model=roberta_path, device="cpu", rescale_with_baseline=False, batch_size=2
    )
    embeddings, index = embed_unique(texts, batch_size=2, device="cpu")
    last_token = LastTokenEmbedder(gpt2_path, device="cpu", batch_size=2, max_length=32).embed(
        texts
    )
    return {
        "nli": [row["nli_diversity_confidence"] for row in nli["per_set"]],
        "bertscore": list(bertscore),
        "sentence": embeddings[index].tolist(),
        "last_token": last_token.tolist(),
        "processes": process_state().num_processes,
        "nli_rows_per_process": gather_object([sum(rows)]),
        "distinct_pairs": nli["num_unique_pairs"],
        # the main process's count reaches every process (each offers its own index otherwise)
        "broadcast": gather_object(
            [broadcast_int(7 if process_state().is_main_process else process_state().process_index)]
        ),
    }


if __name__ == "__main__":
    with split_work():
        result = compute(*sys.argv[1:4])
    if process_state().is_main_process:
        with open(sys.argv[4], "w", encoding="utf-8") as handle:
            json.dump(result, handle)
    end_processes()
