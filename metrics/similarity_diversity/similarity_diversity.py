"""evaluate module: similarity diversity of response sets (Tevet & Berant 2021, §5 and §6.2).

A thin wrapper of :func:`dialeval.metrics.similarity_diversity.similarity.similarity_diversity`; see
README.md.
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import evaluate
from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.similarity_diversity.similarity import similarity_diversity
from dialeval.validation import check_response_sets
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dialeval.type_aliases import DeviceLike, WordTokenizer

_CITATION = """\
@inproceedings{tevet-berant-2021-evaluating,
  title = "Evaluating the Evaluation of Diversity in Natural Language Generation",
  author = "Tevet, Guy and Berant, Jonathan",
  booktitle = "Proceedings of EACL 2021", year = "2021", pages = "326--346"}
@inproceedings{reimers-gurevych-2019-sentence,
  title = "Sentence-{BERT}: Sentence Embeddings using {S}iamese {BERT}-Networks",
  author = "Reimers, Nils and Gurevych, Iryna", booktitle = "EMNLP-IJCNLP 2019", year = "2019"}
@inproceedings{zhang-2020-bertscore,
  title = "BERTScore: Evaluating Text Generation with BERT",
  author = "Zhang, Tianyi and Kishore, Varsha and Wu, Felix and Weinberger, Kilian Q. and Artzi, Yoav",
  booktitle = "ICLR 2020", year = "2020"}
"""  # noqa: E501

_DESCRIPTION = """\
The diversity of a response set as the negated mean similarity of its unordered pairs
(Tevet & Berant's §5 reduction), with the similarity one of: Sent-BERT cosine (default, with
the embedded all-MiniLM-L6-v2 offline), BERTScore F1 rescaled with its baseline, an STS
cross-encoder, or n-gram cosine averaged over n = 1..5.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]], one response set (>= 2 responses) per context.
    similarity: "sent_bert" (default), "bertscore", "cross_encoder" or "ngram_cosine".
    model: id or local directory; defaults: sent_bert "sentence-transformers/all-MiniLM-L6-v2"
        (embedded, offline), bertscore "FacebookAI/roberta-large" (layer 17), cross_encoder
        "cross-encoder/stsb-roberta-large"; ngram_cosine takes none.
    batch_size, device, dtype: model inference settings.
    num_layers, rescale_with_baseline, baseline: BERTScore options (default: the model's
        BERTScore layer, True, the model's baseline file).
    max_n, min_n, tokenizer: n-gram cosine options (default 5, 1, "tevet").
    allow_empty: score "" as a response instead of raising (default False).
    backend: the model's runtime: "auto" (default: ONNX Runtime for an encoder or classifier on
        the CPU, else torch), "torch", "onnx" or "openvino"; float32, figures equal to 1e-5.
Returns:
    similarity_diversity: mean over sets (higher is more diverse); per_set; num_sets;
    similarity; model.
Examples:
    >>> import evaluate
    >>> diversity = evaluate.load("dialeval/similarity_diversity")
    >>> sets = [["I love cats.", "Stocks fell today.", "Pass the salt."], ["I love cats.", "I adore cats."]]
    >>> [round(row["similarity_diversity"], 2) for row in diversity.compute(predictions=sets)["per_set"]]
    [-0.05, -0.86]
    >>> round(diversity.compute(predictions=sets, similarity="ngram_cosine", max_n=2)["similarity_diversity"], 4)
    -0.1667
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SimilarityDiversity(ResponsesMetric):
    scopes = ("sets",)

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=["https://github.com/GuyTevet/diversity-eval"],
        )

    def _compute(
        self,
        predictions: list[list[str]],
        similarity: str = "sent_bert",
        model: str | None = None,
        batch_size: int = 64,
        device: "DeviceLike" = None,
        dtype: str | None = None,
        num_layers: int | None = None,
        rescale_with_baseline: bool | None = None,
        baseline: float | None = None,
        max_n: int | None = None,
        min_n: int | None = None,
        tokenizer: "str | WordTokenizer | None" = None,
        allow_empty: bool = False,
        backend: str | None = None,
    ) -> dict:
        check_response_sets(predictions, "predictions", min_size=2, allow_empty=allow_empty)
        # None keeps the similarity's default; another similarity's option is refused, not ignored.
        given = {
            "num_layers": num_layers,
            "rescale_with_baseline": rescale_with_baseline,
            "baseline": baseline,
            "max_n": max_n,
            "min_n": min_n,
            "tokenizer": tokenizer,
        }
        options: dict[str, Any] = {  # the similarity's own options
            name: value for name, value in given.items() if value is not None
        }
        return similarity_diversity(
            predictions,
            similarity=similarity,
            model=model,
            batch_size=batch_size,
            device=device,
            dtype=dtype,
            backend=backend,
            allow_empty=allow_empty,
            **options,
        )


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["SimilarityDiversity"]
