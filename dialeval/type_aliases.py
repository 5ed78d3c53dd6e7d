"""The types dialeval's signatures share: a device, a tokenizer, texts, response sets, progress.

Annotate with these names rather than spelling the unions again::

    from dialeval.type_aliases import DeviceLike, Texts

    def embed(texts: Texts, device: DeviceLike = None) -> np.ndarray: ...

The aliases that name torch, transformers or sentence-transformers classes are strings, resolved
by type checkers only (those libraries are imported under ``TYPE_CHECKING``), so importing
dialeval never imports torch; ``typing.get_type_hints`` cannot resolve them at run time. The
alias of what a model argument accepts (a Hub id, a folder or a loaded model) is
:data:`dialeval.hub.ModelSource`, beside the :class:`~dialeval.hub.LoadedModel` it names: this
module imports nothing from dialeval, so every module of the root layer can import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    import torch
    import transformers

#: A torch device as a user names it: ``"cpu"``, ``"cuda:1"``, an accelerator index, a
#: ``torch.device``, or None for Accelerate's default (:func:`dialeval.hub.resolve_device`).
DeviceLike: TypeAlias = "str | int | torch.device | None"
#: A transformers tokenizer, slow or fast (``AutoTokenizer.from_pretrained``'s result).
Tokenizer: TypeAlias = "transformers.PreTrainedTokenizerBase"
#: A file or folder argument.
StrPath: TypeAlias = str | os.PathLike[str]
#: Texts given together: the responses of one set, a corpus, a batch to embed.
Texts: TypeAlias = Sequence[str]
#: Response sets, one sequence of responses per context.
ResponseSets: TypeAlias = Sequence[Sequence[str]]
#: A word tokenizer, a text -> its words: the lexical metrics' ``tokenizer``
#: (:func:`dialeval.text.get_tokenizer`).
WordTokenizer: TypeAlias = Callable[[str], Sequence[str]]
#: A progress callback: called with the number of units (texts, pairs, questions) just finished;
#: ``tqdm(total=...).update`` fits. Its return value is ignored.
Progress: TypeAlias = Callable[[int], object]


class SentenceEncoder(Protocol):
    """What the engines call on a loaded sentence model (a ``SentenceTransformer`` or a stand-in):
    ``encode`` returning one row (an array or a list of numbers) per text. Its keywords are
    spelled out: a bare ``encode(...)`` would let a ``str`` (``str.encode``) pass for a model."""

    def encode(
        self,
        inputs: list[str],
        /,
        *,
        batch_size: int,
        convert_to_numpy: Literal[True],
        normalize_embeddings: bool,
        show_progress_bar: bool,
    ) -> Any: ...


__all__ = [
    "DeviceLike",
    "Progress",
    "ResponseSets",
    "SentenceEncoder",
    "StrPath",
    "Texts",
    "Tokenizer",
    "WordTokenizer",
]
