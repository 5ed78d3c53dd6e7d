"""What the ``bench_peers*`` scripts share: settings, data, the models built in code, the row
record, the ``bench_peers`` section of RESULTS.md and the command line. Each ``bench_peers_<what>.py``
holds the rows of one comparison; ``bench_peers.py`` runs them all into the one section.
"""

from __future__ import annotations

import _report

_report.set_offline_environment()  # before the libraries below read it

import argparse
import importlib.util
import json
import logging
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import transformers
from _report import (
    DAILYDIALOG,
    DATA_ROOT,
    RESULTS_PATH,
    Timing,
    dailydialog_records,
    details_head,
    markdown_table,
    package_versions,
    section_text,
    write_section,
)

from dialeval.io import read_tevet_csv
from dialeval.runtimes import BACKENDS, DEFAULT_BACKEND

DECTEST_FILE = (
    DATA_ROOT / "tevet-diversity-eval" / "raw" / "decTest" / "dec_test_200_with_hds_resp_gen.csv"
)
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SCRIPT = "bench_peers"
LABELS = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}  # the library's canonical order
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
BERTSCORE_ATOL = 1e-5
BERTSCORE_LAYERS = 4  # of 6: about roberta-large's layer 17 of 24, bert_score's choice

FULL = {
    "repeats": 3,
    "nli_sets": 6,
    "nli_batch_size": 32,
    "nli_shape": "distilroberta",
    "embed_texts": 10_000,
    "sets": 400,
    "lexical_responses": 100_000,
    "self_bleu_responses": 500,
    "vendi_rows": 50_000,
    "vendi_sets": 2_000,
    "bertscore_sets": 20,
    "sem_ent_texts": 1_000,
    "selection_questions": 60,
    "template_texts": 1_000,
}
SMOKE = {
    "repeats": 2,
    "nli_sets": 2,
    "nli_batch_size": 32,
    "nli_shape": "tiny",
    "embed_texts": 200,
    "sets": 20,
    "lexical_responses": 5_000,
    "self_bleu_responses": 60,
    "vendi_rows": 2_000,
    "vendi_sets": 100,
    "bertscore_sets": 3,
    "sem_ent_texts": 60,
    "selection_questions": 4,
    "template_texts": 100,
}
SHAPES = {
    "distilroberta": {
        "hidden_size": 768,
        "num_hidden_layers": 6,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 50265,
    },
    "tiny": {
        "hidden_size": 32,
        "num_hidden_layers": 6,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "vocab_size": None,
    },
}


@dataclass
class Row:
    key: str
    path: str
    data: str
    ours: str
    peer: str
    ours_timing: Timing
    peer_timing: Timing
    equal: bool | None  # None: different definitions, nothing to compare
    equal_detail: str
    ratio_kind: str = "peer"  # "peer": peer/ours; "ceiling": ours as a fraction of the ceiling
    others: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.peer_timing.wall_median / self.ours_timing.wall_median


#: The rows, in the order they run and are reported; each ``bench_peers_<what>.py`` has some.
ORDER = (
    "nli",
    "embeddings",
    "lexical",
    "self_bleu",
    "vendi",
    "bertscore",
    "sem_ent",
    "selection",
    "templates",
    "embedding_distances",
    "self_repetition",
    "homogenization",
)
#: Rows that run only when ``--only`` names them.
NOT_BY_DEFAULT = frozenset({"homogenization"})


@dataclass
class Inputs:
    """What the rows read: the settings, the data, a work folder and the NLI classifier."""

    settings: dict
    smoke: bool
    workdir: Path
    dectest_sets: list[list[str]]
    records: list[dict]
    shapes: dict[str, str] = field(default_factory=dict)
    nli_path: str | None = None
    #: The runtime of OUR side of every model-backed row; the peers run torch, as a user runs them.
    backend: str = DEFAULT_BACKEND

    @property
    def repeats(self) -> int:
        return self.settings["repeats"]

    def nli_classifier(self) -> str:
        """The seeded random NLI classifier of the settings' shape, built on first use."""
        if self.nli_path is None:
            texts = [text for responses in self.dectest_sets for text in responses]
            self.nli_path = build_classifier(
                self.workdir / "nli", texts, self.settings["nli_shape"]
            )
            self.shapes["nli"] = shape_text(self.nli_path)
        return self.nli_path


