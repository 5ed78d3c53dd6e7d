"""`dialeval evaluate` as one job: the registry's steps, one pass per model, response sets or a corpus."""

import dataclasses
import json
import os
import threading
from typing import ClassVar

import pytest
from registry_steps import expected_figures
from sentence_transformers import SentenceTransformer

from dialeval.cli import evaluate_job, evaluate_options, main
from dialeval.cli.evaluate_job import EvaluationOptions, evaluate_corpus, evaluate_response_sets
from dialeval.hub import EMBEDDED_SENTENCE_MODEL, load_sentence_encoder, resolve_model_path
from dialeval.io import ResponseSet
from dialeval.metrics import registry
from dialeval.metrics.engines.job_steps import JobStep, StepOutcome
from dialeval.sentence_graph import ExportedSentenceEncoder

MINILM = EMBEDDED_SENTENCE_MODEL
# Responses repeat within and across sets: a model must see each distinct text once per job.
SETS = [
    ["I went hiking.", "I fixed the sink.", "Nothing much.", "I went hiking."],
    ["Nothing much.", "Not much, you?", "We ate seafood on the coast."],
    ["Sure!", "Maybe tomorrow?", "I fixed the sink."],
]
REFERENCE = [
    "I love pizza.",
    "Sushi for dinner!",
    "Pasta tonight?",
    "It is raining.",
    "So sunny today.",
    "Nothing much.",
    "We won the final.",
    "I run every morning.",
    "My boss is angry.",
]
NO_PAIR_MODELS = dict(nli_models=[], bertscore_models=[], cross_encoder_models=[])


@pytest.fixture()
def encoded(monkeypatch):
    """Every text a sentence encoder is asked to encode, in call order: SentenceTransformer's
    ``encode``, and the exported encoder's that a process uses once the pipeline is recorded."""
    seen: list[str] = []
    # loaded (and its pipeline checked and recorded) before counting: the check encodes probes
    load_sentence_encoder(EMBEDDED_SENTENCE_MODEL)

    def counted(original):
        def counting(self, sentences, *args, **kwargs):
            seen.extend([sentences] if isinstance(sentences, str) else sentences)
            return original(self, sentences, *args, **kwargs)

        return counting

    for encoder in (SentenceTransformer, ExportedSentenceEncoder):
        monkeypatch.setattr(encoder, "encode", counted(encoder.encode))
    return seen


def _sets():
    return [ResponseSet(None, responses) for responses in SETS]


def test_sent_bert_vendi_and_sem_ent_encode_each_distinct_text_once(encoded):
    options = EvaluationOptions(
        **NO_PAIR_MODELS, reference_corpus=REFERENCE, sem_ent_num_clusters=3, progress=False
    )
    report = evaluate_response_sets(_sets(), options)
    assert {f"sent_bert_diversity[{MINILM}]", f"vendi_score[{MINILM}]", "sem_ent"} <= set(
        report["metrics"]
    )
    distinct = {text for responses in SETS for text in responses} | set(REFERENCE)
    # 3 metrics on one model: every distinct text once, no more
    assert sorted(encoded) == sorted(distinct)


def test_a_sem_ent_that_cannot_fit_is_skipped_before_its_texts_are_encoded(encoded):
    options = EvaluationOptions(
        **NO_PAIR_MODELS, reference_corpus=REFERENCE, sem_ent_num_clusters=20, progress=False
    )
    report = evaluate_response_sets(_sets(), options)
    skipped = {entry["metric"]: entry["reason"] for entry in report["skipped"]}
    assert "fewer than the 20 clusters to fit" in skipped["sem_ent"]
    # sent-BERT and Vendi encode the responses; nothing encodes the reference corpus
    assert sorted(encoded) == sorted({text for responses in SETS for text in responses})


def test_one_model_under_two_names_is_encoded_once(encoded):
    """The store is keyed by the resolved model: the embedded model's id and its folder are one model."""
    folder = resolve_model_path(MINILM)
    options = EvaluationOptions(**NO_PAIR_MODELS, sentence_models=[MINILM, folder], progress=False)
    report = evaluate_response_sets(_sets(), options)
    assert (
        report["metrics"][f"sent_bert_diversity[{MINILM}]"]["sent_bert_diversity"]
        == report["metrics"][f"sent_bert_diversity[{folder}]"]["sent_bert_diversity"]
    )
    assert sorted(encoded) == sorted({text for responses in SETS for text in responses})


def test_a_job_gives_the_numbers_of_the_metrics_called_alone():
    from dialeval.metrics import sent_bert_diversity, vendi_score

    options = EvaluationOptions(**NO_PAIR_MODELS, progress=False)
    report = evaluate_response_sets(_sets(), options)
    assert [row["sent_bert_diversity"] for row in report["per_set"]] == sent_bert_diversity(SETS)
    assert [row["vendi_score"] for row in report["per_set"]] == [
        row["vendi_score"] for row in vendi_score(SETS)["per_set"]
    ]


