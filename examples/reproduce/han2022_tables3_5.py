"""Han et al. (2022), Tables 3 and 5: diversity of a response generator trained with plain MLE,
the baselines MMI, EDF and NT, DRESS(-NT) and DRESS (Table 3), and DRESS under a gamma / k sweep
(Table 5).

§5.3: the generator is fine-tuned on DailyDialog; DRESS uses gamma = 30, k = 20; greedy decoding
blocking repeated 3-grams; Dist-1/2/3, Ent-1/2/3, LF and Sem-Ent (k = 20) of the generations for
the test contexts. Table 5 varies gamma in {1, 5, 10, 30, 100} at k = 20 and k in {10, 20, 50,
100} at gamma = 30.

Data (``--dataset``, default ``auto``): the paper's, DailyDialog (``dailydialog`` builder, its
``pairs`` config: every turn after the first a response to the turns before it; train on the
official train split's pairs, test on the official test split's 6,740 contexts), whenever it is
here: in ``--dailydialog-dir`` (the folder holding ``ijcnlp_dailydialog.zip``), or downloaded /
already in the ``datasets`` cache. Otherwise, and the script says so, DailyDialog++ (``--data-dir``):
its positives as training pairs (each context's human responses, one pair each) and its test
split's contexts. ``--dataset dailydialog`` / ``dailydialog_pp`` insists on one. ``--pairs``
(JSONL, one ``{"context": [turns] or "text", "response": "..."}`` per line) replaces the training
pairs and ``--test-contexts`` (same JSONL; ``response`` ignored) the test contexts.

Table 3's baselines (§5.2; ``--methods`` picks the rows):

- MMI: the Vanilla model decoded with MMI-antiLM (Li et al. 2016;
  ``dialeval.generation.MMIAntiLMLogitsProcessor``): ``log p(T|S) - lambda log U(T)``, U an anti-LM
  over the first ``--mmi-gamma`` response tokens. The anti-LM is ``--anti-lm`` (a causal LM sharing
  the generator's vocabulary) or a GPT-2 of the tiny size trained on the training responses for
  ``--lm-steps``.
- EDF: MLE on the pairs left by entropy-based filtering, target side, IDENTITY clustering (Csáky et
  al. 2019; ``dialeval.trainers.filter_by_target_entropy``; ``--edf-threshold`` bits, their
  DailyDialog value 1.0; ``--edf-source``: the entropy over the contexts' last utterances, as
  Csáky et al. §3, or ``context``: over whole contexts).
- NT: Negative Training against frequent responses (He & Glass 2020): the Vanilla model decodes
  ``--nt-contexts`` training contexts greedily, generations with a ratio above ``--nt-r-thres`` are
  negatives for their contexts (``dialeval.trainers.frequent_negatives``), and the Vanilla model is
  post-trained for ``--steps`` on gold + negative rows (``UnlikelihoodTrainer``,
  ``negative_loss="negative_training"``, alpha = the negatives' share of the generations unless
  ``--nt-alpha``).
- CVAE and AdaLabel need other architectures (a latent-variable model; an auxiliary decoder):
  not run, their rows show the paper's values only.

Scales:

- ``tiny`` (CPU, minutes): a small GPT-2 and a byte-level BPE tokenizer built and trained from
  scratch on the training pairs (as ``examples/dress_dailydialog.py``), ``--base-steps`` of MLE
  for a common checkpoint, then ``--steps`` per method from it. Toy numbers, not the paper's.
- ``paper`` (GPU): ``--model`` is a pretrained dialogue model directory (the paper's are
  Blender-90M and BART-large: ``facebook/blenderbot_small-90M``, ``facebook/bart-large``, our
  reading), fine-tuned per method for ``--steps`` from the same weights.

Sem-Ent's clusters are fitted on the training responses with the paper's embedder, DialoGPT-large
(``--embedder-kind last_token``, App. A.7), whenever it is on this machine (a local folder or the
Hugging Face cache; nothing is downloaded to find out), else with the embedded MiniLM; the script
says which. ``--embedder-kind`` / ``--embedder-model`` choose one explicitly. DRESS weights with
the same clusters (at k = 20; each Table 5 k row fits its own). LF counts frequencies in the
generations themselves (the released ``LFCalculator``). MaUdE (Sinha et al. 2020) is not
available in dialeval: its column is "n/a".

Before its tables the script prints its numbers next to the paper's and every setting that
differs from the paper (also in ``tables3_5.md`` and, as ``differs_from_paper``, in the JSON).

Usage (see README.md beside this file)::

    python examples/reproduce/han2022_tables3_5.py --scale tiny \\
        --dailydialog-dir DIR_WITH_ijcnlp_dailydialog.zip --out-dir runs/han-tables3-5
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/: tiny_dialogue_models

from _tables import (
    cell,
    markdown_table,
    one_line_errors,
    paper_comparison,
    require_model,
    require_path,
    write_outputs,
)
from tiny_dialogue_models import build_gpt2, build_tokenizer

#: Table 5 as printed (Blender-90M): config -> (Dist-3, Ent-3, MaUdE, Sem-Ent).
PAPER_TABLE5 = {
    "gamma = 1.0": (0.4333, 12.8968, 0.8570, 2.6233),
    "gamma = 5.0": (0.4400, 12.9989, 0.8593, 2.6551),
    "gamma = 10.0": (0.4410, 13.0670, 0.8583, 2.6959),
    "gamma = 30.0": (0.4571, 13.3060, 0.8575, 2.7819),
    "gamma = 100.0": (0.4625, 13.5839, 0.8436, 2.8444),
    "k = 10": (0.4748, 13.7596, 0.8390, 2.8451),
    "k = 20": (0.4571, 13.3060, 0.8575, 2.7819),
    "k = 50": (0.4318, 13.0001, 0.8513, 2.7009),
    "k = 100": (0.4311, 12.8857, 0.8637, 2.6258),
}
TABLE3_COLUMNS = ("dist_1", "dist_2", "dist_3", "ent_1", "ent_2", "ent_3", "lf", "maude", "sem_ent")
#: Table 3 as printed, Blender-90M on DailyDialog: method -> the TABLE3_COLUMNS values.
PAPER_TABLE3 = {
    "Vanilla": (0.0453, 0.2103, 0.3881, 7.1322, 10.7502, 12.3950, 0.2234, 0.8489, 2.5486),
    "MMI": (0.0349, 0.1677, 0.3069, 7.0730, 10.3806, 11.9808, 0.2155, 0.8208, 2.5784),
    "CVAE": (0.0471, 0.2389, 0.4459, 7.4074, 11.2797, 12.9969, 0.2449, 0.8552, 2.6261),
    "EDF": (0.0473, 0.2271, 0.4226, 7.2888, 11.0283, 12.7132, 0.2402, 0.8593, 2.5872),
    "NT": (0.0475, 0.2351, 0.4422, 7.3994, 11.2561, 13.0111, 0.2467, 0.8597, 2.6434),
    "AdaLabel": (0.0377, 0.1982, 0.3915, 7.1546, 10.8772, 12.6829, 0.2158, 0.8443, 2.6038),
    "DRESS(-NT)": (0.0445, 0.2295, 0.4360, 7.4560, 11.3273, 13.1028, 0.2474, 0.8460, 2.7576),
    "DRESS": (0.0460, 0.2404, 0.4571, 7.5468, 11.5094, 13.3060, 0.2576, 0.8575, 2.7819),
}
#: --methods name -> (Table 3 row label, the paper's row), in the paper's order; CVAE and AdaLabel are never run.
METHODS = {
    "vanilla": ("MLE (vanilla)", "Vanilla"),
    "mmi": ("MMI (antiLM)", "MMI"),
    "cvae": ("CVAE", "CVAE"),
    "edf": ("EDF", "EDF"),
    "nt": ("NT", "NT"),
    "adalabel": ("AdaLabel", "AdaLabel"),
    "dress-nt": ("DRESS(-NT)", "DRESS(-NT)"),
    "dress": ("DRESS", "DRESS"),
}
NOT_RUN = {
    "cvae": "a conditional VAE (Zhao et al. 2017): another architecture",
    "adalabel": "an auxiliary decoder for adaptive label smoothing (Wang et al. 2021): another architecture",
}
RUNNABLE = tuple(name for name in METHODS if name not in NOT_RUN)
#: The paper's Sem-Ent / DRESS embedder (App. A.7; dialeval's default for ``last_token``).
PAPER_EMBEDDER_MODEL = "microsoft/DialoGPT-large"
#: The paper's setting (§5.1, §5.3, App. A.7; Blender-90M rows), for the list of what differs here.
PAPER_SETTING = {
    "gamma": 30.0,
    "num_clusters": 20,
    "lr": 7e-6,
    "batch_size": 32,
    "test_pairs": 6740,
}


def floats(text: str) -> list[float]:
    return [float(value) for value in text.split(",") if value.strip()]


def methods(text: str) -> list[str]:
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in RUNNABLE]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"--methods takes a comma list of {', '.join(RUNNABLE)}; got {text!r}"
            + (" (CVAE and AdaLabel are not implemented)" if set(unknown) & set(NOT_RUN) else "")
        )
    return [name for name in RUNNABLE if name in names]


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", choices=("tiny", "paper"), default="tiny")
    parser.add_argument("--model", help="--scale paper: pretrained dialogue model id or directory")
    parser.add_argument(
        "--dataset",
        choices=("auto", "dailydialog", "dailydialog_pp"),
        default="auto",
        help="auto: DailyDialog (the paper's) when it is here, else DailyDialog++ (--data-dir)",
    )
    parser.add_argument(
        "--dailydialog-dir",
        help="the folder holding DailyDialog's ijcnlp_dailydialog.zip "
        "(default: the datasets cache, or download it)",
    )
    parser.add_argument(
        "--data-dir", help="DailyDialog++ files (data_positives.json, test.json): the fallback data"
    )
    parser.add_argument(
        "--cache-dir",
        help="the datasets cache the builders prepare the data in (default: datasets')",
    )
    parser.add_argument(
        "--no-verify",
        action="store_true",
        help="read DailyDialog / DailyDialog++ files whose sha256 is not the release's",
    )
    parser.add_argument(
        "--pairs", help="JSONL of (context, response) training pairs instead of DailyDialog++"
    )
    parser.add_argument(
        "--test-contexts",
        help="JSONL with 'context' per line instead of DailyDialog++'s test split",
    )
    parser.add_argument(
        "--out-dir", required=True, help="writes tables3_5.md and tables3_5.json here"
    )
    parser.add_argument("--train-limit", type=int, help="only the first N training pairs")
    parser.add_argument("--test-limit", type=int, help="only the first N test contexts")
    parser.add_argument(
        "--context-turns", type=int, default=2, help="last turns of a context the model reads"
    )
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--steps", type=int, default=300, help="optimizer steps per method")
    parser.add_argument(
        "--base-steps",
        type=int,
        default=600,
        help="--scale tiny: MLE steps of the common checkpoint",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--lr",
        type=float,
        default=5e-5,
        help="fine-tuning learning rate (tiny from-scratch models: 1e-4; 5e-4 made DRESS unstable in examples/dress_dailydialog.py's seed sweep)",
    )
    parser.add_argument("--gamma", type=float, default=30.0, help="Table 3's gamma (paper: 30)")
    parser.add_argument(
        "--num-clusters", type=int, default=20, help="Table 3's k and Sem-Ent's k (paper: 20)"
    )
    parser.add_argument(
        "--gammas",
        type=floats,
        default=[1.0, 5.0, 10.0, 30.0, 100.0],
        help="Table 5's gamma row values (k fixed)",
    )
    parser.add_argument(
        "--ks",
        type=lambda text: [int(v) for v in floats(text)],
        default=[10, 20, 50, 100],
        help="Table 5's k row values (gamma fixed)",
    )
    parser.add_argument("--skip-table5", action="store_true")
    parser.add_argument(
        "--methods",
        type=methods,
        default=list(RUNNABLE),
        help=f"Table 3 rows to run, comma-separated (default: all of {','.join(RUNNABLE)})",
    )
    parser.add_argument(
        "--mmi-lambda",
        type=float,
        default=0.5,
        help="MMI-antiLM's lambda (Li et al. tune it on dev data; 0.5 is our default)",
    )
    parser.add_argument(
        "--mmi-gamma",
        type=int,
        default=5,
        help="MMI-antiLM's gamma: response tokens the anti-LM penalizes (tuned by Li et al.; 5 is ours)",
    )
    parser.add_argument(
        "--anti-lm",
        help="MMI's anti-LM: a causal LM sharing the generator's vocabulary "
        "(default: a GPT-2 of --width / --layers trained on the training responses)",
    )
    parser.add_argument(
        "--lm-steps",
        type=int,
        help="steps of the anti-LM trained here (default: --base-steps, at least 1)",
    )
    parser.add_argument(
        "--edf-threshold",
        type=float,
        default=1.0,
        help="EDF's target-entropy threshold in bits (Csáky et al., DailyDialog IDENTITY: 1.0)",
    )
    parser.add_argument(
        "--edf-source",
        choices=("utterance", "context"),
        default="utterance",
        help="EDF's source: the context's last utterance (Csáky et al. §3) or the whole context",
    )
    parser.add_argument(
        "--edf-max-words",
        type=int,
        default=15,
        help="EDF keeps targets of this many words or more (released code's max_avg_length); 0: off",
    )
    parser.add_argument(
        "--nt-r-thres",
        type=float,
        default=0.01,
        help="NT's frequent-response ratio threshold (He & Glass: 0.01 Switchboard, 0.001 Ubuntu / OpenSubtitles)",
    )
    parser.add_argument(
        "--nt-contexts",
        type=int,
        help="training contexts the Vanilla model decodes to find NT's "
        "negatives (default: --negative-contexts)",
    )
    parser.add_argument(
        "--nt-alpha",
        type=float,
        help="weight of NT's negative term (default: the negatives' share "
        "of the generations, He & Glass's normalization)",
    )
    parser.add_argument(
        "--negative-contexts", type=int, default=5000, help="contexts generated for per DRESS cycle"
    )
    parser.add_argument(
        "--recluster-every",
        type=int,
        help="optimizer steps between DRESS cycles (default: each epoch)",
    )
    parser.add_argument(
        "--embedder-kind",
        choices=("last_token", "mean_pooling", "sentence_transformers"),
        help="Sem-Ent / DRESS embedder (default: last_token DialoGPT-large, the paper's, when it is here; "
        "else sentence_transformers MiniLM; with only --embedder-model: sentence_transformers)",
    )
    parser.add_argument(
        "--embedder-model",
        help="the embedder's model folder or cached Hub id (default: the kind's)",
    )
    parser.add_argument("--vocab-size", type=int, default=3000, help="--scale tiny")
    parser.add_argument("--width", type=int, default=128, help="--scale tiny: GPT-2 n_embd")
    parser.add_argument("--layers", type=int, default=4, help="--scale tiny")
    parser.add_argument(
        "--device", help="torch device for --scale paper (default: Accelerate's choice)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.scale == "paper" and not args.model:
        parser.error("--scale paper needs --model")
    if (
        args.dataset == "dailydialog_pp"
        and not args.data_dir
        and not (args.pairs and args.test_contexts)
    ):
        parser.error("--dataset dailydialog_pp needs --data-dir")
    return args


def read_pairs(path, argument: str, need_response: bool) -> list[tuple[list[str], str]]:
    from dialeval.io import iter_jsonl

    pairs = []
    for where, record in iter_jsonl(path):
        context = record.get("context") if isinstance(record, dict) else None
        context = [context] if isinstance(context, str) else context
        response = record.get("response", "") if isinstance(record, dict) else None
        if (
            not isinstance(context, list)
            or not context
            or not all(isinstance(t, str) for t in context)
            or not isinstance(response, str)
            or (need_response and not response.strip())
        ):
            raise ValueError(
                f"`{argument}` {where}: needs 'context' (text or list of turns)"
                + (" and a non-empty 'response'" if need_response else "")
            )
        pairs.append((context, response))
    if not pairs:
        raise ValueError(f"`{argument}` {path} holds no lines")
    return pairs


PAPER_DATA = (
    "DailyDialog (the paper's data: official train split's pairs, test split's 6,740 contexts)"
)


def dailydialog_pairs(args, split: str):
    from dialeval.datasets_scripts import load

    return load(
        "dailydialog",
        "pairs",
        split=split,
        data_dir=args.dailydialog_dir,
        cache_dir=args.cache_dir,
        verify_checksums=not args.no_verify,
    )


def choose_data(args) -> dict:
    """Which data the run reads: DailyDialog (the paper's) when it is here (``--dataset auto``), else
    DailyDialog++; ``--pairs`` / ``--test-contexts`` replace either side. Returns ``dataset``,
    ``paper`` (whether it is the paper's), ``why`` (why not, when not) and the rows it loaded."""
    from dialeval.datasets_scripts._sources import SourceNotAvailableError

    needed = not (args.pairs and args.test_contexts)
    choice = {"dataset": None, "paper": False, "why": None, "train": None, "test": None}
    if needed and args.dataset in ("auto", "dailydialog"):
        try:
            choice["train"] = None if args.pairs else dailydialog_pairs(args, "train")
            choice["test"] = None if args.test_contexts else dailydialog_pairs(args, "test")
            replaced = args.pairs or args.test_contexts
            choice.update(
                dataset="dailydialog",
                paper=not replaced,
                why="--pairs / --test-contexts replace part of it" if replaced else None,
            )
            return choice
        except SourceNotAvailableError as error:
            # the builder's argument is this flag here
            said = str(error).replace("`data_dir`", "--dailydialog-dir")
            # auto falls back only when the user named no DailyDialog: a --dailydialog-dir without it is an error
            if args.dataset == "dailydialog" or args.dailydialog_dir is not None:
                raise SourceNotAvailableError(said) from None
            if not args.data_dir:
                raise SourceNotAvailableError(
                    f"{said} Or pass DailyDialog++'s files as --data-dir (https://github.com/iitmnlp/DailyDialog-plusplus, "
                    "dataset/), the fallback, which is not the paper's data."
                ) from None
            choice["why"] = f"DailyDialog was not found ({said})"
    if needed:
        choice["dataset"] = "dailydialog_pp"
        choice["why"] = choice["why"] or "--dataset dailydialog_pp"
    else:
        choice["why"] = "--pairs and --test-contexts"
    return choice


def describe_data(choice: dict, args) -> str:
    """One line saying which data the run uses and, when it is not the paper's, how to get the paper's."""
    if choice["dataset"] == "dailydialog":
        used = PAPER_DATA
    elif choice["dataset"] == "dailydialog_pp":
        used = "DailyDialog++ (positives as training pairs, its test split's contexts; NOT the paper's data)"
    else:
        used = "your files only (NOT the paper's data)"
    replaced = [
        f"{flag} {path}"
        for flag, path in (("--pairs", args.pairs), ("--test-contexts", args.test_contexts))
        if path
    ]
    line = f"data: {used}" + (f"; replaced by {' and '.join(replaced)}" if replaced else "")
    if not choice["paper"]:
        line += f". Not the paper's because {choice['why']}"
    if choice["dataset"] != "dailydialog":
        from dialeval.datasets_scripts.dailydialog.dailydialog import SOURCE_URL

        line += (
            f". To use the paper's DailyDialog, download {SOURCE_URL} on a machine with internet and pass the "
            "folder holding it as --dailydialog-dir"
        )
    return line


def load_data(args, choice: dict):
    """The training pairs and test contexts (``choice`` from :func:`choose_data`, its rows taken out)."""
    loaded = {"train": choice.pop("train"), "test": choice.pop("test")}
    if args.pairs:
        train = read_pairs(args.pairs, "--pairs", True)
    elif choice["dataset"] == "dailydialog":
        train = list(zip(loaded["train"]["context"], loaded["train"]["response"]))
    else:
        from dialeval.datasets_scripts import load

        positives = load(
            "dailydialog_pp",
            "positives",
            split="train",
            data_dir=args.data_dir,
            cache_dir=args.cache_dir,
            verify_checksums=not args.no_verify,
        )
        train = [
            (row["context"], response)
            for row in positives
            for response in row["positive_responses"]
            if response.strip()
        ]
    if args.test_contexts:
        test = [context for context, _ in read_pairs(args.test_contexts, "--test-contexts", False)]
    elif choice["dataset"] == "dailydialog":
        test = list(loaded["test"]["context"])
    else:
        from dialeval.datasets_scripts import load

        test = list(
            load(
                "dailydialog_pp",
                split="test",
                data_dir=args.data_dir,
                cache_dir=args.cache_dir,
                verify_checksums=not args.no_verify,
            )["context"]
        )
    train = [
        (context[-args.context_turns :], response)
        for context, response in train[: args.train_limit]
    ]
    test = [context[-args.context_turns :] for context in test[: args.test_limit]]
    return train, test


def choose_embedder(args) -> dict:
    """Sem-Ent / DRESS's embedder: ``kind``, ``model`` (None: the kind's default), ``paper`` and, when
    the paper's was looked for and is not here, ``why`` (the loader's message saying how to get it)."""
    from dialeval.hub import ModelNotAvailableError, resolve_model_path
    from dialeval.metrics.engines.embedders import DEFAULT_MODELS

    if args.embedder_kind is not None or args.embedder_model is not None:
        kind = args.embedder_kind or "sentence_transformers"
        model = args.embedder_model or DEFAULT_MODELS[kind]
        return {
            "kind": kind,
            "model": model,
            "explicit": True,
            "paper": kind == "last_token" and model == PAPER_EMBEDDER_MODEL,
            "why": None,
        }
    try:
        resolve_model_path(PAPER_EMBEDDER_MODEL, "--embedder-model", local_only=True)
    except (ModelNotAvailableError, ValueError) as error:
        why = str(error).replace("`model`", "--embedder-model (with --embedder-kind last_token)")
        return {
            "kind": "sentence_transformers",
            "model": DEFAULT_MODELS["sentence_transformers"],
            "explicit": False,
            "paper": False,
            "why": why,
        }
    return {
        "kind": "last_token",
        "model": PAPER_EMBEDDER_MODEL,
        "explicit": False,
        "paper": True,
        "why": None,
    }


def describe_embedder(choice: dict) -> str:
    line = f"Sem-Ent / DRESS embedder: {choice['kind']} {choice['model']}"
    if choice["paper"]:
        return line + " (the paper's, App. A.7)"
    if choice["explicit"]:
        return line + f" (as asked; NOT the paper's: last_token {PAPER_EMBEDDER_MODEL})"
    return line + f" (NOT the paper's last_token {PAPER_EMBEDDER_MODEL}: {choice['why']})"


def training_args(cls, output_dir: Path, steps: int, lr: float, args, **extra):
    return cls(
        output_dir=str(output_dir),
        max_steps=steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=lr,
        warmup_steps=min(100, steps // 10),
        lr_scheduler_type="linear",
        weight_decay=0.01,
        logging_steps=max(1, steps // 5),
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        data_seed=args.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
        use_cpu=args.scale == "tiny" or args.device == "cpu",
        **extra,
    )


def starting_checkpoint(args, train, out: Path) -> tuple[str, object]:
    """The directory every method starts from, and its tokenizer."""
    import torch
    from transformers import Trainer, TrainingArguments

    from dialeval.hub import load_model
    from dialeval.trainers import DialogueCollator

    if args.scale == "paper":
        return args.model, load_model(args.model, "language_model", device="cpu").tokenizer
    texts = [turn for context, _ in train for turn in context] + [response for _, response in train]
    tokenizer = build_tokenizer(texts, args.vocab_size, args.max_length)
    torch.manual_seed(args.seed)
    model = build_gpt2(tokenizer, args.max_length, args.width, args.layers)
    base = out / "tiny-base"
    if args.base_steps:
        Trainer(
            model,
            training_args(TrainingArguments, base, args.base_steps, 2e-3, args),
            train_dataset=encoded(train, tokenizer, False, args),
            data_collator=DialogueCollator(tokenizer.pad_token_id),
        ).train()
    model.save_pretrained(str(base))
    tokenizer.save_pretrained(str(base))
    return str(base), tokenizer


def encoded(train, tokenizer, is_encoder_decoder: bool, args):
    import datasets

    from dialeval.trainers import encode_dialogue

    rows = [
        encode_dialogue(tokenizer, context, response, is_encoder_decoder, args.max_length)
        for context, response in train
    ]
    return datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in rows[0]})


def fresh_model(start: str, args):
    from dialeval.hub import load_model

    # a private instance: each method starts from the untouched weights, and the trained ones never
    # reach load_model's cache (where a later metric on the same checkpoint would be handed them)
    return load_model(
        start, "language_model", device="cpu" if args.scale == "tiny" else args.device, cached=False
    ).model


def greedy_responses(
    model, tokenizer, contexts, args, batch_size: int = 32, logits_processor=None
) -> list[str]:
    """§5.3's decoding: greedy, repeated 3-grams blocked (MMI: plus the anti-LM's processor)."""
    import torch
    from transformers import LogitsProcessorList

    from dialeval.trainers import encode_dialogue
    from dialeval.trainers.decoding import greedy_generation_config

    model.eval()
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    prompts = [
        encode_dialogue(tokenizer, context, "", seq2seq, args.max_length)["input_ids"]
        for context in contexts
    ]
    if not seq2seq:  # the encoding ends with the (empty) response's eos
        prompts = [prompt[:-1][-(args.max_length - args.max_new_tokens) :] for prompt in prompts]
    # Greedy whatever the checkpoint's own settings (BlenderBot's: beams, a min_length); 3-grams of
    # the response and of the context blocked (seq2seq: encoder_no_repeat_ngram_size), as ParlAI's
    # --beam-block-ngram / --beam-context-block-ngram.
    config = greedy_generation_config(model, args.max_new_tokens, 3, tokenizer.pad_token_id)
    texts = []
    with torch.no_grad():
        for start in range(0, len(prompts), batch_size):
            chunk = prompts[start : start + batch_size]
            width = max(map(len, chunk))
            pad = tokenizer.pad_token_id
            left = not seq2seq
            ids = [
                ([pad] * (width - len(p)) + p) if left else (p + [pad] * (width - len(p)))
                for p in chunk
            ]
            mask = [
                ([0] * (width - len(p)) + [1] * len(p))
                if left
                else ([1] * len(p) + [0] * (width - len(p)))
                for p in chunk
            ]
            output = model.generate(
                input_ids=torch.tensor(ids, device=model.device),
                attention_mask=torch.tensor(mask, device=model.device),
                generation_config=config,
                logits_processor=LogitsProcessorList(
                    [logits_processor] if logits_processor else []
                ),
            )
            new = output[:, width:] if left else output
            texts += [
                tokenizer.decode(row, skip_special_tokens=True).strip() for row in new.tolist()
            ]
    return texts


def diversity(texts: list[str], clusters) -> dict:
    """Table 3's measures over the generations; an empty generation has nothing to embed, so
    Sem-Ent is over the non-empty ones and their share is reported."""
    from dialeval.metrics import distinct_n, entropy_n, lf, sem_ent

    non_empty = [text for text in texts if text.strip()]
    if not non_empty:
        raise ValueError("every generation is empty: train longer (--steps / --base-steps)")
    row = {f"dist_{n}": distinct_n(texts, n, allow_empty=True) for n in (1, 2, 3)}
    row.update({f"ent_{n}": entropy_n(texts, n, allow_empty=True) for n in (1, 2, 3)})
    row["lf"] = lf(texts, allow_empty=True)
    row["maude"] = None
    row["sem_ent"] = sem_ent(non_empty, clusters)["sem_ent"] + 0.0  # no "-0.0000"
    row["empty_share"] = 1 - len(non_empty) / len(texts)
    return row


def run_folder(out: Path, name: str) -> Path:
    return out / "runs" / name.replace(" ", "_").replace("(", "").replace(")", "").replace("=", "")


def train_one(
    name,
    start,
    tokenizer,
    train,
    test,
    clusters,
    args,
    out: Path,
    gamma=None,
    negative_training=None,
    nt_rows=None,
    nt_alpha=None,
):
    """Trains one method from ``start`` for ``--steps``; returns its test generations and the model.

    gamma None: MLE on ``train`` (Vanilla, EDF's filtered pairs); ``nt_rows``: Negative Training
    on gold + negative rows; otherwise DRESS(-NT)."""
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    from dialeval.trainers import (
        DialogueCollator,
        DRESSConfig,
        DRESSTrainer,
        UnlikelihoodConfig,
        UnlikelihoodTrainer,
        encode_unlikelihood_example,
    )

    model = fresh_model(start, args)
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    folder = run_folder(out, name)
    if nt_rows is not None:
        import datasets

        rows = [
            encode_unlikelihood_example(
                tokenizer,
                row["context"],
                row["response"],
                row["negative_response"],
                seq2seq,
                args.max_length,
                negative_context=row["negative_context"],
            )
            for row in nt_rows
        ]
        dataset = datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in rows[0]})
        config = training_args(
            UnlikelihoodConfig,
            folder,
            args.steps,
            args.lr,
            args,
            alpha=nt_alpha,
            negative_loss="negative_training",
            max_length=args.max_length,
        )
        trainer = UnlikelihoodTrainer(
            model, config, train_dataset=dataset, processing_class=tokenizer
        )
    elif gamma is None:
        trainer = Seq2SeqTrainer(
            model,
            training_args(Seq2SeqTrainingArguments, folder, args.steps, args.lr, args),
            train_dataset=encoded(train, tokenizer, seq2seq, args),
            data_collator=DialogueCollator(tokenizer.pad_token_id),
        )
    else:
        config = training_args(
            DRESSConfig,
            folder,
            args.steps,
            args.lr,
            args,
            gamma=gamma,
            num_clusters=clusters.num_clusters,
            negative_training=negative_training,
            negative_contexts_per_cycle=min(args.negative_contexts, len(train)),
            recluster_every=args.recluster_every,
            negative_max_new_tokens=args.max_new_tokens,
            max_length=args.max_length,
        )
        trainer = DRESSTrainer(
            model,
            config,
            train_dataset=encoded(train, tokenizer, seq2seq, args),
            processing_class=tokenizer,
            semantic_clusters=clusters,
        )
    trainer.train()
    return greedy_responses(model, tokenizer, test, args), model


