"""The parsers keep every command, flag and default that the hand-written parsers had.

Each subcommand's flags are pinned below as the hand-written argparse parsers of
``dialeval/cli/main.py`` had them before the parsers were built from the jobs' option dataclasses;
the job functions are replaced by recorders, so each test checks what a command line hands the
job (the effective defaults included), not how the parser stores it.
"""

import argparse
import dataclasses
import json

import pytest
from conftest import REPO_ROOT

import dialeval.datasets_scripts
from dialeval.cli import (
    build_parser,
    dtg_contexts,
    dtg_job,
    dtg_summary,
    evaluate_job,
    main,
    meta_eval_job,
)
from dialeval.metrics import registry
from dialeval.option_fields import CliOption, cli_fields

DEMO = REPO_ROOT / "examples" / "demo_response_sets.jsonl"

# Written down from the hand-written parsers (option strings sorted; "switch" takes no value).
PINNED_FLAGS = {
    "evaluate": {
        # widened on purpose (several inputs compare systems; more input formats), the narrower forms still parse
        "input": "one or more required",
        "--format": "value choices=auto,jsonl,json,csv,parquet,dataset,lines",
        "--output -o": "value",
        "--sentence-model": "repeatable",
        "--no-sentence-model": "switch",
        "--nli-model": "repeatable",
        "--bertscore-model": "repeatable",
        "--cross-encoder-model": "repeatable",
        "--max-n": "value int",
        "--lf-threshold": "value int",
        "--ead-n": "value int",
        "--ead-vocab-size": "value int",
        "--reference-corpus": "value",
        "--sem-ent-clusters": "value",
        "--sem-ent-embedder": "value",
        "--sem-ent-k": "value int",
        "--sem-ent-seed": "value int",
        "--save-sem-ent-clusters": "value",
        "--plot": "value",
        "--per-set": "switch",
        "--allow-empty": "switch",
        "--selection-model": "repeatable",
        "--selection-questions": "value",
        "--selection-reduction": "value choices=sum,mean",
        "--selection-batch-size": "value int",
        "--batch-size": "value int",
        "--device": "value",
        "--no-progress": "switch",
    },
    "meta-eval": {
        "--metric": "repeatable",
        "--test": "value choices=contest,dectest,mcdiv,mcdiv_nuggets required",
        "--task": "repeatable choices=story,resp,prompt",
        "--data-dir": "value",
        "--cache-dir": "value",
        "--round-scores": "value int",
        "--bootstrap": "switch",
        "--num-resamples": "value int",
        "--seed": "value int",
        "--no-human": "switch",
        "--rated": "switch",
        "--plot": "value",
        "--output -o": "value",
        "--batch-size": "value int",
        "--device": "value",
    },
    "export-dataset": {
        "name": "value choices=circa,dailydialog,dailydialog_pp,diversity_eval,empathetic_dialogues,polar_questions,response_selection required",
        "--to": "value required",
        "--config": "repeatable",
        "--data-dir": "value",
        "--cache-dir": "value",
        "--no-verify": "switch",
        "--push-to-hub": "value",
        "--private": "switch",
    },
    "push-metrics": {
        "--namespace": "value",
        "--to": "value",
        # every registered module (the registry is the one list of metrics)
        "--metric": "repeatable choices=" + ",".join(sorted(registry.BY_NAME)),
        "--private": "switch",
    },
    "dtg": {
        "--model": "value required",
        "--dataset": "value",
        "--input": "value",
        "--split": "value",
        "--data-dir": "value",
        "--metric": "value choices=nli,sent_bert,distinct_n",
        "--metric-model": "value",
        "--threshold": "value float",
        "--num-responses": "value int",
        "--max-samples": "value int",
        "--decoding": "value choices=sample,beam",
        "--num-beams": "value int",
        "--top-p": "value float",
        "--max-new-tokens": "value int",
        "--max-context-tokens": "value int",
        "--turn-separator": "value",
        "--seed": "value int",
        "--batch-size": "value int",
        "--limit": "value int",
        "--output -o": "value required",
        "--overwrite": "switch",
        "--device": "value",
        "--no-progress": "switch",
    },
    "dtg-summary": {
        "runs": "one or more required",
        "--output -o": "value",
    },
}
# Flags added since, on purpose (each has its own test).
ADDED_FLAGS: dict[str, set[str]] = {
    "evaluate": {
        "--metric",  # test_evaluate_job.py: --metric picks the registry's steps
        # test_io.py / test_evaluate_formats.py: input columns, output formats, comparison
        "--responses-column",
        "--context-column",
        "--split",
        "--dataset-config",
        "--output-format",
        "--per-set-csv",
        "--decimals",
        "--resume",  # test_safe_output.py: resuming from checkpoints
        "--overwrite",  # test_output_ownership.py: replacing files dialeval did not write
        # test_significance.py: intervals, the baseline of the tests and how systems pair
        "--ci",
        "--num-resamples",
        "--seed",
        "--baseline",
        "--pairing",
    },
    "meta-eval": {
        "--backend",  # test_meta_eval_cli.py: the model-based measures on a runtime backend
        "--no-progress",  # test_cli.py: progress bars
        "--no-verify",
        "--overwrite",  # test_output_ownership.py
    },  # test_meta_eval_cli.py: a changed release file read anyway
    # test_dtg_cli.py: the decoding settings DTG sets itself, trials, GPU options
    "dtg": {
        "--top-k",
        "--temperature",
        "--min-new-tokens",
        "--no-repeat-ngram-size",
        "--repetition-penalty",
        "--nli-objective",
        "--tie-break",
        "--trials",
        "--dtype",
        "--metric-dtype",
        "--nli-batch-size",
        "--no-verify",
    },  # below: passed to the test set's checksum check
    "dtg-summary": {"--bertscore-model", "--device", "--overwrite"},  # Table 5's relevance
    # test_output_ownership.py: replacing files dialeval did not write
    "export-dataset": {"--overwrite"},
    "push-metrics": {"--overwrite"},
}


