"""Where ``dialeval meta-eval`` reads Tevet & Berant's released CSVs when ``--data-dir`` is not
given.

The local places come first, in this order: the folder the environment variable
:data:`DATA_DIR_VARIABLE` names (the unzipped ``data.zip``, or a folder of the papers' releases
holding it as :data:`RELEASE_FOLDER`), then ``../shared/data/tevet-diversity-eval`` beside a source
checkout (where the project's tests read it). A place counts when it holds the very file a test
set is built from. Without one, the ``datasets`` cache is tried (a test set prepared before, or
its CSV downloaded before), and then, online, the pinned download. When that fails too, offline
(``HF_DATASETS_OFFLINE`` / ``HF_HUB_OFFLINE``) or not, the error is one line saying where it
looked and how to get the data.
"""

from __future__ import annotations

import os
from pathlib import Path

#: A folder holding the release: the unzipped ``data.zip``, or a folder with it as
#: :data:`RELEASE_FOLDER`.
DATA_DIR_VARIABLE = "DIALEVAL_DATA_DIR"
#: The release's folder name in a folder of the papers' data releases.
RELEASE_FOLDER = "tevet-diversity-eval"
#: The authors' archive (``raw/`` and ``with_metrics/`` folders).
RELEASE_URL = "http://diversity-eval.s3-us-west-2.amazonaws.com/data.zip"


def _checkout_data() -> Path | None:
    """``../shared/data`` beside the source checkout this package runs from (an installed package
    has none)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        return None
    return root.parent / "shared" / "data"


#: The papers' data folder beside this source checkout (where its tests read the releases);
#: None for an installed package.
CHECKOUT_DATA = _checkout_data()


def local_places() -> list[Path]:
    """Every local folder to look in, in order."""
    places = []
    variable = os.environ.get(DATA_DIR_VARIABLE)
    if variable:
        folder = Path(variable).expanduser()
        places += [folder, folder / RELEASE_FOLDER]
    if CHECKOUT_DATA is not None:
        places.append(CHECKOUT_DATA / RELEASE_FOLDER)
    return places


def local_release(local_paths: tuple[str, ...]) -> str | None:
    """The first local place (:func:`local_places`) holding one of ``local_paths`` (the paths a
    release file may have under a data folder); None when none does."""
    for folder in local_places():
        if any((folder / relative).is_file() for relative in local_paths):
            return str(folder)
    return None


def missing_release(file_name: str, detail: str) -> str:
    """The one line for a release file found nowhere; ``detail`` says why the download did not
    give it."""
    variable = os.environ.get(DATA_DIR_VARIABLE)
    looked = [
        f"${DATA_DIR_VARIABLE} ({variable})" if variable else f"${DATA_DIR_VARIABLE} (not set)"
    ]
    if CHECKOUT_DATA is not None:
        looked.append(str(CHECKOUT_DATA / RELEASE_FOLDER))
    looked.append("the datasets cache")
    return (
        f"Tevet & Berant's {file_name} is not on this machine (looked in {', '.join(looked)}) "
        f"and {detail}: download {RELEASE_URL}, unzip it and pass its folder as `data_dir` or "
        f"set {DATA_DIR_VARIABLE} to it"
    )


def offline() -> bool:
    """Whether the Hugging Face libraries are told not to go online."""
    # datasets: deferred to the one path that needs it
    import datasets.config

    return bool(datasets.config.HF_HUB_OFFLINE) or bool(
        getattr(datasets.config, "HF_DATASETS_OFFLINE", False)
    )