def train_anti_lm(tokenizer, responses: list[str], vocab_size: int, args, out: Path):
    """MMI's anti-LM U(T): a GPT-2 (``--width`` / ``--layers``) trained on ``[bos] response [eos]``,
    the loss on the response and its eos, over the generator's tokenizer and output size."""
    import datasets
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

    from dialeval.trainers import DialogueCollator

    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    rows = []
    for response in responses:
        ids = tokenizer(response, add_special_tokens=False)["input_ids"][: args.max_length - 2] + [
            tokenizer.eos_token_id
        ]
        rows.append(
            {
                "input_ids": [bos] + ids,
                "attention_mask": [1] * (len(ids) + 1),
                "labels": [-100] + ids,
            }
        )
    torch.manual_seed(args.seed)
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=vocab_size,
            n_positions=args.max_length,
            n_embd=args.width,
            n_layer=args.layers,
            n_head=4,
            bos_token_id=bos,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )
    steps = args.lm_steps if args.lm_steps is not None else max(1, args.base_steps)
    dataset = datasets.Dataset.from_dict({key: [row[key] for row in rows] for key in rows[0]})
    Trainer(
        model,
        training_args(TrainingArguments, run_folder(out, "anti-lm"), steps, 2e-3, args),
        train_dataset=dataset,
        data_collator=DialogueCollator(tokenizer.pad_token_id),
    ).train()
    return model.eval(), bos


