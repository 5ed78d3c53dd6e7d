"""The one place the command line's metric order is written out: the other CLI tests derive their
expected figures from the registry (tests/registry_steps.py), so this test is what notices a
registry change that alters what a user sees. Adding a metric to the registry updates it here."""

from dialeval.cli.evaluate_job import step_names
from dialeval.metrics import registry

#: `dialeval evaluate --metric` names, in the order the job runs them and the report lists them.
STEPS = [
    "lexical_diversity",
    "corpus_lexical_diversity",
    "self_bleu",
    "sent_bert",
    "bertscore",
    "cross_encoder",
    "nli",
    "vendi",
    "sem_ent",
    "response_selection",
    "compression_ratio",
    "ead",
    "pos_templates",
    "remote_clique",
    "chamfer_distance",
    "self_repetition",
    "homogenization_rougel",
    "homogenization_bleu",
    "homogenization_bertscore",
    "mtld",
]
#: `dialeval meta-eval --metric` names.
SET_FIGURES = [
    "averaged_distinct_n",
    "ngram_cosine",
    "sent_bert",
    "bertscore",
    "cross_encoder",
    "nli",
    "nli_neutral",
    "nli_confidence",
    "vendi",
    "compression_ratio",
    "ead",
    "template_rate",
    "templates_per_token",
    "remote_clique",
    "chamfer_distance",
    "self_repetition",
    "homogenization_rougel",
    "homogenization_bleu",
    "homogenization_bertscore",
    "mtld",
]


def test_the_job_steps_and_their_order_are_the_ones_users_see():
    assert step_names() == STEPS


def test_the_meta_eval_figures_are_the_ones_users_see():
    assert list(registry.SET_SCORERS) == SET_FIGURES