def test_nli_scores_each_distinct_pair_once_for_all_its_figures(
    tiny_roberta_nli_path, scored_pairs
):
    options = EvaluationOptions(
        sentence_models=[],
        bertscore_models=[],
        cross_encoder_models=[],
        nli_models=[tiny_roberta_nli_path],
        progress=False,
    )
    report = evaluate_response_sets(_sets(), options)
    nli = report["metrics"][f"nli_diversity[{tiny_roberta_nli_path}]"]
    assert {"nli_diversity", "nli_diversity_neutral", "nli_diversity_confidence"} <= set(nli)
    # one forward row per distinct pair, all figures from it
    assert len(scored_pairs) == nli["num_unique_pairs"]


def test_every_registered_step_that_fits_response_sets_runs_or_says_why():
    options = EvaluationOptions(reference_corpus=REFERENCE, sem_ent_num_clusters=3, progress=False)
    report = evaluate_response_sets(_sets(), options)
    ran_or_skipped = {name.split("[")[0] for name in report["metrics"]} | {
        entry["metric"].split("[")[0] for entry in report["skipped"]
    }
    expected = {
        step.report_name or step.name
        for step in registry.JOB_STEPS
        if "response_set" in step.scopes and (step.applies is None or step.applies(options))
    }
    assert ran_or_skipped == expected
    assert "compression_ratio" in report["metrics"]  # registered, and now run by the job


def test_a_new_registry_step_joins_the_job_without_a_cli_edit(monkeypatch, tmp_path):
    def longest_response(data, model, options, progress):
        progress(len(data.sets))
        return StepOutcome(
            {"longest": max(len(r) for r in data.responses)},
            [{"longest": max(map(len, s))} for s in data.sets],
        )

    step = JobStep("longest_response", ("response_set",), longest_response)
    monkeypatch.setattr(registry, "JOB_STEPS", (*registry.JOB_STEPS, step))
    data = tmp_path / "sets.jsonl"
    data.write_text(
        "".join(json.dumps({"responses": responses}) + "\n" for responses in SETS), encoding="utf-8"
    )
    out = tmp_path / "r.json"
    assert (
        main(
            ["evaluate", str(data), "-o", str(out), "--no-progress", "--metric", "longest_response"]
        )
        == 0
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert list(report["metrics"]) == ["longest_response"]
    assert [row["longest"] for row in report["per_set"]] == [max(map(len, s)) for s in SETS]


def test_metric_restricts_the_job_and_bad_names_name_the_flag(tmp_path, capsys):
    data = tmp_path / "sets.jsonl"
    data.write_text(
        "".join(json.dumps({"responses": responses}) + "\n" for responses in SETS), encoding="utf-8"
    )
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                str(data),
                "-o",
                str(out),
                "--no-progress",
                "--metric",
                "sent_bert",
                "--metric",
                "vendi",
            ]
        )
        == 0
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(report["metrics"]) == [f"sent_bert_diversity[{MINILM}]", f"vendi_score[{MINILM}]"]
    assert report["skipped"] == []
    assert main(["evaluate", str(data), "--no-progress", "--metric", "distinct-n"]) == 2
    err = capsys.readouterr().err
    assert (
        "`--metric` must name steps of" in err
        and "'distinct-n'" in err
        and "compression_ratio" in err
    )
    assert main(["evaluate", str(data), "--no-progress", "--metric", "sem_ent"]) == 2
    assert "`--metric`: sem_ent needs --reference-corpus" in capsys.readouterr().err


def test_a_corpus_gets_the_corpus_steps_only(encoded):
    responses = [text for responses in SETS for text in responses]
    options = EvaluationOptions(**NO_PAIR_MODELS, progress=False)
    report = evaluate_corpus(responses, options)
    assert report["scope"] == "corpus" and report["num_responses"] == len(responses)
    assert sorted(report["metrics"]) == sorted(
        expected_figures("corpus", options, {"--sentence-model": [MINILM]})
    )
    assert all(summary["scope"] == "corpus" for summary in report["metrics"].values())
    assert sorted(encoded) == sorted(set(responses))
    from dialeval.metrics import vendi_score

    assert report["metrics"][f"vendi_score[{MINILM}]"]["vendi_score"] == pytest.approx(
        vendi_score(responses, scope="corpus")["vendi_score"], rel=1e-12
    )
    with pytest.raises(
        ValueError, match="`metrics`: lexical_diversity does not run on a corpus input"
    ):
        evaluate_corpus(responses, dataclasses.replace(options, metrics=["lexical_diversity"]))
    with pytest.raises(ValueError, match="line 2: the response is empty"):
        evaluate_corpus(["fine", ""], options, where=["c.txt:line 1", "c.txt:line 2"])