def mmi_generations(vanilla, tokenizer, train, test, args, out: Path, info: dict) -> list[str]:
    """Table 3's MMI row: the Vanilla model decoded with MMI-antiLM (Li et al. 2016, §4.3)."""
    from dialeval.generation import MMIAntiLMLogitsProcessor

    if args.anti_lm:
        anti_lm, bos = args.anti_lm, None
    else:
        vocab_size = vanilla.get_output_embeddings().weight.shape[0]
        anti_lm, bos = train_anti_lm(
            tokenizer, [response for _, response in train], vocab_size, args, out
        )
    processor = MMIAntiLMLogitsProcessor(
        anti_lm,
        lam=args.mmi_lambda,
        gamma=args.mmi_gamma,
        bos_token_id=bos,
        device=str(vanilla.device),
    )
    processor.language_model.to(vanilla.device)
    info.update(
        {
            "lambda": args.mmi_lambda,
            "gamma": args.mmi_gamma,
            "anti_lm": args.anti_lm or "trained here",
        }
    )
    return greedy_responses(vanilla, tokenizer, test, args, logits_processor=processor)


def nt_rows_from(vanilla, tokenizer, train, args, info: dict):
    """He & Glass (2020): the Vanilla model's greedy responses for training contexts; frequent ones are negatives."""
    import random

    from dialeval.trainers import frequent_negatives, negative_training_rows

    count = min(args.nt_contexts or args.negative_contexts, len(train))
    picked = sorted(random.Random(args.seed).sample(range(len(train)), count))
    contexts = [train[index][0] for index in picked]
    result = frequent_negatives(
        contexts, greedy_responses(vanilla, tokenizer, contexts, args), args.nt_r_thres
    )
    alpha = args.nt_alpha if args.nt_alpha is not None else result.share
    top = sorted(result.frequent.items(), key=lambda item: -item[1])[:10]
    info.update(
        {
            "r_thres": args.nt_r_thres,
            "contexts": count,
            "negatives": len(result.examples),
            "share": result.share,
            "alpha": alpha,
            "frequent_responses": dict(top),
        }
    )
    if not result.examples:
        return None, alpha
    return negative_training_rows(train, result.examples, seed=args.seed), alpha


