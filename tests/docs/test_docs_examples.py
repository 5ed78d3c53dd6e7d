"""Every code example of README.md and docs/*.md runs (tests/docs/docs_examples.py says how they are
marked): the Python blocks of a page run in order in one namespace, from a scratch folder that holds
the repository's examples/ and generation/ (the examples name them relative to a checkout's root).

Fixtures a block names with ``<!-- example: with NAME -->`` (FIXTURES):

- ``tiny_nli_model``, ``tiny_bertscore_and_sts_models``, ``tiny_dialogpt``: the Hub ids the block
  names are served from a temporary Hugging Face cache, where a tiny model built in code
  (tests/tiny_models.py) stands under each id, so the one loader (dialeval.hub) and transformers'
  ``from_pretrained`` read it as they would read the downloaded model;
- ``dialogue_model``: ``model`` and ``tokenizer`` (a tiny GPT-2, left padding) and ``inputs`` (the
  tokenized context "Hi! How was your day?");
- ``sem_ent_corpora``: ``train_responses`` and ``generated``, the responses of
  examples/demo_response_sets.jsonl (diverse and dull sets).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
from docs_examples import REPO_ROOT, Example, example_pages, extract_examples

PAGES = {str(page.relative_to(REPO_ROOT)): extract_examples(page) for page in example_pages()}
RUN_PAGES = sorted(
    name
    for name, examples in PAGES.items()
    if any(example.language == "python" and example.not_run is None for example in examples)
)

# The blocks shown but never run, by the first words of their reason. Marking another block
# "not run" changes this count on purpose: say why in the marker, then here.
EXPECTED_NOT_RUN = {"released data": 3, "placeholders": 3}
# The blocks that are no Python: shell commands (`dialeval ...`, `make ...`, `accelerate launch ...`)
# and printed output. Counted the same way, so that a new one is a visible change.
EXPECTED_OTHER_LANGUAGES = {"bash": 18, "text": 3}


def _serve_from_hub_cache(request, monkeypatch, namespace, models: dict[str, str]) -> None:
    """Each Hub id of ``models`` answered from a scratch cache by the tiny model of a conftest fixture."""
    import huggingface_hub.constants

    cache = namespace.setdefault("__hub_cache__", request.getfixturevalue("tmp_path") / "hub")
    commit = "0" * 40
    for model_id, fixture in models.items():
        repo = cache / f"models--{model_id.replace('/', '--')}"
        if not repo.exists():
            shutil.copytree(request.getfixturevalue(fixture), repo / "snapshots" / commit)
            (repo / "refs").mkdir()
            (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))


def tiny_nli_model(request, monkeypatch, namespace):
    _serve_from_hub_cache(
        request, monkeypatch, namespace, {"FacebookAI/roberta-large-mnli": "tiny_roberta_nli_path"}
    )


def tiny_bertscore_and_sts_models(request, monkeypatch, namespace):
    _serve_from_hub_cache(
        request,
        monkeypatch,
        namespace,
        {
            "FacebookAI/roberta-large": "tiny_roberta_nli_path",
            "cross-encoder/stsb-roberta-large": "tiny_cross_encoder_path",
        },
    )


def tiny_dialogpt(request, monkeypatch, namespace):
    _serve_from_hub_cache(
        request, monkeypatch, namespace, {"microsoft/DialoGPT-small": "tiny_gpt2_path"}
    )


def dialogue_model(request, monkeypatch, namespace):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = request.getfixturevalue("tiny_gpt2_path")
    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
    namespace.update(
        model=AutoModelForCausalLM.from_pretrained(path).eval(),
        tokenizer=tokenizer,
        inputs=tokenizer(["Hi! How was your day?" + tokenizer.eos_token], return_tensors="pt"),
    )


def sem_ent_corpora(request, monkeypatch, namespace):
    lines = (
        (REPO_ROOT / "examples" / "demo_response_sets.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    sets = [json.loads(line) for line in lines if line.strip()]
    namespace.update(
        train_responses=[response for item in sets for response in item["responses"]],
        generated=[
            response
            for item in sets
            if item.get("style") == "dull"
            for response in item["responses"]
        ],
    )


FIXTURES = {
    function.__name__: function
    for function in (
        tiny_nli_model,
        tiny_bertscore_and_sts_models,
        tiny_dialogpt,
        dialogue_model,
        sem_ent_corpora,
    )
}


def run_examples(examples: list[Example], request, monkeypatch) -> int:
    """Run the page's Python blocks in order in one namespace; the number run."""
    namespace: dict = {"__name__": "__docs_example__"}
    ran = 0
    for example in examples:
        if example.language != "python" or example.not_run is not None:
            continue
        for name in example.fixtures:
            if name not in FIXTURES:
                raise ValueError(
                    f"{example.where}: no example fixture {name!r} (known: {sorted(FIXTURES)})"
                )
            FIXTURES[name](request, monkeypatch, namespace)
        try:
            exec(compile(example.code, example.where, "exec"), namespace)  # noqa: S102 (the repository's own pages)
        except Exception as error:
            raise AssertionError(
                f"the example at {example.where} failed: {type(error).__name__}: {error}"
            ) from error
        ran += 1
    return ran


