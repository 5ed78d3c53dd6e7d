"""evaluate module: Sem-Ent (Han et al. 2022, §3.1 Eq. 1-2), semantic diversity of generated
responses.

A thin wrapper of :class:`dialeval.metrics.sem_ent.clusters.SemanticClusters` and
:func:`dialeval.metrics.sem_ent.clusters.sem_ent`; see README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex (and would
# read a trailing comment on an import line as an install URL), hence the file-level exemption.
# ruff: noqa: I001
import os
from typing import TYPE_CHECKING, Any

import evaluate
from dialeval.distributed import is_sharing_work, process_state
from dialeval.metrics.engines.embedders import load_embedder
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.sem_ent.clusters import SemanticClusters
from dialeval.metrics.sem_ent.clusters import sem_ent
from dialeval.validation import ArgumentError
from dialeval.validation import ArgumentTypeError
from dialeval.validation import arguments_named
from dialeval.validation import check_corpus

if TYPE_CHECKING:
    from pathlib import Path

    from dialeval.type_aliases import DeviceLike, StrPath

_CITATION = """\
@inproceedings{han-etal-2022-measuring,
    title = "Measuring and Improving Semantic Diversity of Dialogue Generation",
    author = "Han, Seungju and Kim, Beomsu and Chang, Buru",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2022",
    year = "2022",
    publisher = "Association for Computational Linguistics",
}
"""

_DESCRIPTION = """\
Sem-Ent embeds responses, assigns each to one of k semantic clusters fitted on a reference
corpus (the training set's gold responses in the paper), and returns the natural-log entropy of
the generated responses' cluster histogram: 0 when every response falls in one cluster, ln k
when they spread evenly. The whole list of predictions is one corpus (one score). Scores are
comparable only under the same fitted clusters: save them (save_clusters_to=...) and pass
clusters=<dir> for every system you compare.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[str], the generated responses (all of them: one corpus).
    references: list[str], the reference corpus to fit the clusters on (any length; a compute()
        option, not one value per input); or give clusters= instead.
    clusters: a directory written by SemanticClusters.save / save_clusters_to, or a
        SemanticClusters object; its recorded embedder is used.
    embedder: "sentence_transformers" (default; the embedded all-MiniLM-L6-v2 works offline),
        "last_token" (the paper's: DialoGPT-large final hidden state of the last token) or
        "mean_pooling"; embedder_model: the model id or directory for it.
    num_clusters (20), pca_variance (0.9), seed (0), n_init (5), max_iter (500): the fit.
    save_clusters_to: directory to save freshly fitted clusters in (JSON + safetensors).
    batch_size, device, dtype, backend: passed to the embedder (backend: the model's runtime,
        "torch", "onnx" or "openvino"; see dialeval.runtimes).
Returns:
    sem_ent (nats), max_sem_ent (ln k), cluster_distribution (k shares in cluster order),
    num_texts, and clusters (the fit settings and the embedder identity).
Examples:
    >>> import evaluate
    >>> sem_ent = evaluate.load("dialeval/sem_ent")
    >>> training_responses = ["I love pizza.", "Sushi for dinner!", "Pasta tonight?", "This soup is great.",
    ...                       "It is raining.", "So sunny today.", "A storm is coming.", "It's freezing cold."]
    >>> result = sem_ent.compute(predictions=["Pizza again?", "More rain today."], references=training_responses,
    ...                          num_clusters=2)
    >>> round(result["sem_ent"], 4), round(result["max_sem_ent"], 4), result["num_texts"]
    (0.6931, 0.6931, 2)
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SemEnt(ResponsesMetric):
    scopes = ("corpus",)

    # The reference corpus has its own length, so it bypasses evaluate's row-aligned storage.
    references_option = "reference_corpus"

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=["https://github.com/hyperconnect/sem-ent"],
        )

    def _compute(
        self,
        predictions: list[str],
        reference_corpus: list[str] | None = None,
        clusters: "SemanticClusters | str | Path | None" = None,
        embedder: str = "sentence_transformers",
        embedder_model: str | None = None,
        num_clusters: int = 20,
        pca_variance: float = 0.9,
        seed: int = 0,
        n_init: int = 5,
        max_iter: int = 500,
        save_clusters_to: "StrPath | None" = None,
        batch_size: int | None = None,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        backend: str | None = None,
    ) -> dict:
        if reference_corpus is not None and clusters is not None:
            raise ArgumentError(
                "clusters",
                "is given along with `references`: give exactly one (saved clusters, or a corpus "
                "to fit them on)",
            )
        if reference_corpus is None and clusters is None:
            raise ArgumentError(
                "references",
                "is required (a corpus to fit clusters on) unless `clusters` (saved clusters) is "
                "given",
            )
        if clusters is not None:  # the fit's options would be ignored: refused, not dropped
            fit_options = {
                "embedder": (embedder, "sentence_transformers"),
                "embedder_model": (embedder_model, None),
                "num_clusters": (num_clusters, 20),
                "pca_variance": (pca_variance, 0.9),
                "seed": (seed, 0),
                "n_init": (n_init, 5),
                "max_iter": (max_iter, 500),
                "save_clusters_to": (save_clusters_to, None),
            }
            for name, (value, default) in fit_options.items():
                if value is not default and not (type(value) is type(default) and value == default):
                    raise ArgumentError(
                        name,
                        f"={value!r:.60} applies to fitting clusters on `references`, not to "
                        "saved `clusters`",
                    )
        if save_clusters_to is not None and not isinstance(save_clusters_to, (str, os.PathLike)):
            raise ArgumentTypeError(
                "save_clusters_to",
                f"must be a folder's path, got {type(save_clusters_to).__name__}: "
                f"{save_clusters_to!r:.60}",
            )
        check_corpus(predictions, "predictions", allow_empty=True)
        runtime: dict[str, Any] = {  # the embedder's keywords
            key: value
            for key, value in (
                ("batch_size", batch_size),
                ("device", device),
                ("dtype", dtype),
                ("backend", backend),
            )
            if value is not None
        }
        if clusters is None:
            with arguments_named(
                {"kind": "embedder", "model": "embedder_model", "reference_texts": "references"}
            ):
                text_embedder = load_embedder(embedder, embedder_model, **runtime)
                assert reference_corpus is not None  # required without clusters, checked above
                clusters = SemanticClusters.fit(
                    reference_corpus,
                    text_embedder,
                    num_clusters=num_clusters,
                    pca_variance=pca_variance,
                    seed=seed,
                    n_init=n_init,
                    max_iter=max_iter,
                )
            if save_clusters_to is not None and (
                not is_sharing_work() or process_state().is_main_process
            ):
                # under split_work every process holds the same clusters (the main one fitted them)
                clusters.save(save_clusters_to)
        elif not isinstance(clusters, SemanticClusters):
            with arguments_named({"directory": "clusters"}):
                clusters = SemanticClusters.load(clusters, **runtime)
        result = sem_ent(list(predictions), clusters)
        result["clusters"] = {"embedder": clusters.embedder_identity, **clusters.settings}
        return result


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["SemEnt"]