def ours_vs_paper(results: dict, args) -> str:
    """What the script prints before its tables: its numbers next to the paper's, then every setting that differs."""
    measures = (
        ("Dist-3", "dist_3", 2),
        ("Ent-3", "ent_3", 5),
        ("LF", "lf", 6),
        ("Sem-Ent", "sem_ent", 8),
    )
    rows = []
    for name, paper_name in METHODS.values():
        row = results["table3"].get(name)
        if row is not None:
            rows.append(
                (
                    name,
                    [
                        (label, cell(row[key], 4), f"{PAPER_TABLE3[paper_name][column]:.4f}")
                        for label, key, column in measures
                    ],
                )
            )
    for label, row in results["table5"].items():
        paper = PAPER_TABLE5.get(label)
        rows.append(
            (
                f"DRESS, {label}",
                [
                    (name, cell(row[key], 4), f"{paper[column]:.4f}" if paper else "-")
                    for name, key, column in (
                        ("Dist-3", "dist_3", 0),
                        ("Ent-3", "ent_3", 1),
                        ("Sem-Ent", "sem_ent", 3),
                    )
                ],
            )
        )
    return paper_comparison(
        "Han et al. (2022), Tables 3 and 5 (paper: Blender-90M on DailyDialog)",
        rows,
        results["differs_from_paper"],
    )