def _describe(action: argparse.Action) -> str:
    if action.nargs == 0:
        kind = "switch"
    elif isinstance(action, argparse._AppendAction):
        kind = "repeatable"
    elif action.nargs == "+":
        kind = "one or more"
    else:
        kind = "value"
    if action.type is not None:
        kind += f" {action.type.__name__}"
    if action.choices:
        kind += " choices=" + ",".join(action.choices)
    if action.required:
        kind += " required"
    return kind


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(commands.choices)


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    return {
        " ".join(sorted(action.option_strings)) or action.dest: _describe(action)
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
    }


def _spec_flags() -> dict[str, tuple[str, CliOption]]:
    """Every flag the metric folders' settings declare (``MetricSpec.settings``): flag -> (the
    field it sets, its option). A metric's flags come from its folder, so none is pinned above
    for a metric added since."""
    declared = {}
    for spec in registry.SPECS:
        for cls in spec.settings:
            for field, cli in cli_fields(cls):
                for flag in (*cli.flags, *([cli.off_flag] if cli.off_flag else [])):
                    declared[flag] = (field.name, cli)
    return declared


@pytest.mark.parametrize("command", sorted(PINNED_FLAGS))
def test_every_flag_keeps_its_form(command):
    flags = _flags(_subparsers()[command])
    assert {flag: flags.get(flag) for flag in PINNED_FLAGS[command]} == PINNED_FLAGS[command]
    from_specs = set(_spec_flags()) if command == "evaluate" else set()
    assert set(flags) - set(PINNED_FLAGS[command]) - from_specs == ADDED_FLAGS.get(command, set())


def test_every_flag_a_metric_spec_declares_is_an_evaluate_flag_of_its_field():
    actions = {
        flag: action
        for action in _subparsers()["evaluate"]._actions
        for flag in action.option_strings
    }
    declared = _spec_flags()
    assert declared and set(declared) <= set(actions), set(declared) - set(actions)
    for flag, (name, cli) in declared.items():
        assert actions[flag].dest.partition(":")[0] == name, flag  # an off switch: NAME:off
        if cli.repeatable and flag in cli.flags:
            assert isinstance(actions[flag], argparse._AppendAction), flag


def test_the_same_commands_and_the_dtg_source_group():
    assert sorted(_subparsers()) == sorted(PINNED_FLAGS)
    dtg = _subparsers()["dtg"]
    groups = [
        sorted(a.option_strings[0] for a in group._group_actions)
        for group in dtg._mutually_exclusive_groups
    ]
    assert groups == [["--dataset", "--input"]] and dtg._mutually_exclusive_groups[0].required


class _Recorded(Exception):
    """Stops a command once its job was called: the test needs its arguments, not its work."""