def test_settings_declared_twice_are_refused():
    @dataclasses.dataclass
    class Clash:
        max_n: int = 3

    with pytest.raises(TypeError, match="'max_n' is declared by both LexicalOptions and Clash"):
        evaluate_options._compose((*registry.job_option_classes(), Clash))


class _RecordingBar:
    """tqdm's interface as the job uses it; records what each bar was told."""

    bars: ClassVar[list] = []

    def __init__(self, total=None, desc=None, unit="it", disable=False, leave=True):
        self.total, self.desc, self.unit, self.n, self.resets = total, desc, unit, 0, []
        _RecordingBar.bars.append(self)

    def update(self, count=1):
        self.n += count

    def reset(self, total=None):
        self.resets.append(total)
        self.total, self.n = total, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_each_step_bar_counts_its_engine_work_and_ends_full(monkeypatch, tiny_cross_encoder_path):
    _RecordingBar.bars = []
    monkeypatch.setattr(evaluate_job, "tqdm", _RecordingBar)
    options = EvaluationOptions(
        nli_models=[],
        bertscore_models=[],
        cross_encoder_models=[tiny_cross_encoder_path],
        batch_size=4,
    )
    evaluate_response_sets(_sets(), options)
    bars = {bar.desc: bar for bar in _RecordingBar.bars}
    embedding = bars[f"sentence embeddings ({MINILM})"]
    assert embedding.unit == "text" and embedding.n == embedding.total == len(
        {t for s in SETS for t in s}
    )
    cross = bars[f"cross_encoder_diversity[{tiny_cross_encoder_path}]"]
    # pairs, not sets
    assert cross.unit == "pair" and len(cross.resets) == 1 and cross.n == cross.total > len(SETS)
    for name in (f"sent_bert_diversity[{MINILM}]", f"vendi_score[{MINILM}]", "lexical_diversity"):
        # read from the shared vectors
        assert bars[name].unit == "set" and bars[name].n == bars[name].total == len(SETS)


