"""Run by tests/metrics/test_selection_sem_ent_processes.py under torchrun (and in one process by
the test itself): response selection and Sem-Ent inside split_work, with what each process ran."""

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

from dialeval.distributed import end_processes, process_state, split_work

CONTEXTS = [
    [
        "hi there! how are you doing today?",
        "i'm doing well, thanks for asking.",
        "what are you going to cook?",
    ],
    "do you have any pets at home?",
    ["where did you go on holiday?", "we drove to the coast and stayed a week by the sea."],
    "coffee or tea?",
    ["did you watch the game last night?", "no, i fell asleep early."],
    "what do you do for a living?",
    [
        "i just moved here.",
        "welcome! do you like the city so far?",
        "yes, the people are friendly and the food is great.",
    ],
]
CANDIDATES = [
    ["probably pasta with tomato sauce.", "a man is playing a guitar on the stage.", "yes"],
    [
        "yes, i have a dog named max and two cats.",
        "i read a lot of history books.",
        "yes, i have a dog named max and two cats.",
    ],
    [
        "it was lovely, thanks.",
        "my car is red.",
        "the printer is broken again.",
        "we should leave soon.",
    ],
    ["tea, please.", "coffee.", "i like both."],
    ["too bad, it was a great match.", "i am a teacher.", "tomorrow at noon."],
    ["i am a nurse at the city hospital.", "it is raining.", "nice to meet you."],
    ["that's great to hear!", "no.", "i have three meetings tomorrow and a report due on friday."],
]
LABELS = [0, 0, 0, 0, 0, 0, 0]
REFERENCE = [
    "I love pizza with extra cheese.",
    "Sushi is my favourite dinner.",
    "Let's cook pasta tonight.",
    "This soup tastes amazing.",
    "It is raining heavily outside.",
    "The sun is shining all day.",
    "A storm is coming tonight.",
    "It's freezing cold this morning.",
    "He scored a goal in the last minute.",
    "Our team won the basketball final.",
    "I go running every morning.",
    "The tennis match lasted five hours.",
    "My boss wants the report by Friday.",
    "I have three meetings tomorrow.",
    "The office printer is broken again.",
    "I asked for a raise today.",
    "Sushi is my favourite dinner.",
]
RESPONSES = [
    "Pizza again?",
    "More rain today.",
    "We won!",
    "Meetings all day.",
    "Pizza again?",
    "Snow tomorrow, I think.",
    "I ran ten miles.",
    "The printer jammed.",
]


class CountingEmbedder:
    """An embedder that counts the distinct texts it ran through its model on this process."""

    def __init__(self, embedder):
        self.embedder, self.texts = embedder, 0

    def identity(self) -> dict:
        return self.embedder.identity()

    def embed(self, texts):
        return self.embedder.embed(texts, progress=self.count)

    def count(self, number: int) -> None:
        self.texts += number


def compute(gpt2_path: str, bart_path: str) -> dict:
    from accelerate.utils import gather_object
    from sklearn.cluster import KMeans

    from dialeval.metrics import LastTokenEmbedder
    from dialeval.metrics.response_selection import response_selection
    from dialeval.metrics.sem_ent.clusters import SemanticClusters, sem_ent

    result = {"processes": process_state().num_processes}
    runs = {
        "gpt2_packed": (gpt2_path, True),
        "gpt2_padded": (gpt2_path, False),
        "bart": (bart_path, True),
    }
    for name, (path, share_context) in runs.items():
        scored = []  # questions this process scored
        selection = response_selection(
            CONTEXTS,
            CANDIDATES,
            LABELS,
            model=path,
            device="cpu",
            batch_size=2,
            share_context=share_context,
            progress=scored.append,
        )
        result[name] = {
            key: selection[key]
            for key in ("accuracy", "num_correct", "num_ties", "num_truncated_contexts")
        }
        result[name]["per_question"] = selection["per_question"]
        result[name]["questions_per_process"] = gather_object([sum(scored)])

    fit = KMeans.fit
    fits = []

    def counting_fit(self, *args, **kwargs):
        fits.append(1)
        return fit(self, *args, **kwargs)

    KMeans.fit = counting_fit
    try:
        embedder = CountingEmbedder(
            LastTokenEmbedder(gpt2_path, device="cpu", batch_size=2, max_length=32)
        )
        clusters = SemanticClusters.fit(REFERENCE, embedder, num_clusters=4, n_init=2)
        fit_texts = embedder.texts
        scores = sem_ent(RESPONSES, clusters)
    finally:
        KMeans.fit = fit
    result["sem_ent"] = {
        **scores,
        "settings": clusters.settings,
        "labels": clusters.assign(REFERENCE).tolist(),
        "reference_distribution": clusters.reference_distribution.tolist(),
        # every process's fitted arrays, to check that they are the same everywhere
        "centroids_per_process": gather_object([clusters.centroids.tolist()]),
        "components_per_process": gather_object([clusters.pca_components.tolist()]),
        "kmeans_fits_per_process": gather_object([len(fits)]),
        "fit_texts_per_process": gather_object([fit_texts]),
        "distinct_reference_texts": len(set(REFERENCE)),
    }
    result["failure_per_process"] = gather_object([failure_seen()])
    return result


def failure_seen() -> str:
    """What each process raises when the step computed on the main process fails there."""
    from dialeval.distributed import computed_on_main

    def fail():
        raise ValueError("no clusters")

    try:
        computed_on_main(fail)
    except (ValueError, RuntimeError) as error:
        return f"{type(error).__name__}: {error}"
    return "nothing raised"


if __name__ == "__main__":
    with split_work():
        outcome = compute(*sys.argv[1:3])
    if process_state().is_main_process:
        with open(sys.argv[3], "w", encoding="utf-8") as handle:
            json.dump(outcome, handle)
    end_processes()
