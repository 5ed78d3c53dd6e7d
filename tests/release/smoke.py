"""The installed wheel's smoke test (`make dist-check`): run it with a virtual environment that holds
the wheel alone, from a folder outside the checkout, beside a copy of tests/tiny_models.py.

    python smoke.py

Checks, each on the installed package (never the checkout): `dialeval --version`; every evaluate
module of the registry loaded through ``evaluate_module_path`` and computed on a tiny input (the
model-backed ones on tiny random models built here, the sentence-embedding ones on the embedded
all-MiniLM-L6-v2 of the ``minilm`` extra); DTG's ``custom_generate`` recipe from the installed
``dialeval.generation`` folder on a tiny GPT-2; one UnlikelihoodTrainer step. Exits non-zero on the
first failure; prints one line per check.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

for variable in (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
):
    os.environ[variable] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

SITE_PACKAGES = Path(sysconfig.get_paths()["purelib"]).resolve()
SETS = [
    ["I went hiking in the hills.", "I fixed the kitchen sink.", "We ate seafood on the coast."],
    ["Not much.", "Not much, you?", "Not much really."],
]
CORPUS = [
    "I love pizza.",
    "Sushi for dinner!",
    "Pasta tonight?",
    "It is raining.",
    "So sunny today.",
    "A storm is coming.",
]


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAIL: {message}")


def installed(path) -> bool:
    return SITE_PACKAGES in Path(path).resolve().parents


def check_version() -> str:
    from importlib.metadata import version

    import dialeval

    check(
        installed(dialeval.__file__),
        f"dialeval imported from {dialeval.__file__}, not from {SITE_PACKAGES}",
    )
    command = Path(sys.executable).parent / "dialeval"
    printed = subprocess.run(
        [str(command), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    check(
        printed == f"dialeval {dialeval.__version__}", f"`dialeval --version` printed {printed!r}"
    )
    check(
        version("dialeval") == dialeval.__version__,
        f"the wheel's metadata says {version('dialeval')}, dialeval.__version__ {dialeval.__version__}",
    )
    print(f"ok   dialeval --version: {printed}")
    return dialeval.__version__


def tiny_models(folder: Path) -> dict[str, str]:
    import tiny_models as tiny  # tests/tiny_models.py, copied beside this script

    tokenizer = tiny.save_tiny_tokenizer(folder / "tokenizer")
    return {
        "gpt2": tiny.save_tiny_gpt2(folder / "gpt2", tokenizer),
        "nli": tiny.save_tiny_roberta_nli(folder / "nli", tokenizer),
        "yes_no": tiny.save_tiny_roberta_yes_no(folder / "yes_no", tokenizer),
    }


def module_calls(models: dict[str, str]) -> dict[str, list[tuple[dict, str]]]:
    """Per module: (compute's keywords, the figure that must come back a finite number)."""
    cpu = {"device": "cpu"}
    selection = {
        "contexts": [["Do you have a car?"], "Where do you live?"],
        "candidates": [["Yes, a red one.", "I play tennis."], ["In Osaka.", "Blue.", "Never."]],
        "labels": [0, 0],
    }
    polar = {
        "predictions": [["Yes, I am.", "No."], ["No, never.", "No!"], ["Yes.", "Yeah."]],
        "references": ["yes", "no", "no"],
    }
    return {
        "lexical_diversity": [({"predictions": SETS}, "averaged_distinct_n")],
        "compression_ratio": [({"predictions": SETS}, "compression_ratio")],
        "expectation_adjusted_distinct": [({"predictions": SETS, "vocab_size": 50257}, "ead")],
        "self_repetition": [({"predictions": SETS}, "self_repetition")],
        "homogenization": [({"predictions": SETS}, "homogenization")],
        "diversity_meta_eval": [
            ({"predictions": [0.1, 0.4, 0.35, 0.8], "references": [0, 0, 1, 1]}, "spearman")
        ],
        "pos_templates": [
            (
                {
                    "predictions": ["I think it is a good idea.", "No."],
                    "templates": {"PRP VBP PRP VBZ DT": ["I think it is a"]},
                },
                "template_rate",
            )
        ],
        # the embedded all-MiniLM-L6-v2 (the default sentence model)
        "similarity_diversity": [
            ({"predictions": SETS}, "similarity_diversity"),
            ({"predictions": SETS, "similarity": "ngram_cosine"}, "similarity_diversity"),
        ],
        "vendi_score": [({"predictions": SETS}, "vendi_score")],
        "embedding_distances": [({"predictions": SETS}, "remote_clique")],
        "sem_ent": [
            (
                {
                    "predictions": ["Pizza again?", "More rain today."],
                    "references": CORPUS,
                    "num_clusters": 2,
                },
                "sem_ent",
            )
        ],
        # tiny random models built here
        "nli_diversity": [({"predictions": SETS, "model": models["nli"], **cpu}, "nli_diversity")],
        "response_selection": [({**selection, "model": models["gpt2"], **cpu}, "accuracy")],
        "nbest_contradiction": [
            ({**polar, "classifier": "prefix"}, "certainty"),
            ({**polar, "classifier": models["yes_no"], **cpu}, "certainty"),
        ],
    }


def check_evaluate_modules(models: dict[str, str]) -> None:
    import evaluate

    from dialeval.metrics import evaluate_module_path, registry

    calls = module_calls(models)
    names = [metric.name for metric in registry.METRICS]
    check(
        set(calls) <= set(names),
        f"smoke.py's modules {sorted(set(calls) - set(names))} are not in the registry",
    )
    # a model-free module not listed: the response sets, and its first per-set figure
    for metric in registry.METRICS:
        if metric.name not in calls and not metric.needs_model and metric.set_scorers:
            calls[metric.name] = [({"predictions": SETS}, metric.set_scorers[0].figure)]
    check(
        sorted(calls) == sorted(names),
        f"smoke.py has no call for the modules {sorted(set(names) - set(calls))}",
    )
    for name in names:
        folder = Path(evaluate_module_path(name))
        check(
            installed(folder),
            f"{name}: evaluate_module_path gave {folder}, outside {SITE_PACKAGES}",
        )
        for card in ("README.md", "app.py", "requirements.txt", f"{name}.py"):
            check((folder / card).is_file(), f"{name}: the wheel lacks {card}")
        module = evaluate.load(str(folder))
        for keywords, figure in calls[name]:
            value = module.compute(**keywords)[figure]
            check(
                isinstance(value, (int, float)) and math.isfinite(value),
                f"{name}: {figure} = {value!r}",
            )
            options = sorted(
                key
                for key in keywords
                if key not in ("predictions", "references", "contexts", "candidates", "labels")
            )
            print(f"ok   evaluate module {name} {options or ''}: {figure} = {value:.4g}")


def check_custom_generate(models: dict[str, str]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import dialeval.generation

    recipe = Path(dialeval.generation.__file__).parent
    check(
        installed(recipe) and (recipe / "custom_generate" / "generate.py").is_file(),
        f"no custom_generate/ in {recipe}",
    )
    model = AutoModelForCausalLM.from_pretrained(models["gpt2"]).eval()
    tokenizer = AutoTokenizer.from_pretrained(models["gpt2"])
    encoded = tokenizer(
        ["hello there , how are you today ?", "i like music"], return_tensors="pt", padding=True
    )
    torch.manual_seed(0)
    out = model.generate(
        **encoded,
        custom_generate=str(recipe),
        trust_remote_code=True,
        tokenizer=tokenizer,
        metric="distinct_n",
        num_responses=3,
        max_new_tokens=5,
        min_new_tokens=2,
        return_dict_in_generate=True,
    )
    check(
        out.sequences.shape[0] == 6 and len(out.dtg_results) == 2,
        f"custom_generate gave {out.sequences.shape}",
    )
    print(
        f"ok   custom_generate={recipe}: sequences {tuple(out.sequences.shape)}, "
        f"{[len(result.responses) for result in out.dtg_results]} responses per context"
    )


def check_trainer_step(models: dict[str, str], output_dir: Path) -> None:
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from dialeval.trainers import (
        UnlikelihoodConfig,
        UnlikelihoodTrainer,
        encode_unlikelihood_example,
    )

    tokenizer = AutoTokenizer.from_pretrained(models["gpt2"])
    examples = [
        ("do you like dogs?", "yes, i love dogs.", "no, never."),
        ("is it sunny?", "yes, it is warm.", "no."),
    ]
    rows = [
        encode_unlikelihood_example(tokenizer, c, g, n, False, max_length=64)
        for c, g, n in examples
    ]
    dataset = datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in rows[0]})
    model = AutoModelForCausalLM.from_pretrained(models["gpt2"])
    before = [parameter.detach().clone() for parameter in model.parameters()]
    args = UnlikelihoodConfig(
        output_dir=str(output_dir),
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        logging_strategy="no",
        seed=0,
        disable_tqdm=True,
        max_steps=1,
        per_device_train_batch_size=2,
        optim="sgd",
        learning_rate=0.1,
    )
    result = UnlikelihoodTrainer(
        model, args, train_dataset=dataset, processing_class=tokenizer
    ).train()
    moved = any(
        not parameter.detach().equal(old) for parameter, old in zip(model.parameters(), before)
    )
    check(
        result.global_step == 1 and moved and math.isfinite(result.training_loss),
        f"trainer step: {result}",
    )
    print(f"ok   UnlikelihoodTrainer: 1 step, loss {result.training_loss:.4f}, weights updated")


def main() -> int:
    version = check_version()
    with tempfile.TemporaryDirectory(prefix="dialeval-smoke-") as scratch:
        models = tiny_models(Path(scratch))
        check_evaluate_modules(models)
        check_custom_generate(models)
        check_trainer_step(models, Path(scratch) / "trainer")
    print(f"smoke test of the installed dialeval {version}: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