def settings_that_differ(
    args, data: dict, embedding: dict, num_train: int, num_test: int
) -> list[str]:
    """Every setting of this run that is not the paper's (§5.1, §5.3, App. A.7; Tables 3 and 5)."""
    paper = PAPER_SETTING
    differ = []
    if not data["paper"] or args.pairs or args.test_contexts:
        differ.append(
            f"{describe_data(data, args)} (the paper: DailyDialog's official train / test splits)"
        )
    if args.no_verify and data["dataset"] is not None:
        differ.append("--no-verify: the data files were not checked against the release's sha256")
    if args.train_limit is not None:
        differ.append(
            f"training pairs: the first {num_train} (--train-limit; the paper: all of the train split)"
        )
    if num_test != paper["test_pairs"]:
        differ.append(
            f"test contexts: {num_test} (the paper: DailyDialog's test split, {paper['test_pairs']:,} contexts)"
        )
    differ.append(
        f"context: the last {args.context_turns} turns (--context-turns; the paper does not say; ParlAI keeps "
        "the whole history by default, cut to the model's input length)"
    )
    if args.scale == "tiny":
        differ.append(
            f"generator: a GPT-2 (width {args.width}, layers {args.layers}) built and trained from scratch here "
            "(--scale tiny; the paper: Blender-90M, and BART-large, fine-tuned in ParlAI)"
        )
    elif "blenderbot_small-90m" not in args.model.lower():
        differ.append(
            f"generator: --model {args.model} (the paper's rows printed here: Blender-90M)"
        )
    differ.append(
        f"optimization: --steps {args.steps} per method, --lr {args.lr:g} with linear decay after warm-up, "
        f"AdamW (weight decay 0.01), batch {args.batch_size} (the paper: lr {paper['lr']:g} with Adam, halved "
        f"when the loss stops decreasing, until then; batch {paper['batch_size']} for Blender-90M)"
    )
    if args.gamma != paper["gamma"] or args.num_clusters != paper["num_clusters"]:
        differ.append(
            f"DRESS: gamma = {args.gamma:g}, k = {args.num_clusters} "
            f"(the paper: gamma = {paper['gamma']:g}, k = {paper['num_clusters']})"
        )
    if not embedding["paper"]:
        differ.append(describe_embedder(embedding))
    if "mmi" in args.methods:
        differ.append(
            f"MMI: lambda = {args.mmi_lambda:g}, gamma = {args.mmi_gamma} are ours (the paper gives neither) "
            "and the Vanilla model is only decoded with them (the paper lists an MMI learning rate)"
        )
    if "edf" in args.methods and args.edf_source != "utterance":
        differ.append(
            "EDF: the entropy over whole contexts (--edf-source context; Csáky et al.: the last utterance)"
        )
    differ.append("MaUdE: not computed (n/a); CVAE and AdaLabel: not run")
    if args.skip_table5:
        differ.append("Table 5: not run (--skip-table5)")
    elif args.gammas != [1.0, 5.0, 10.0, 30.0, 100.0] or args.ks != [10, 20, 50, 100]:
        differ.append(
            f"Table 5: gamma in {args.gammas}, k in {args.ks} (the paper: gamma in [1, 5, 10, 30, 100], "
            "k in [10, 20, 50, 100])"
        )
    return differ