def test_the_command_line_scores_a_corpus_file(tmp_path, capsys):
    corpus = tmp_path / "generated.txt"
    responses = [text for responses in SETS for text in responses]
    corpus.write_text("\n".join(responses) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    reference = tmp_path / "train.txt"
    reference.write_text("\n".join(REFERENCE) + "\n", encoding="utf-8")
    argv = [
        "evaluate",
        str(corpus),
        "-o",
        str(out),
        "--no-progress",
        "--nli-model",
        "none",
        "--bertscore-model",
        "none",
        "--cross-encoder-model",
        "none",
        "--reference-corpus",
        str(reference),
        "--sem-ent-k",
        "3",
    ]
    assert main(argv) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["scope"] == "corpus" and report["num_responses"] == len(responses)
    with_reference = EvaluationOptions(reference_corpus=REFERENCE, sem_ent_num_clusters=3)
    assert "sem_ent" in expected_figures("corpus", with_reference)
    assert sorted(report["metrics"]) == sorted(
        expected_figures("corpus", with_reference, {"--sentence-model": [MINILM]})
    )
    assert report["metrics"]["corpus_lexical_diversity"]["lf_counted_against"] == "reference corpus"
    assert f"a corpus of {len(responses)} responses; report: {out}" in capsys.readouterr().out
    assert main([*argv, "--metric", "sent_bert"]) == 2
    assert (
        "`--metric`: sent_bert does not run on a corpus input (it runs on: response_set)"
        in capsys.readouterr().err
    )
    assert main([*argv, "--responses-column", "text"]) == 2
    assert "`--responses-column` does not apply to a lines input" in capsys.readouterr().err


@pytest.mark.parametrize("off", [["--sentence-model", "none"], ["--no-sentence-model"]])
def test_a_metric_asked_for_with_its_model_turned_off_is_an_error(tmp_path, capsys, off):
    sets = tmp_path / "s.jsonl"
    sets.write_text("".join(json.dumps({"responses": r}) + "\n" for r in SETS), encoding="utf-8")
    out = tmp_path / "r.json"
    assert (
        main(
            ["evaluate", str(sets), "-o", str(out), "--no-progress", *off, "--metric", "sent_bert"]
        )
        == 2
    )
    assert (
        "`--metric`: sent_bert was asked for but its model is turned off" in capsys.readouterr().err
    )
    assert (
        main(
            ["evaluate", str(sets), "-o", str(out), "--no-progress", *off, "--metric", "self_bleu"]
        )
        == 0
    )
    assert list(json.loads(out.read_text(encoding="utf-8"))["metrics"]) == ["self_bleu"]


def test_a_blank_corpus_line_is_an_empty_response_refused_or_scored_never_dropped(tmp_path, capsys):
    corpus = tmp_path / "generated.txt"
    corpus.write_text("hello there\n\n   \nfine thanks\n", encoding="utf-8")
    out = tmp_path / "r.json"
    argv = [
        "evaluate",
        str(corpus),
        "-o",
        str(out),
        "--no-progress",
        "--metric",
        "corpus_lexical_diversity",
    ]
    assert main(argv) == 2
    assert f"{corpus}:2: the response is empty" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--allow-empty"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["num_responses"] == 4  # as the Python API counts the same responses
    from dialeval.cli.evaluate_job import EvaluationOptions, evaluate_corpus

    api = evaluate_corpus(
        ["hello there", "", "   ", "fine thanks"],
        EvaluationOptions(metrics=["corpus_lexical_diversity"], allow_empty=True, progress=False),
    )
    assert (
        api["metrics"]["corpus_lexical_diversity"] == report["metrics"]["corpus_lexical_diversity"]
    )


def test_systems_compared_in_one_command_share_the_encoder_pass(tmp_path, encoded):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(
        "".join(json.dumps({"responses": r}) + "\n" for r in SETS[:2]), encoding="utf-8"
    )
    second.write_text(
        "".join(json.dumps({"responses": r}) + "\n" for r in SETS[1:]), encoding="utf-8"
    )
    assert (
        main(
            [
                "evaluate",
                str(first),
                str(second),
                "-o",
                str(tmp_path / "t.csv"),
                "--no-progress",
                "--metric",
                "sent_bert",
                "--metric",
                "vendi",
            ]
        )
        == 0
    )
    # the shared set: once
    assert sorted(encoded) == sorted({text for responses in SETS for text in responses})


def test_pairwise_steps_skip_a_large_corpus_unless_asked_for(encoded, monkeypatch):
    from dialeval.metrics.engines import job_steps

    monkeypatch.setattr(job_steps, "PAIRWISE_CORPUS_LIMIT", 5)
    responses = [text for responses in SETS for text in responses]
    assert len(set(responses)) > 5
    report = evaluate_corpus(responses, EvaluationOptions(**NO_PAIR_MODELS, progress=False))
    skipped = {entry["metric"]: entry["reason"] for entry in report["skipped"]}
    for name in ("homogenization_rougel", "homogenization_bleu", f"chamfer_distance[{MINILM}]"):
        assert name not in report["metrics"]
        assert "compares every pair" in skipped[name] and "--metric" in skipped[name]
    assert f"remote_clique[{MINILM}]" in report["metrics"]  # a closed form: no pairs
    asked = evaluate_corpus(
        responses,
        EvaluationOptions(
            **NO_PAIR_MODELS, progress=False, metrics=["homogenization_rougel", "chamfer_distance"]
        ),
    )
    assert sorted(asked["metrics"]) == [f"chamfer_distance[{MINILM}]", "homogenization_rougel"]
    # response sets are compared within each set: never skipped
    assert (
        "homogenization_rougel"
        in evaluate_response_sets(_sets(), EvaluationOptions(**NO_PAIR_MODELS, progress=False))[
            "metrics"
        ]
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_an_input_read_once_with_the_files_figures(tmp_path, capsys):
    lines = "".join(json.dumps({"responses": responses}) + "\n" for responses in SETS)
    sets = tmp_path / "sets.jsonl"
    sets.write_text(lines, encoding="utf-8")
    pipe = tmp_path / "piped.jsonl"
    os.mkfifo(pipe)

    def write():
        with open(pipe, "w", encoding="utf-8") as writer:
            writer.write(lines)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    lexical = ["--no-progress", "--metric", "lexical_diversity", "--metric", "compression_ratio"]
    assert main(["evaluate", str(pipe), "-o", str(tmp_path / "piped.json"), *lexical]) == 0
    writer.join(timeout=10)
    assert main(["evaluate", str(sets), "-o", str(tmp_path / "file.json"), *lexical]) == 0
    piped, filed = (
        json.loads((tmp_path / name).read_text(encoding="utf-8"))
        for name in ("piped.json", "file.json")
    )
    assert piped["metrics"] == filed["metrics"] and len(piped["per_set"]) == len(SETS)
    # nothing is left in the pipe to hash: the provenance says so rather than "Hub dataset"
    assert piped["provenance"]["input"] == {"path": str(pipe), "stream": True}
    assert f"input {pipe} (a named pipe, not hashed)" in capsys.readouterr().out
