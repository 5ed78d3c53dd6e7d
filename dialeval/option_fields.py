"""How a dataclass field is spelled on the command line: the metadata every option dataclass uses.

A job's or a metric's settings are dataclass fields; a field joins a command line when its
metadata holds a :class:`CliOption`, made with :func:`option`
(``field(default=5, metadata=option("--max-n", help=...))``). This spelling sits in the root
layer so that each metric subpackage can declare the flags of its own ``dialeval evaluate``
settings beside its code (``metrics/<name>/job.py``); :mod:`dialeval.cli.options` builds the
argparse parsers from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dialeval.runtimes import BACKENDS, DEFAULT_BACKEND

#: The metadata key of a field's :class:`CliOption`.
KEY = "cli"
NOT_GIVEN = object()


@dataclass(frozen=True)
class CliOption:
    """How a dataclass field is spelled on the command line (build it with :func:`option`)."""

    flags: tuple[str, ...]  # empty: a positional argument named after the field
    help: str | None = None
    metavar: str | None = None
    choices: tuple | None = None
    repeatable: bool = False  # action="append"; the field's default applies when it is not given
    nargs: str | None = None  # "+" for positional lists
    convert: Callable | None = None  # the command-line form -> the field's value
    default: object = NOT_GIVEN  # for a field that has no default in its dataclass
    default_text: str | None = (
        None  # the default as help shows it, when the value alone does not say it
    )
    off_flag: str | None = None  # a switch that sets the field to `off_value`
    off_help: str | None = None
    off_value: object = None
    one_of: str | None = None  # fields sharing this name form a required mutually exclusive group
    # other Python argument names (in jobs' errors) this option feeds, or (text, replacement) pairs
    aliases: tuple[str | tuple[str, str], ...] = ()
    # the value names a file or folder the command reads: an output over it is refused, and its
    # sha256 is part of a run's identity for --resume
    reads_path: bool = False


def option(*flags: str, **details: Any) -> dict[str, CliOption]:
    """Field metadata for a command-line option; see :class:`CliOption` for ``details``."""
    if "choices" in details and details["choices"] is not None:
        details["choices"] = tuple(details["choices"])
    return {KEY: CliOption(tuple(flags), **details)}


def cli_fields(cls: type[Any]) -> list[tuple[dataclasses.Field[Any], CliOption]]:
    """The fields of dataclass ``cls`` that are on the command line, in declaration order."""
    return [(f, f.metadata[KEY]) for f in dataclasses.fields(cls) if KEY in f.metadata]


def models_or_none(models: list[str]) -> list[str]:
    """``--x-model`` values as given; ``none`` alone turns the metric off."""
    return [] if [model.lower() for model in models] == ["none"] else models


def model_list_field(flag: str, default: str | None, help: str, **details: Any) -> list[str]:
    """A repeatable ``--x-model`` field: the models a metric runs with, ``none`` alone turning it
    off."""
    return dataclasses.field(
        default_factory=lambda: [default] if default is not None else [],
        metadata=option(
            flag,
            metavar="MODEL",
            repeatable=True,
            convert=models_or_none,
            help=f"{help}; 'none' to skip",
            **details,
        ),
    )


def backend_field() -> str | None:
    """The ``--backend`` field of a job that runs models: None resolves to
    :data:`dialeval.runtimes.DEFAULT_BACKEND` (:func:`dialeval.runtimes.check_backend`)."""
    return dataclasses.field(
        default=None,
        metadata=option(
            "--backend",
            choices=BACKENDS,
            default_text=DEFAULT_BACKEND,
            help=(
                "runtime of every model the job runs: torch, onnx (ONNX Runtime) or openvino, "
                "each in float32 (figures equal to torch's within 1e-5; onnx and openvino run on "
                "the CPU, from a graph exported once and cached); auto: onnx for the encoders and "
                "classifiers on the CPU, torch for the rest"
            ),
        ),
    )