SCRIPT = Path(__file__).name


def check_inputs(args) -> None:
    """Every file, folder and model the run reads is there (else exit 2 saying how to get it), before any training."""
    if args.scale == "paper":
        require_model(SCRIPT, "--model", args.model, hub_id="facebook/blenderbot_small-90M")
    for flag, model in (("--anti-lm", args.anti_lm), ("--embedder-model", args.embedder_model)):
        if model is not None:
            require_model(SCRIPT, flag, model)
    for flag, path in (("--pairs", args.pairs), ("--test-contexts", args.test_contexts)):
        if path is not None:
            require_path(
                SCRIPT,
                flag,
                path,
                folder=False,
                what='JSONL with "context" (and "response") per line',
            )
    if args.embedder_kind is not None and args.embedder_model is None:
        from dialeval.metrics.engines.embedders import DEFAULT_MODELS

        require_model(SCRIPT, "--embedder-model", DEFAULT_MODELS[args.embedder_kind])
    if args.data_dir is not None:
        require_path(
            SCRIPT,
            "--data-dir",
            args.data_dir,
            folder=True,
            what="DailyDialog++'s released files (https://github.com/iitmnlp/DailyDialog-plusplus, dataset/)",
        )
    if args.dailydialog_dir is not None:
        require_path(
            SCRIPT,
            "--dailydialog-dir",
            args.dailydialog_dir,
            folder=True,
            what="the folder holding DailyDialog's ijcnlp_dailydialog.zip (http://yanran.li/files/ijcnlp_dailydialog.zip)",
        )