def _options(value) -> dict:
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else dict(value)


def _subset(actual: dict, expected: dict) -> dict:
    return {key: actual.get(key, "<absent>") for key in expected}


# -- evaluate --------------------------------------------------------------------------------

EVALUATION_DEFAULTS = {
    "sentence_models": ["sentence-transformers/all-MiniLM-L6-v2"],
    "nli_models": ["FacebookAI/roberta-large-mnli"],
    "bertscore_models": ["FacebookAI/roberta-large"],
    "cross_encoder_models": ["cross-encoder/stsb-roberta-large"],
    "max_n": 5,
    "corpus_max_n": 3,
    "lf_threshold": 100,
    "reference_corpus": None,
    "sem_ent_clusters": None,
    "sem_ent_embedder": "sentence_transformers",
    "sem_ent_embedder_model": None,
    "sem_ent_num_clusters": 20,
    "sem_ent_seed": 0,
    "save_sem_ent_clusters": None,
    "selection_models": [],
    "selection_questions": None,
    "selection_reduction": "sum",
    "selection_batch_size": 16,
    "allow_empty": False,
    "batch_size": 64,
    "device": None,
    "progress": True,
}


@pytest.fixture()
def record_evaluation(monkeypatch):
    calls = []

    def recorder(sets, options=None, checkpoint=None, statistics=None):
        calls.append((sets, options))
        return {
            "num_sets": len(sets),
            "num_responses": sum(len(s.responses) for s in sets),
            "metrics": {},
            "skipped": [],
            "per_set": [],
        }

    monkeypatch.setattr(evaluate_job, "evaluate_response_sets", recorder)
    return calls


def test_evaluate_defaults(record_evaluation, tmp_path, capsys):
    data = tmp_path / "sets.jsonl"
    data.write_bytes(DEMO.read_bytes())
    assert main(["evaluate", str(data)]) == 0
    ((sets, options),) = record_evaluation
    assert len(sets) == 8
    assert _subset(_options(options), EVALUATION_DEFAULTS) == EVALUATION_DEFAULTS
    assert (tmp_path / "sets.diversity.json").is_file()  # the default --output
    assert f"report: {tmp_path / 'sets.diversity.json'}" in capsys.readouterr().out


def test_evaluate_every_flag(record_evaluation, tmp_path, capsys):
    data = tmp_path / "sets.txt"
    data.write_bytes(DEMO.read_bytes())
    reference = tmp_path / "ref.txt"
    reference.write_text("one\n\ntwo\n", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"context": ["hi"], "candidates": ["a", "b"], "label": 1}) + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "deep" / "r.json"
    argv = [
        "evaluate",
        str(data),
        "--format",
        "jsonl",
        "-o",
        str(out),
        "--sentence-model",
        "A",
        "--sentence-model",
        "B",
        "--nli-model",
        "none",
        "--bertscore-model",
        "X",
        "--cross-encoder-model",
        "NONE",
        "--max-n",
        "3",
        "--lf-threshold",
        "7",
        "--reference-corpus",
        str(reference),
        "--sem-ent-clusters",
        "C",
        "--sem-ent-embedder",
        "last_token=M",
        "--sem-ent-k",
        "4",
        "--sem-ent-seed",
        "2",
        "--save-sem-ent-clusters",
        "S",
        "--allow-empty",
        "--selection-model",
        "L1",
        "--selection-model",
        "L2",
        "--selection-questions",
        str(questions),
        "--selection-reduction",
        "mean",
        "--selection-batch-size",
        "3",
        "--batch-size",
        "9",
        "--device",
        "cpu",
        "--no-progress",
        "--per-set",
    ]
    assert main(argv) == 0
    ((_sets, options),) = record_evaluation
    expected = {
        "sentence_models": ["A", "B"],
        "nli_models": [],
        "bertscore_models": ["X"],
        "cross_encoder_models": [],
        "max_n": 3,
        "corpus_max_n": 3,
        "lf_threshold": 7,
        "reference_corpus": ["one", "two"],
        "sem_ent_clusters": "C",
        "sem_ent_embedder": "last_token",
        "sem_ent_embedder_model": "M",
        "sem_ent_num_clusters": 4,
        "sem_ent_seed": 2,
        "save_sem_ent_clusters": "S",
        "selection_models": ["L1", "L2"],
        "selection_questions": {"contexts": [["hi"]], "candidates": [["a", "b"]], "labels": [1]},
        "selection_reduction": "mean",
        "selection_batch_size": 3,
        "allow_empty": True,
        "batch_size": 9,
        "device": "cpu",
        "progress": False,
    }
    assert _subset(_options(options), expected) == expected
    assert out.is_file()
    assert (
        main(["evaluate", str(data), "--format", "jsonl", "-o", str(out), "--no-sentence-model"])
        == 0
    )
    assert record_evaluation[-1][1].sentence_models == []