@pytest.fixture()
def scratch_checkout(tmp_path, monkeypatch):
    """A working folder holding the checkout's examples/ and generation/ (what the examples read)."""
    folder = tmp_path / "work"
    folder.mkdir()
    for name in ("examples", "generation"):
        (folder / name).symlink_to(REPO_ROOT / name)
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_page_examples_run(page, request, monkeypatch, scratch_checkout):
    assert run_examples(PAGES[page], request, monkeypatch) > 0


def test_blocks_not_run_are_marked_and_counted():
    not_run = [
        example
        for examples in PAGES.values()
        for example in examples
        if example.not_run is not None
    ]
    assert all(example.language == "python" for example in not_run), (
        "only a Python block is marked not run"
    )
    counted = Counter(example.not_run_category for example in not_run)
    assert counted == EXPECTED_NOT_RUN, [
        f"{example.where}: {example.not_run}" for example in not_run
    ]


def test_blocks_in_other_languages_are_counted():
    languages = Counter(example.language for examples in PAGES.values() for example in examples)
    del languages["python"]
    assert languages == EXPECTED_OTHER_LANGUAGES


def test_every_page_with_python_examples_runs_some():
    pages_with_python = {
        name
        for name, examples in PAGES.items()
        if any(example.language == "python" for example in examples)
    }
    fully_not_run = pages_with_python - set(RUN_PAGES)
    # Pages whose every Python block needs released data this machine lacks.
    assert fully_not_run <= {
        "docs/test_sets.md",
        "docs/response_selection.md",
        "docs/certainty_variety.md",
    }, fully_not_run
    assert "README.md" in RUN_PAGES


def test_a_failing_example_fails_the_test(tmp_path, request, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nvalue = 1\n```\n\n```python\nassert value == 2, 'wrong'\n```\n",
        encoding="utf-8",
    )
    examples = extract_examples(page, root=tmp_path)
    with pytest.raises(AssertionError, match=r"page.md:5 failed: AssertionError: wrong"):
        run_examples(examples, request, monkeypatch)


@pytest.mark.parametrize(
    "text, problem",
    [
        (
            "<!-- example: not run (it is slow) -->\n```python\npass\n```\n",
            "a not-run reason starts with one of",
        ),
        ("<!-- example: skip -->\n```python\npass\n```\n", "unknown example marker"),
        (
            "<!-- example: with tiny_dialogpt -->\n\n```python\npass\n```\n",
            "must sit right above a code fence",
        ),
        ("```\nplain\n```\n", "a code fence without a language"),
    ],
)
def test_a_malformed_marker_or_fence_is_refused(tmp_path, text, problem):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        extract_examples(page, root=tmp_path)