def main(argv=None) -> dict:
    """The tables (see the module docstring); a missing input exits 2 with one line saying how to get it."""
    args = parse_args(argv)
    check_inputs(args)
    with one_line_errors(SCRIPT, {"data_dir": "--data-dir"}):
        return run(args)


def run(args) -> dict:
    from dialeval.metrics import SemanticClusters, load_embedder

    out = Path(args.out_dir)
    data = choose_data(args)
    embedding = choose_embedder(args)
    print(describe_data(data, args), flush=True)
    print(describe_embedder(embedding), flush=True)
    train, test = load_data(args, data)
    responses = [response for _, response in train]
    start, tokenizer = starting_checkpoint(args, train, out)
    embedder = load_embedder(embedding["kind"], embedding["model"])
    clusters = {
        args.num_clusters: SemanticClusters.fit(
            responses, embedder, num_clusters=args.num_clusters, seed=args.seed
        )
    }
    # Sem-Ent is always measured at Table 3's k (paper: 20)
    evaluation = clusters[args.num_clusters]
    results = {
        "scale": args.scale,
        "start": start,
        "num_train_pairs": len(train),
        "num_test_contexts": len(test),
        "data": {**data, "said": describe_data(data, args)},
        "embedder": {**embedding, "said": describe_embedder(embedding)},
        "table3": {},
        "table5": {},
        "generations": {},
        "baselines": {},
    }

    def record(method: str, texts: list[str]) -> None:
        name = METHODS[method][0]
        results["generations"][name] = texts
        results["table3"][name] = diversity(texts, evaluation)

    chosen = args.methods
    if {"vanilla", "mmi", "nt"} & set(chosen):  # MMI decodes, and NT post-trains, the Vanilla model
        texts, vanilla = train_one(
            METHODS["vanilla"][0], start, tokenizer, train, test, evaluation, args, out
        )
        if "vanilla" in chosen:
            record("vanilla", texts)
        if "mmi" in chosen:
            record(
                "mmi",
                mmi_generations(
                    vanilla,
                    tokenizer,
                    train,
                    test,
                    args,
                    out,
                    results["baselines"].setdefault("mmi", {}),
                ),
            )
        if "nt" in chosen:
            info = results["baselines"].setdefault("nt", {})
            rows, alpha = nt_rows_from(vanilla, tokenizer, train, args, info)
            if rows is None:
                info["not_run"] = "no generation is frequent at this --nt-r-thres"
            else:
                folder = run_folder(out, "vanilla-final")
                vanilla.save_pretrained(str(folder))
                tokenizer.save_pretrained(str(folder))
                record(
                    "nt",
                    train_one(
                        METHODS["nt"][0],
                        str(folder),
                        tokenizer,
                        train,
                        test,
                        evaluation,
                        args,
                        out,
                        nt_rows=rows,
                        nt_alpha=alpha,
                    )[0],
                )
        del vanilla
    if "edf" in chosen:
        from dialeval.trainers import filter_by_target_entropy

        filtered = filter_by_target_entropy(
            train, args.edf_threshold, args.edf_max_words or None, source=args.edf_source
        )
        results["baselines"]["edf"] = {
            "threshold_bits": args.edf_threshold,
            "max_words": args.edf_max_words or None,
            "source": args.edf_source,
            "removed_pairs": len(filtered.removed),
            "removed_share": filtered.removed_share,
        }
        if not filtered.kept:
            raise ValueError("EDF removed every training pair: raise --edf-threshold")
        record(
            "edf",
            train_one(
                METHODS["edf"][0],
                start,
                tokenizer,
                [train[i] for i in filtered.kept],
                test,
                evaluation,
                args,
                out,
            )[0],
        )
    for method, negative_training in (("dress-nt", False), ("dress", True)):
        if method in chosen:
            record(
                method,
                train_one(
                    METHODS[method][0],
                    start,
                    tokenizer,
                    train,
                    test,
                    evaluation,
                    args,
                    out,
                    args.gamma,
                    negative_training,
                )[0],
            )
    if not args.skip_table5:
        sweep = [(f"gamma = {gamma:.1f}", gamma, args.num_clusters) for gamma in args.gammas]
        sweep += [(f"k = {k}", args.gamma, k) for k in args.ks]
        for label, gamma, k in sweep:
            if k not in clusters:
                clusters[k] = SemanticClusters.fit(
                    responses, embedder, num_clusters=k, seed=args.seed
                )
            if gamma == args.gamma and k == args.num_clusters and "DRESS" in results["generations"]:
                # Table 3's DRESS run (the paper's rows repeat too)
                texts = results["generations"]["DRESS"]
            else:
                texts = train_one(
                    label, start, tokenizer, train, test, clusters[k], args, out, gamma, True
                )[0]
            results["table5"][label] = diversity(texts, evaluation)

    digits = {
        "dist_1": 4,
        "dist_2": 4,
        "dist_3": 4,
        "ent_1": 4,
        "ent_2": 4,
        "ent_3": 4,
        "lf": 4,
        "sem_ent": 4,
    }
    labels = ["Dist-1", "Dist-2", "Dist-3", "Ent-1", "Ent-2", "Ent-3", "LF", "MaUdE", "Sem-Ent"]
    table3 = []
    for method, (name, paper_name) in METHODS.items():
        row = results["table3"].get(name)
        if row is not None:
            table3.append(
                [
                    name,
                    "ours",
                    *(
                        "n/a" if key == "maude" else cell(row[key], digits[key])
                        for key in TABLE3_COLUMNS
                    ),
                ]
            )
        # chosen but not run: NT without a frequent generation
        elif method in NOT_RUN or method in chosen:
            table3.append([name, "not run", *("-" for _ in TABLE3_COLUMNS)])
        if row is not None or method in NOT_RUN or method in chosen:
            table3.append([name, "paper", *(f"{value:.4f}" for value in PAPER_TABLE3[paper_name])])
    baselines = results["baselines"]
    notes = []
    if "mmi" in baselines:
        notes.append(
            f"MMI: the Vanilla model decoded with MMI-antiLM, lambda = {args.mmi_lambda}, gamma = {args.mmi_gamma} "
            f"(anti-LM: {baselines['mmi']['anti_lm']})."
        )
    if "edf" in baselines:
        edf = baselines["edf"]
        notes.append(
            f"EDF: {edf['removed_pairs']} of {len(train)} pairs ({edf['removed_share']:.1%}) removed at a target "
            f"entropy above {args.edf_threshold} bits over the contexts' "
            f"{'last utterances' if args.edf_source == 'utterance' else 'whole contexts (not the paper: --edf-source context)'} "
            f"(Csáky et al.: 6.98% of DailyDialog at 1 bit)."
        )
    if "nt" in baselines:
        nt = baselines["nt"]
        notes.append(
            f"NT: {nt['negatives']} of the Vanilla model's {nt['contexts']} greedy training responses "
            f"({nt['share']:.1%}) above r_thres = {nt['r_thres']} are negatives; alpha = {nt['alpha']:.3g}; "
            "NT post-trains the Vanilla model for --steps more (He & Glass)"
            + (f"; not run: {nt['not_run']}" if "not_run" in nt else "")
            + "."
        )
    notes.append(
        "CVAE and AdaLabel are not run: "
        + "; ".join(f"{METHODS[m][0]} is {why}" for m, why in NOT_RUN.items())
        + "."
    )
    parts = [
        (
            f"Table 3 ({args.scale} scale): diversity of greedy generations for {len(test)} test contexts; "
            "'paper' rows: Blender-90M on DailyDialog as printed"
        ),
        markdown_table(["Method", "Run", *labels], table3),
        f"Sem-Ent: k = {args.num_clusters} clusters of the {len(train)} training responses "
        f"({evaluation.embedder_identity.get('kind')} {evaluation.embedder_identity.get('model', '')}); "
        f"max ln k = {math.log(args.num_clusters):.3f}. MaUdE is not available in dialeval (n/a). "
        "The paper's rows are Blender-90M fine-tuned on DailyDialog (/work/shared/papers/sem-ent-and-dress.txt, "
        "Table 3); compare the ordering of the methods, not the values, at tiny scale. "
        + " ".join(notes),
    ]
    if results["table5"]:
        table5 = []
        for label, row in results["table5"].items():
            paper = PAPER_TABLE5.get(label)
            table5.append(
                [
                    label,
                    cell(row["dist_3"], 4),
                    cell(row["ent_3"], 4),
                    "n/a",
                    cell(row["sem_ent"], 4),
                    *((f"{value:.4f}" for value in paper) if paper else ("-",) * 4),
                ]
            )
        parts += [
            (
                f"Table 5 ({args.scale} scale): DRESS hyperparameters; gamma rows at k = {args.num_clusters}, "
                f"k rows at gamma = {args.gamma}; Sem-Ent always at k = {args.num_clusters}"
            ),
            markdown_table(
                [
                    "Config",
                    "Dist-3",
                    "Ent-3",
                    "MaUdE",
                    "Sem-Ent",
                    "paper Dist-3",
                    "paper Ent-3",
                    "paper MaUdE",
                    "paper Sem-Ent",
                ],
                table5,
            ),
        ]
    results["differs_from_paper"] = settings_that_differ(
        args, data, embedding, len(train), len(test)
    )
    markdown = "\n\n".join([ours_vs_paper(results, args), *parts])
    results["generations"] = {name: texts[:50] for name, texts in results["generations"].items()}
    table, _ = write_outputs(out, "tables3_5", markdown, results)
    print(markdown)
    print(f"\nwrote {table} and tables3_5.json")
    return results


if __name__ == "__main__":
    main()