# ---------------------------------------------------------------- data


def dailydialog_responses(records: list[dict]) -> list[str]:
    """Every ``*_responses`` string, file order, duplicates kept."""
    return [
        text
        for record in records
        for key in record
        if key.endswith("_responses")
        for text in record[key]
    ]


def dailydialog_strings(records: list[dict]) -> list[str]:
    """Every string of the records: context turns and responses."""
    out = []
    for record in records:
        for value in record.values():
            if isinstance(value, list):
                out += [text for text in value if isinstance(text, str)]
    return out


def dailydialog_sets(count: int) -> list[list[str]]:
    """Sets of 5-10: the 5 positive responses of a dev/test record plus 0-5 of its adversarial ones."""
    records = dailydialog_records(("dev.json", "test.json"))
    sets = []
    for index, record in enumerate(records[:count]):
        extra = [text for text in record.get("adversarial_negative_responses", []) if text.strip()][
            : index % 6
        ]
        sets.append([text for text in record["positive_responses"] if text.strip()] + extra)
    return [s for s in sets if len(s) >= 2]


def cycled(texts: list[str], size: int) -> list[str]:
    return (texts * (size // len(texts) + 1))[:size]


# ---------------------------------------------------------------- models


def train_bpe(texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=30000,
            special_tokens=SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    bpe.post_processor = processors.RobertaProcessing(
        ("</s>", 2), ("<s>", 0), add_prefix_space=False
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        model_max_length=512,
        bos_token="<s>",
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
    )


def build_classifier(directory: Path, texts: list[str], shape: str) -> str:
    """A seeded random RoBERTa NLI classifier of ``SHAPES[shape]`` and a BPE trained on ``texts``."""
    from transformers import RobertaConfig, RobertaForSequenceClassification

    tokenizer = train_bpe(texts)
    dims = dict(SHAPES[shape])
    dims["vocab_size"] = dims["vocab_size"] or len(tokenizer)
    config = RobertaConfig(
        max_position_embeddings=514,
        num_labels=3,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
        initializer_range=0.02,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **dims,
    )
    torch.manual_seed(0)
    RobertaForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def with_roberta_tokenizer_class(source: str, directory: Path) -> str:
    """A copy of ``source`` whose tokenizer is declared ``RobertaTokenizer`` (roberta-large's conventions)."""
    shutil.copytree(source, directory)
    config_file = directory / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["tokenizer_class"] = "RobertaTokenizer"
    config_file.write_text(json.dumps(config))
    return str(directory)


def shape_text(path: str) -> str:
    config = transformers.AutoConfig.from_pretrained(path)
    ffn = (
        getattr(config, "intermediate_size", None)
        or getattr(config, "n_inner", None)
        or 4 * config.hidden_size
    )
    return (
        f"{config.num_hidden_layers} x {config.hidden_size}, {config.num_attention_heads} heads, "
        f"FFN {ffn}, {config.vocab_size:,}-token table"
    )


def load_peer_module(name: str):
    """``diversity/<name>.py`` alone, without running ``diversity/__init__.py``; None when not installed."""
    spec = importlib.util.find_spec("diversity")
    if spec is None or spec.origin is None:
        return None
    location = Path(spec.origin).parent / f"{name}.py"
    module_spec = importlib.util.spec_from_file_location(f"peer_{name}", location)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def reference_sent_encode(tokenizer, sent):
    """bert_score 0.3.13's ``sent_encode`` as on transformers 4 (tests/metrics/test_bertscore.py's patch)."""
    from transformers import GPT2Tokenizer, RobertaTokenizer

    sent = sent.strip()
    if sent == "":
        return tokenizer.encode("", add_special_tokens=True)
    if isinstance(tokenizer, (GPT2Tokenizer, RobertaTokenizer)) and not sent[0].isspace():
        sent = " " + sent
    return tokenizer.encode(
        sent, add_special_tokens=True, max_length=tokenizer.model_max_length, truncation=True
    )


# ---------------------------------------------------------------- report


def verdict(row: Row) -> str:
    if row.ratio_kind == "ceiling":
        return f"**{row.ratio:.2f}** of the ceiling"
    text = f"{row.ratio:.2f}x"
    return f"**{text}**" if row.ratio >= 1.0 else f"**{text}** (peer faster)"


def equality(row: Row) -> str:
    if row.equal is None:
        return f"n/a: {row.equal_detail}"
    return f"{'yes' if row.equal else '**NO**'}: {row.equal_detail}"


def render(
    rows: list[Row], settings: dict, command: str, shapes: dict, backend: str = DEFAULT_BACKEND
) -> str:
    lines = [
        "## bench_peers: dialeval vs peers",
        "",
        (
            "Each path against the library a user would pick instead, in the same run on the same inputs, calls "
            f"interleaved ({settings['repeats']} rounds, rotated order, one untimed warm-up each), medians. Ratio = peer "
            "wall time / our wall time (>= 1.0: ours at least as fast); for the ceiling row, ours as a fraction of the "
            "bare-forward ceiling."
        ),
        "",
        (
            f"Our side of the model-backed rows ran on the `{backend}` backend in float32 "
            "(`--backend`; dialeval's default is "
            f"`{DEFAULT_BACKEND}`); every peer ran on torch float32, as a user runs it."
        ),
        "",
        *markdown_table(
            (
                "path",
                "data",
                "ours",
                "peer",
                "ours: wall / CPU",
                "peer: wall / CPU",
                "ratio (wall)",
                "equal outputs",
            ),
            "llllrrrl",
            [
                (
                    row.path,
                    row.data,
                    row.ours,
                    row.peer,
                    f"{row.ours_timing.wall_median:.3f} / {row.ours_timing.cpu_median:.3f} s",
                    f"{row.peer_timing.wall_median:.3f} / {row.peer_timing.cpu_median:.3f} s",
                    verdict(row),
                    equality(row),
                )
                for row in rows
            ],
        ),
    ]
    losing = [row for row in rows if row.ratio_kind == "peer" and row.ratio < 1.0]
    disturbed = [row for row in rows if row.others > 0.10]
    if disturbed:
        lines += [
            "",
            (
                f"**Disturbed**: other processes took more than 10% of the machine's CPU during {len(disturbed)} of "
                f"{len(rows)} rows (up to {max(row.others for row in disturbed):.0%}); the ratios are indicative, "
                "re-measure on an idle machine."
            ),
        ]
    if torch.get_num_threads() < (os.cpu_count() or 1):
        lines += [
            "",
            (
                f"torch and BLAS ran with {torch.get_num_threads()} thread(s) (`--threads`), fewer than the "
                f"{os.cpu_count()} cores: see the script's docstring."
            ),
        ]
    lines += [
        "",
        (
            "Rows where the peer is faster: "
            + "; ".join(f"{row.path} ({row.ratio:.2f}x)" for row in losing)
            + "."
            if losing
            else "No row where the peer is faster."
        ),
        "",
        *details_head(command),
        (
            f"- Versions: Python {platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
            f"transformers {transformers.__version__}, {peer_versions()}"
        ),
        (
            "- Timing: `time.perf_counter` wall time and CPU time (`time.process_time`, all threads, plus reaped child "
            "processes' CPU from `os.times`) of each whole call; CPU > wall means several cores worked."
        ),
        (
            f"- NLI model: seeded random `RobertaForSequenceClassification` ({shapes.get('nli', '?')}), byte-level BPE "
            "trained on the decTest file; float32 on CPU. BERTScore uses the same weights with the tokenizer declared "
            f"`RobertaTokenizer`, layer {BERTSCORE_LAYERS}."
        ),
        (
            "- Other processes' share of the machine's CPU during each row (from `/proc/stat`; above ~10% the timings are "
            "disturbed): " + ", ".join(f"{row.key} {row.others:.0%}" for row in rows) + "."
        ),
        "",
        "All runs (wall seconds; ours | peer):",
        "",
    ]
    for row in rows:
        lines.append(
            f"- {row.key}: {', '.join(f'{t:.3f}' for t in row.ours_timing.wall)} | "
            f"{', '.join(f'{t:.3f}' for t in row.peer_timing.wall)}"
            + (f" ({'; '.join(row.notes)})" if row.notes else "")
        )
    lines += ["", f"Settings: `{json.dumps(settings)}`."]
    return section_text(SCRIPT, lines)


def peer_versions() -> str:
    return package_versions(
        ("sentence-transformers", "diversity", "nltk", "vendi-score", "bert-score", "scikit-learn")
    )


def main(rows: dict[str, Callable[[Inputs], list[Row]]], doc: str, script: str, argv=None) -> int:
    """The command line of a ``bench_peers*`` script running ``rows`` (name -> the function measuring
    them), in :data:`ORDER`; writes the ``bench_peers`` section. 1 when an equality check fails."""
    names = tuple(name for name in ORDER if name in rows)
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument(
        "--smoke", action="store_true", help="tiny models and sizes (< 1 minute; not a measurement)"
    )
    for name, value in FULL.items():
        if name != "nli_shape":
            parser.add_argument(
                f"--{name.replace('_', '-')}",
                type=int,
                default=None,
                help=f"default {value} (smoke {SMOKE[name]})",
            )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=names,
        help="run only these rows (the written section then holds only them)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch and BLAS threads (default: the cores); 1 on a busy shared machine, see the docstring",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=DEFAULT_BACKEND,
        help="runtime of OUR side of the model-backed rows, in float32 (default: dialeval's "
        f"default, {DEFAULT_BACKEND}); the peers run torch",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="Markdown file to update (default RESULTS.md; smoke: a temp file)",
    )
    args = parser.parse_args(argv)
    settings = dict(SMOKE if args.smoke else FULL)
    for name in settings:
        given = getattr(args, name, None)
        if given is not None:
            settings[name] = given
    stem = Path(script).stem
    results = args.results or (
        Path(tempfile.gettempdir()) / f"{stem}_smoke.md" if args.smoke else RESULTS_PATH
    )
    for required in (DECTEST_FILE, DAILYDIALOG):
        if not required.exists():
            print(
                f"{stem}: {required} not found (the papers' data lives in ../shared/data); nothing measured"
            )
            return 1
    logging.getLogger("transformers").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    transformers.utils.logging.disable_progress_bar()
    if args.threads is not None:
        if args.threads < 1:
            parser.error("--threads must be positive")
        torch.set_num_threads(args.threads)
        from threadpoolctl import threadpool_limits

        # numpy's and scipy's BLAS (and OpenMP) pools, for the whole run
        threadpool_limits(args.threads)
    wanted = set(args.only or (name for name in names if name not in NOT_BY_DEFAULT))
    started = time.perf_counter()

    measured: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench_peers_") as workdir:
        inputs = Inputs(
            settings,
            args.smoke,
            Path(workdir),
            [s.responses for s in read_tevet_csv(DECTEST_FILE)],
            dailydialog_records(),
            backend=args.backend,
        )
        if wanted & {"nli", "bertscore"}:
            inputs.nli_classifier()  # first: building it seeds torch, whose generator the rows go on from
        for name in ORDER:
            if name in wanted:
                measured += rows[name](inputs)

    command = f".venv/bin/python benchmarks/{script} " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    write_section(
        results, SCRIPT, render(measured, settings, command.strip(), inputs.shapes, args.backend)
    )
    print()
    for row in measured:
        print(
            f"{row.key:20s} ours {row.ours_timing.wall_median:8.3f} s  peer {row.peer_timing.wall_median:8.3f} s  "
            f"ratio {row.ratio:6.2f}  equal {row.equal}  ({row.equal_detail})"
        )
    print(f"wrote {results} after {time.perf_counter() - started:.0f} s")
    failed = [row.key for row in measured if row.equal is False]
    if failed:
        print(f"ERROR: outputs differ in {failed}", file=sys.stderr)
    return 1 if failed else 0