def test_evaluate_selection_needs_both_flags(record_evaluation, capsys):
    assert main(["evaluate", str(DEMO), "--selection-model", "L"]) == 2
    assert "needs both `--selection-model` and `--selection-questions`" in capsys.readouterr().err
    assert record_evaluation == []


# -- meta-eval -------------------------------------------------------------------------------

META_EVAL_DEFAULTS = {
    "batch_size": 64,
    "device": None,
    "round_scores": None,
    "bootstrap": False,
    "num_resamples": 1000,
    "seed": 0,
    "data_dir": None,
    "cache_dir": None,
    "rated_subset": False,
}


@pytest.fixture()
def record_meta_eval(monkeypatch):
    calls = []

    def recorder(metrics, test, task, options=None, human=True):
        calls.append(
            {
                "metrics": metrics,
                "test": test,
                "task": task,
                "options": _options(options),
                "human": human,
            }
        )
        return meta_eval_job.MetaEvalReport(test, task, binary=True, config="recorded")

    monkeypatch.setattr(meta_eval_job, "run_meta_eval", recorder)
    return calls


def test_meta_eval_defaults(record_meta_eval):
    assert main(["meta-eval", "--test", "contest"]) == 0
    assert [call["task"] for call in record_meta_eval] == ["story", "resp", "prompt"]
    for call in record_meta_eval:
        assert (
            call["metrics"] == ["averaged_distinct_n", "ngram_cosine", "sent_bert"]
            and call["test"] == "contest"
        )
        assert call["human"] is True
        assert _subset(call["options"], META_EVAL_DEFAULTS) == META_EVAL_DEFAULTS


def test_meta_eval_every_flag(record_meta_eval, tmp_path):
    out = tmp_path / "m.json"
    argv = [
        "meta-eval",
        "--test",
        "mcdiv",
        "--task",
        "resp",
        "--task",
        "story",
        "--metric",
        "nli=M",
        "--metric",
        "vendi",
        "--data-dir",
        "D",
        "--cache-dir",
        "C",
        "--round-scores",
        "3",
        "--bootstrap",
        "--num-resamples",
        "50",
        "--seed",
        "4",
        "--no-human",
        "--rated",
        "-o",
        str(out),
        "--batch-size",
        "8",
        "--device",
        "cpu",
        "--no-verify",
    ]
    assert main(argv) == 0
    expected_options = {
        "batch_size": 8,
        "device": "cpu",
        "round_scores": 3,
        "bootstrap": True,
        "num_resamples": 50,
        "seed": 4,
        "data_dir": "D",
        "cache_dir": "C",
        "rated_subset": True,
        "verify_checksums": False,
    }
    assert [call["task"] for call in record_meta_eval] == ["resp", "story"]
    for call in record_meta_eval:
        assert (
            call["metrics"] == ["nli=M", "vendi"]
            and call["test"] == "mcdiv"
            and call["human"] is False
        )
        assert _subset(call["options"], expected_options) == expected_options
    assert [row["task"] for row in json.loads(out.read_text(encoding="utf-8"))] == ["resp", "story"]


# -- export-dataset --------------------------------------------------------------------------


@pytest.fixture()
def record_export(monkeypatch):
    calls = []

    def recorder(name, to, **options):
        calls.append({"name": name, "to": str(to), **options})
        return to

    monkeypatch.setattr(dialeval.datasets_scripts, "export_dataset", recorder)
    return calls


def test_export_dataset_defaults_and_flags(record_export):
    assert main(["export-dataset", "circa", "--to", "OUT"]) == 0
    assert record_export[-1] == {
        "name": "circa",
        "to": "OUT",
        "configs": None,
        "data_dir": None,
        "cache_dir": None,
        "verify_checksums": True,
        "push_to_hub": None,
        "private": False,
    }
    assert (
        main(
            [
                "export-dataset",
                "diversity_eval",
                "--to",
                "O",
                "--config",
                "a",
                "--config",
                "b",
                "--data-dir",
                "D",
                "--cache-dir",
                "C",
                "--no-verify",
                "--push-to-hub",
                "me/repo",
                "--private",
            ]
        )
        == 0
    )
    assert record_export[-1] == {
        "name": "diversity_eval",
        "to": "O",
        "configs": ["a", "b"],
        "data_dir": "D",
        "cache_dir": "C",
        "verify_checksums": False,
        "push_to_hub": "me/repo",
        "private": True,
    }


