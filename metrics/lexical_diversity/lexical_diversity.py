"""evaluate module: lexical diversity of response sets (Tevet & Berant 2021) or of a corpus (Sem-Ent
paper).

A thin wrapper of :func:`dialeval.metrics.lexical_diversity.by_scope.lexical_diversity`; see
README.md (the metric card).
"""

# One import per line: evaluate finds a module's dependencies with a per-line regex.
from typing import TYPE_CHECKING

import evaluate

from dialeval.metrics.engines.evaluate_module import ResponsesMetric
from dialeval.metrics.lexical_diversity.by_scope import lexical_diversity

if TYPE_CHECKING:
    from collections.abc import Mapping

    from dialeval.type_aliases import WordTokenizer

_CITATION = """\
@inproceedings{tevet-berant-2021-evaluating,
  title = "Evaluating the Evaluation of Diversity in Natural Language Generation",
  author = "Tevet, Guy and Berant, Jonathan",
  booktitle = "Proceedings of EACL 2021", year = "2021", pages = "326--346"}
@inproceedings{han-etal-2022-measuring,
  title = "Measuring and Improving Semantic Diversity of Dialogue Generation",
  author = "Han, Seungju and Kim, Beomsu and Chang, Buru",
  booktitle = "Findings of EMNLP 2022", year = "2022"}
@inproceedings{li-etal-2016-diversity,
  title = "A Diversity-Promoting Objective Function for Neural Conversation Models",
  author = "Li, Jiwei and Galley, Michel and Brockett, Chris and Gao, Jianfeng and Dolan, Bill",
  booktitle = "NAACL 2016", year = "2016"}
@inproceedings{zhu-2018-texygen,
  title = "Texygen: A Benchmarking Platform for Text Generation Models",
  author = "Zhu, Yaoming and others", booktitle = "SIGIR 2018", year = "2018"}
"""

_DESCRIPTION = """\
Lexical diversity at two scopes. A list of response sets (one list of responses per context)
gets Tevet & Berant's set-level averaged distinct-n and n-gram cosine diversity (n = 1..5), per
set and averaged; they reproduce the released decTest/conTest/McDiv scores exactly. A flat list
of responses (a whole generated corpus) gets Dist-n, Ent-n, LF and Self-BLEU.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: list[list[str]] (response sets) or list[str] (a corpus).
    max_n: set scope: highest n-gram order averaged (default 5); corpus scope: Dist/Ent orders (default 3).
    tokenizer: set scope only: "tevet" (default) or "casual".
    lf_threshold: corpus scope: a token is low-frequency when its reference count <= this (default 100).
    reference_corpus: corpus scope: list of texts or {token: count} that LF counts against
        (default: the predictions themselves, as the Sem-Ent released code).
    self_bleu_max_n: corpus scope: BLEU order of Self-BLEU (default 3, as Texygen).
    allow_empty: score "" as a response without tokens instead of raising (default False).
Returns:
    Set scope: averaged_distinct_n, ngram_cosine_diversity (means over sets), num_sets, per_set.
    Corpus scope: distinct_1..n, entropy_1..n, lf, self_bleu, num_responses, num_tokens.
Examples:
    >>> import evaluate
    >>> lexical = evaluate.load("dialeval/lexical_diversity")
    >>> round(lexical.compute(predictions=[["i am going", "i am going", "lets go i i"]])["averaged_distinct_n"], 4)
    0.5929
    >>> result = lexical.compute(predictions=["I don't know.", "I don't know.", "Maybe tomorrow?"])
    >>> result["scope"], round(result["distinct_1"], 4), result["num_responses"]
    ('corpus', 0.6364, 3)

    Batches queued with add_batch (or add) are scored by compute() as one input:

    >>> for batch in ([["i am going", "i am going", "lets go i i"]], [["I like tea.", "Coffee, please!"]]):
    ...     lexical.add_batch(predictions=batch)
    >>> [{figure: round(value, 4) for figure, value in row.items()} for row in lexical.compute(max_n=2)["per_set"]]
    [{'averaged_distinct_n': 0.6071, 'ngram_cosine_diversity': -0.4905}, {'averaged_distinct_n': 1.0, 'ngram_cosine_diversity': 0.0}]
"""  # noqa: E501


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LexicalDiversity(ResponsesMetric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=self.prediction_features(),
            reference_urls=[
                "https://github.com/GuyTevet/diversity-eval",
                "https://github.com/hyperconnect/sem-ent",
            ],
        )

    def _compute(
        self,
        predictions: list[str] | list[list[str]],
        max_n: int | None = None,
        tokenizer: "str | WordTokenizer | None" = None,
        lf_threshold: int | None = None,
        reference_corpus: "list[str] | Mapping[str, int] | None" = None,
        self_bleu_max_n: int | None = None,
        allow_empty: bool = False,
    ) -> dict:
        # None keeps the scope's default (max_n: 5 for sets, 3 for a corpus); lexical_diversity
        # refuses an option of the other scope rather than ignoring it.
        given = {
            "max_n": max_n,
            "tokenizer": tokenizer,
            "lf_threshold": lf_threshold,
            "reference_corpus": reference_corpus,
            "self_bleu_max_n": self_bleu_max_n,
        }
        options = {name: value for name, value in given.items() if value is not None}
        return lexical_diversity(predictions, allow_empty=allow_empty, **options)


#: The evaluate module (evaluate.load finds it by its base class; named here for `make
#: lint-dead-code`).
__all__ = ["LexicalDiversity"]
