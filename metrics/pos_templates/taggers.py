"""The part-of-speech tagger and sentence splitter behind the template metrics, and how to get one.

Two small protocols, so any tagger plugs in:

- a **tagger** is a callable ``tagger(sentences: list[str]) -> list[list[tuple[str, str]]]``: for
  each sentence, its tokens with their fine-grained Penn Treebank tags (``"DT"``, ``"NN"``, ...);
- a **sentence splitter** is a callable ``splitter(text: str) -> list[str]``.

The defaults are the ``diversity`` package's (Shaib et al. 2024): NLTK's punkt ``sent_tokenize``
and spaCy's ``en_core_web_sm`` tags (``token.tag_``); where the spaCy model is not installed but
NLTK's averaged perceptron tagger data is, NLTK's Treebank tokenizer and tagger (the same tag set,
other tokens and tags: scores differ from spaCy's). Nothing is ever downloaded here: a machine
without them gets :class:`TaggerNotAvailableError` with the commands that install them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from dialeval.hub import ModelNotAvailableError

if TYPE_CHECKING:
    from nltk.tag import PerceptronTagger
    from spacy.language import Language

Tagger = Callable[[list[str]], list[list[tuple[str, str]]]]
SentenceSplitter = Callable[[str], list[str]]

SPACY_MODEL = "en_core_web_sm"
#: NLTK's data names (NLTK >= 3.9; older NLTK reads the pickled ``punkt`` /
#: ``averaged_perceptron_tagger``).
NLTK_PUNKT = "punkt_tab"
NLTK_TAGGER = "averaged_perceptron_tagger_eng"
HOW_TO_INSTALL = (
    f"`pip install spacy && python -m spacy download {SPACY_MODEL}` (the `diversity` package's "
    f"tagger) and `python -m nltk.downloader {NLTK_PUNKT}` (its sentence splitter), or NLTK alone: "
    f"`python -m nltk.downloader {NLTK_PUNKT} {NLTK_TAGGER}`; or pass your own `tagger` and "
    "`sentence_splitter`"
)


class TaggerNotAvailableError(ModelNotAvailableError):
    """No part-of-speech tagger or sentence splitter is installed; the message says how to get one.

    A :class:`~dialeval.hub.ModelNotAvailableError`, so ``dialeval meta-eval`` and ``dialeval
    evaluate`` record the metric as skipped with this message, as for a model not on the machine.
    """


def _installed(module: str) -> bool:
    return module in sys.modules or importlib.util.find_spec(module) is not None


def _nltk_data_folders() -> list[str] | None:
    """The folders NLTK searches for its data when nothing changed ``nltk.data.path`` (its
    ``NLTK_DATA``, home and POSIX defaults); None where they are not known here (Windows)."""
    if sys.platform.startswith("win"):
        return None
    folders = [
        os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d
    ]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        folders.append(os.path.expanduser("~/nltk_data"))
    prefixed = [os.path.join(sys.prefix, *part, "nltk_data") for part in ((), ("share",), ("lib",))]
    return (
        folders
        + prefixed
        + [f"/usr/{where}/nltk_data" for where in ("share", "local/share", "lib", "local/lib")]
    )


def _surely_absent(resource: str) -> bool:
    """No folder NLTK searches holds ``resource``'s category (``tokenizers``, ``taggers``): it
    cannot be found, which is known without importing NLTK (seconds: it loads scikit-learn, scipy
    and pandas). Once NLTK is imported its own search decides (its path may have been changed)."""
    folders = None if "nltk" in sys.modules else _nltk_data_folders()
    # a zip file on the path is searched inside by NLTK alone
    if folders is None or any(os.path.isfile(folder) for folder in folders):
        return False
    category = resource.split("/", 1)[0]
    return not any(os.path.isdir(os.path.join(folder, category)) for folder in folders)


def _nltk_has(resource: str) -> bool:
    if not _installed("nltk") or _surely_absent(resource):
        return False
    # nltk: importing it loads scikit-learn, scipy and pandas; only this path needs it
    import nltk

    try:
        nltk.data.find(resource)
    except LookupError:
        return False
    return True


def spacy_available() -> bool:
    """spaCy and its ``en_core_web_sm`` package are installed (nothing is loaded)."""
    return _installed("spacy") and _installed(SPACY_MODEL)


def nltk_tagger_available() -> bool:
    return _nltk_has(f"taggers/{NLTK_TAGGER}/")


def punkt_available() -> bool:
    return _nltk_has(f"tokenizers/{NLTK_PUNKT}/english/")


def tagger_available() -> bool:
    """The default tagger and sentence splitter can run here (cheap: loads no model)."""
    return punkt_available() and (spacy_available() or nltk_tagger_available())


def _missing(what: str) -> TaggerNotAvailableError:
    return TaggerNotAvailableError(
        f"no {what} is installed for the part-of-speech template metrics: {HOW_TO_INSTALL}"
    )


class SpacyTagger:
    """spaCy's fine-grained tags (``token.tag_``) of each sentence, as the ``diversity`` package's
    ``get_pos``.

    The pipeline is loaded once per (model, process) with only ``tok2vec`` and ``tagger`` enabled,
    as the package does; ``n_process=1`` by default (the package's 4 start worker processes per
    call).
    """

    def __init__(self, model: str = SPACY_MODEL, batch_size: int = 1000, n_process: int = 1):
        self.model, self.batch_size, self.n_process = model, batch_size, n_process

    def __call__(self, sentences: list[str]) -> list[list[tuple[str, str]]]:
        nlp = _spacy_pipeline(self.model)
        docs = nlp.pipe(sentences, batch_size=self.batch_size, n_process=self.n_process)
        return [[(token.text, token.tag_) for token in doc] for doc in docs]


@lru_cache(maxsize=4)
def _spacy_pipeline(model: str) -> Language:
    # spacy is optional: imported only when its tagger is asked for
    import spacy

    try:
        return spacy.load(model, enable=["tok2vec", "tagger"])
    except OSError as error:  # spaCy's "Can't find model" (E050)
        raise TaggerNotAvailableError(
            f"spaCy cannot load {model!r} ({error}): {HOW_TO_INSTALL}"
        ) from error


class NLTKTagger:
    """NLTK's Treebank tokens (``word_tokenize(..., preserve_line=True)``) tagged by its averaged
    perceptron."""

    def __call__(self, sentences: list[str]) -> list[list[tuple[str, str]]]:
        # nltk: importing it loads scikit-learn, scipy and pandas; only this path needs it
        from nltk.tokenize import word_tokenize

        tagger = _nltk_perceptron()
        return [tagger.tag(word_tokenize(sentence, preserve_line=True)) for sentence in sentences]


@lru_cache(maxsize=1)
def _nltk_perceptron() -> PerceptronTagger:
    # nltk: importing it loads scikit-learn, scipy and pandas; only this path needs it
    from nltk.tag import PerceptronTagger

    return PerceptronTagger()


def nltk_sentence_splitter(text: str) -> list[str]:
    """NLTK's punkt ``sent_tokenize`` (English), the ``diversity`` package's splitter."""
    # nltk: importing it loads scikit-learn, scipy and pandas; only this path needs it
    from nltk.tokenize import sent_tokenize

    return sent_tokenize(text)


def default_tagger() -> Tagger:
    """spaCy ``en_core_web_sm`` when installed, else NLTK's perceptron when its data is; else the
    how-to."""
    if spacy_available():
        return SpacyTagger()
    if nltk_tagger_available():
        return NLTKTagger()
    raise _missing("part-of-speech tagger")


def default_sentence_splitter() -> SentenceSplitter:
    """NLTK's punkt when its data is installed; else the how-to."""
    if punkt_available():
        return nltk_sentence_splitter
    raise _missing("sentence splitter (NLTK's punkt)")


__all__ = [
    "HOW_TO_INSTALL",
    "NLTKTagger",
    "SentenceSplitter",
    "SpacyTagger",
    "Tagger",
    "TaggerNotAvailableError",
    "default_sentence_splitter",
    "default_tagger",
    "nltk_sentence_splitter",
    "tagger_available",
]