# -- dtg, dtg-summary ------------------------------------------------------------------------

DTG_DEFAULTS = {
    "model": "G",
    "metric": "nli",
    "contexts_from": "ctx.jsonl",
    "metric_model": None,
    "threshold": None,
    "num_responses": 5,
    "max_samples": 20,
    "decoding": "sample",
    "num_beams": 25,
    "top_p": 0.9,
    "max_new_tokens": 40,
    "max_context_tokens": None,
    "turn_separator": None,
    "seed": 0,
    "batch_size": 8,
    "limit": None,
}


@pytest.fixture()
def record_dtg(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the relative outputs' lock files go there
    calls = {}

    def read_contexts(dataset, split, input_file, data_dir=None, limit=None, verify_checksums=True):
        calls["read_contexts"] = {
            "dataset": dataset,
            "split": split,
            "input": input_file,
            "data_dir": data_dir,
            "limit": limit,
            "verify_checksums": verify_checksums,
        }
        return [("c0", ["hi"])]

    def run_dtg_job(settings, contexts, output, overwrite=False, device=None, progress=True):
        calls["run"] = {
            "settings": _options(settings),
            "contexts": contexts,
            "output": str(output),
            "overwrite": overwrite,
            "device": device,
            "progress": progress,
        }
        raise _Recorded

    monkeypatch.setattr(dtg_contexts, "read_contexts", read_contexts)
    monkeypatch.setattr(dtg_job, "run_dtg_job", run_dtg_job)
    return calls


def test_dtg_defaults(record_dtg):
    with pytest.raises(_Recorded):
        main(["dtg", "--model", "G", "--input", "ctx.jsonl", "-o", "out.jsonl"])
    assert record_dtg["read_contexts"] == {
        "dataset": None,
        "split": "dev",
        "input": "ctx.jsonl",
        "data_dir": None,
        "limit": None,
        "verify_checksums": True,
    }
    run = record_dtg["run"]
    assert _subset(run["settings"], DTG_DEFAULTS) == DTG_DEFAULTS
    assert (run["output"], run["overwrite"], run["device"], run["progress"]) == (
        "out.jsonl",
        False,
        None,
        True,
    )


def test_dtg_every_flag(record_dtg):
    argv = [
        "dtg",
        "--model",
        "G",
        "--dataset",
        "dailydialog_pp",
        "--split",
        "test",
        "--data-dir",
        "D",
        "--metric",
        "sent_bert",
        "--metric-model",
        "S",
        "--threshold",
        "-0.2",
        "--num-responses",
        "3",
        "--max-samples",
        "9",
        "--decoding",
        "beam",
        "--num-beams",
        "7",
        "--top-p",
        "0.5",
        "--max-new-tokens",
        "6",
        "--max-context-tokens",
        "128",
        "--turn-separator",
        " | ",
        "--seed",
        "2",
        "--batch-size",
        "4",
        "--limit",
        "11",
        "--output",
        "o.jsonl",
        "--overwrite",
        "--device",
        "cpu",
        "--no-progress",
        "--no-verify",
    ]
    with pytest.raises(_Recorded):
        main(argv)
    assert record_dtg["read_contexts"] == {
        "dataset": "dailydialog_pp",
        "split": "test",
        "input": None,
        "data_dir": "D",
        "limit": 11,
        "verify_checksums": False,
    }
    expected = {
        "model": "G",
        "metric": "sent_bert",
        "contexts_from": "dailydialog_pp:test",
        "metric_model": "S",
        "threshold": -0.2,
        "num_responses": 3,
        "max_samples": 9,
        "decoding": "beam",
        "num_beams": 7,
        "top_p": 0.5,
        "max_new_tokens": 6,
        "max_context_tokens": 128,
        "turn_separator": " | ",
        "seed": 2,
        "batch_size": 4,
        "limit": 11,
    }
    run = record_dtg["run"]
    assert _subset(run["settings"], expected) == expected
    assert (run["output"], run["overwrite"], run["device"], run["progress"]) == (
        "o.jsonl",
        True,
        "cpu",
        False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["dtg", "--model", "G", "-o", "o"],  # neither source
        ["dtg", "--model", "G", "--input", "a", "--dataset", "b", "-o", "o"],  # both
        ["dtg", "--input", "a", "-o", "o"],  # no model
        ["dtg", "--model", "G", "--input", "a"],  # no output
    ],
)
def test_dtg_required_flags(argv, record_dtg, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and record_dtg == {}


def test_dtg_summary(monkeypatch, tmp_path):
    read = []
    monkeypatch.setattr(
        dtg_summary, "read_run", lambda path: read.append(str(path)) or ({"run": str(path)}, [])
    )
    monkeypatch.setattr(dtg_summary, "summarize", lambda settings, records, **relevance: settings)
    monkeypatch.setattr(dtg_summary, "format_summary_table", lambda rows: "table")
    out = tmp_path / "rows.json"
    assert main(["dtg-summary", "a.jsonl", "b.jsonl", "-o", str(out)]) == 0
    assert read == ["a.jsonl", "b.jsonl"]
    assert json.loads(out.read_text(encoding="utf-8")) == [{"run": "a.jsonl"}, {"run": "b.jsonl"}]


# -- the parser-from-dataclass helper --------------------------------------------------------


def test_help_shows_the_dataclass_defaults():
    # argparse wraps lines (at hyphens too): compare without any white space
    helps = {name: "".join(parser.format_help().split()) for name, parser in _subparsers().items()}
    assert (
        "(default:5)" in helps["evaluate"]
        and "(repeatable;default:FacebookAI/roberta-large-mnli)" in helps["evaluate"]
    )
    assert "(default:1000)" in helps["meta-eval"] and "(default:0.9)" in helps["dtg"]


def test_options_are_built_from_fields_with_one_default():
    from dialeval.cli.options import (
        add_options,
        build,
        flag_names,
        name_flags,
        option,
        used_options,
    )

    @dataclasses.dataclass
    class Toy:
        count: int = dataclasses.field(default=3, metadata=option("--count", "-c", help="how many"))
        names: list[str] = dataclasses.field(
            default_factory=lambda: ["a"],
            metadata=option(
                "--name",
                repeatable=True,
                convert=lambda values: [v.upper() for v in values],
                off_flag="--no-names",
                off_value=[],
                aliases=("name",),
            ),
        )
        quiet: bool = dataclasses.field(default=True, metadata=option("--no-quiet"))
        hidden: str = "not on the command line"

    parser = add_options(argparse.ArgumentParser(), Toy)
    assert build(Toy, parser.parse_args([])) == Toy()
    built = build(Toy, parser.parse_args(["-c", "7", "--name", "x", "--name", "y", "--no-quiet"]))
    # the default list is replaced, not appended to
    assert built == Toy(count=7, names=["X", "Y"], quiet=False)
    assert build(Toy, parser.parse_args(["--name", "x", "--no-names"])).names == []
    assert "how many (default: 3)" in parser.format_help()
    assert used_options(parser.parse_args(["--name", "x"]), Toy) == {
        "--count": 3,
        "--name": ["x"],
        "--no-names": False,
        "--no-quiet": False,
    }
    names = flag_names(Toy)
    assert name_flags("`name` is bad; `count` too; pass quiet=False, not count=True", names) == (
        "`--name` is bad; `--count` too; pass --no-quiet, not count=True"
    )


def test_every_evaluate_option_that_names_a_file_is_protected_and_hashed():
    """An option naming a file or folder the job reads must be marked ``reads_path``: an output over
    it is then refused and its sha256 joins the run's identity, with no edit under dialeval/cli."""
    from dialeval.cli.evaluate_command import shared_input_options
    from dialeval.cli.evaluate_job import EvaluationOptions
    from dialeval.option_fields import cli_fields

    names_a_path = {
        field.name
        for field, cli in cli_fields(EvaluationOptions)  # save_*: what the job writes
        if cli.metavar in ("FILE", "DIR", "TXT", "FILE.csv", "PATH")
        and not field.name.startswith("save_")
    }
    assert (
        names_a_path
        == set(shared_input_options())
        == {"reference_corpus", "bertscore_baseline", "sem_ent_clusters", "selection_questions"}
    )
