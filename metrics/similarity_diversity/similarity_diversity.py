"""evaluate module: similarity diversity of response sets (Tevet & Berant 2021, §5 and §6.2).

A thin wrapper of :func:`dialeval.metrics.similarity_diversity.similarity.similarity_diversity`; see README.md.
"""
# One import per line: evaluate finds a module's dependencies with a per-line regex.
# ruff: noqa: I001
import datasets
import evaluate
from dialeval.metrics.similarity_diversity.similarity import similarity_diversity
from dialeval.validation import check_module_inputs

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
"""

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
    num_layers, rescale_with_baseline, baseline: BERTScore options.
    max_n, min_n, tokenizer: n-gram cosine options.
    allow_empty: score "" as a response instead of raising (default False).
Returns:
    similarity_diversity: mean over sets (higher is more diverse); per_set; num_sets;
    similarity; model.
Examples:
    >>> import evaluate
    >>> diversity = evaluate.load("metrics/similarity_diversity")
    >>> diversity.compute(predictions=[["I love cats.", "Stocks fell today.", "Pass the salt."]])["similarity_diversity"]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SimilarityDiversity(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Sequence(datasets.Value("string"))}),
            reference_urls=["https://github.com/GuyTevet/diversity-eval"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score ``predictions`` (a list of response sets); see the arguments below."""
        check_module_inputs(predictions, references, "similarity_diversity")
        return super().compute(predictions=predictions, **kwargs)

    def _compute(self, predictions, **options):
        return similarity_diversity(predictions, **options)
