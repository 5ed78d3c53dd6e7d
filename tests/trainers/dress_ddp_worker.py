"""One process of test_dress_ddp.py's run: ``torchrun --nproc_per_node 2 dress_ddp_worker.py MODEL OUT TRAINER``.

Takes one optimizer step (per-device batch 2, CPU, gloo) with DRESSTrainer (negative training on)
or UnlikelihoodTrainer and writes the parameter update from rank 0 to OUT (safetensors). DRESS
processes also write OUT.rank<i>.json: how many texts each embedded and the clusters they hold.
"""

import json
import os
import sys

for _variable in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_variable] = "1"

import torch
from safetensors.torch import save_file
from transformers import AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# tests/: tiny_models
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_dress_trainer import TopicEmbedder, _one_step
from test_unlikelihood_trainer import _one_step as _one_unlikelihood_step

from dialeval.distributed import end_processes


class CountingEmbedder(TopicEmbedder):
    """Counts the texts this process embeds: only the main process should (fit, assign)."""

    def __init__(self):
        self.embedded = 0

    def embed(self, texts):
        self.embedded += len(texts)
        return super().embed(texts)


def main(model_path: str, out: str, trainer_kind: str) -> None:
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    workdir = os.path.join(os.path.dirname(out), f"work-{trainer_kind}")
    if trainer_kind == "dress":
        embedder = CountingEmbedder()
        trainer, updates = _one_step(
            model_path,
            _Path(workdir),
            2,
            1,
            True,
            tokenizer=tokenizer,
            embedder=embedder,
            logging_strategy="steps",
            logging_steps=1,
        )
        report = {
            "log": next(entry for entry in trainer.state.log_history if "loss" in entry),
            "embedded": embedder.embedded,
            "centroids": trainer.semantic_clusters.centroids.tolist(),
            "weights": list(trainer.train_dataset["dress_weight"]),
            "negatives": len(trainer._negative_pool),
            "fitted_on": trainer.semantic_clusters.settings["num_reference_texts"],
        }
        with open(f"{out}.rank{trainer.args.process_index}.json", "w", encoding="utf-8") as handle:
            json.dump(report, handle)
    else:
        trainer, updates = _one_unlikelihood_step(model_path, _Path(workdir), tokenizer, 2, 1)
    assert trainer.args.world_size == 2, trainer.args.world_size
    if trainer.args.process_index == 0:
        save_file({str(index): update.contiguous() for index, update in enumerate(updates)}, out)


def _Path(path):  # the test helpers take pathlib paths
    from pathlib import Path

    return Path(path)


if __name__ == "__main__":
    main(*sys.argv[1:4])
    end_processes()  # after main() returned: no tensor of its collectives is still referenced
    assert not torch.distributed.is_initialized()
