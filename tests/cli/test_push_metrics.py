"""``dialeval push-metrics``: every evaluate module as a Space folder, written offline or uploaded
with huggingface_hub (a recording HfApi stands in for the Hub, which tests cannot reach)."""

from typing import ClassVar

import evaluate
import pytest

from dialeval.atomic_files import MANIFEST_NAME
from dialeval.cli import main
from dialeval.metrics import evaluate_module_path, registry

SPACE_FILES = ["README.md", "app.py", "requirements.txt"]
SETS = [["I went hiking.", "I fixed the sink.", "Nothing much."], ["Not much.", "Not much, you?"]]


def test_to_writes_one_loadable_folder_per_metric(tmp_path, capsys):
    assert main(["push-metrics", "--to", str(tmp_path)]) == 0
    names = [metric.name for metric in registry.METRICS]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    for name in names:
        assert sorted(p.name for p in (tmp_path / name).iterdir()) == sorted(
            [f"{name}.py", *SPACE_FILES, MANIFEST_NAME]  # the files recorded as dialeval's
        )
        assert evaluate.load(str(tmp_path / name)).name == name
    assert f"wrote {tmp_path / 'sem_ent'}" in capsys.readouterr().out
    written = evaluate.load(str(tmp_path / "lexical_diversity"))
    in_repo = evaluate.load(evaluate_module_path("lexical_diversity"))
    assert written.compute(predictions=SETS) == in_repo.compute(predictions=SETS)


class RecordingApi:
    """Records each call; ``calls`` is reset by the ``hub`` fixture."""

    calls: ClassVar[list] = []

    def __init__(self, token=None):
        self.calls.append(("init", token))

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def upload_folder(self, **kwargs):
        from pathlib import Path

        ignored = kwargs.get("ignore_patterns") or []
        files = sorted(
            p.name for p in Path(kwargs["folder_path"]).iterdir() if p.name not in ignored
        )
        self.calls.append(("upload_folder", kwargs["repo_id"], kwargs["repo_type"], files))


@pytest.fixture
def hub(monkeypatch):
    RecordingApi.calls = []
    monkeypatch.setattr("huggingface_hub.HfApi", RecordingApi)
    return RecordingApi.calls


def test_namespace_uploads_each_metric_as_a_gradio_space(hub, capsys):
    assert main(["push-metrics", "--namespace", "someone"]) == 0
    assert hub[0] == ("init", None)
    names = [metric.name for metric in registry.METRICS]
    space = {"repo_type": "space", "space_sdk": "gradio", "private": False, "exist_ok": True}
    expected = []
    for name in names:
        expected += [
            ("create_repo", f"someone/{name}", space),
            ("upload_folder", f"someone/{name}", "space", sorted([f"{name}.py", *SPACE_FILES])),
        ]
    assert hub[1:] == expected
    assert "pushed https://huggingface.co/spaces/someone/nli_diversity" in capsys.readouterr().out


def test_one_private_metric_uploaded_from_a_kept_folder(hub, tmp_path):
    assert (
        main(
            [
                "push-metrics",
                "--namespace",
                "org",
                "--metric",
                "vendi_score",
                "--to",
                str(tmp_path),
                "--private",
            ]
        )
        == 0
    )
    assert [call[:2] for call in hub[1:]] == [
        ("create_repo", "org/vendi_score"),
        ("upload_folder", "org/vendi_score"),
    ]
    assert hub[1][2]["private"] is True
    assert (tmp_path / "vendi_score" / "app.py").is_file() and not (tmp_path / "sem_ent").exists()


def test_refuses_without_a_destination(hub, capsys):
    assert main(["push-metrics"]) == 2
    assert "--namespace ORG" in capsys.readouterr().err
    assert main(["push-metrics", "--namespace", "a/b"]) == 2
    assert "`--namespace`" in capsys.readouterr().err
    assert hub == []
    with pytest.raises(SystemExit):
        main(["push-metrics", "--to", "x", "--metric", "no_such_metric"])
