"""MkDocs hook: the site reads the repository's own cards where they live.

The metric cards, dataset cards, ``generation/README.md``, ``examples/reproduce/README.md``,
``benchmarks/RESULTS.md`` and ``CHANGELOG.md`` stay where their code is (the Hub Spaces and the
wheel ship the cards); a page pulls one in at build time with a line of its own::

    <!-- include: metrics/lexical_diversity/README.md -->

(a path from the repository's root; ``shift=N`` after it demotes the file's headings by N levels,
default 1). The file's YAML front matter (a Space's or a dataset card's metadata) is left out, and
its relative links are rewritten: to the page that includes the linked file when there is one,
otherwise to the file's path in the repository, printed as code (the site is built offline and
names no repository host). The same rewriting applies to the pages' own links out of ``docs/``.

The hook also lays out ``build/docs-api/dialeval``, links to the five folders setup.py maps into
the one ``dialeval`` package, where mkdocstrings' loader (griffe) finds the package as users import it.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from pathlib import Path

INCLUDE = re.compile(
    r"^<!-- include: (?P<path>\S+)(?: shift=(?P<shift>\d+))? -->[ \t]*$", re.MULTILINE
)
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})(?= )")
# [text](target) and ![alt](target); a target with a scheme, an anchor alone or an e-mail is left alone.
LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]\n]*)\]\((?P<target>[^)\s]+)\)")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", re.IGNORECASE)

API_TREE = Path("build") / "docs-api"
PACKAGE_FOLDERS = {
    "metrics": "metrics",
    "generation": "generation",
    "trainers": "trainers",
    "datasets_scripts": "datasets_scripts",
}

_included_by: dict[str, str] = {}  # repository path -> the docs page (src path) that includes it


def _repo_root(config) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def _lay_out_api_tree(root: Path) -> None:
    package = root / API_TREE / "dialeval"
    if package.exists():
        shutil.rmtree(package)  # removes the links, never what they point to
    package.mkdir(parents=True)
    for entry in (root / "dialeval").iterdir():
        # a copy: griffe resolves a linked __init__.py to its folder
        if entry.name == "__init__.py":
            shutil.copyfile(entry, package / entry.name)
        elif entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry.resolve())
    for name, folder in PACKAGE_FOLDERS.items():
        (package / name).symlink_to((root / folder).resolve())


# Laid out when mkdocs loads this hook, while it reads mkdocs.yml: mkdocstrings drops a search
# path that does not exist yet when its own on_config runs, which may come before ours (a fresh
# clone then fails with "Could not collect 'dialeval.datasets_scripts'").
_lay_out_api_tree(Path(__file__).resolve().parents[2])


def on_config(config):
    _lay_out_api_tree(_repo_root(config))
    return config


def on_files(files, config):
    """Which page includes which repository file, read before any page is rendered."""
    _included_by.clear()
    docs_dir = Path(config["docs_dir"])
    for file in files.documentation_pages():
        text = (docs_dir / file.src_path).read_text(encoding="utf-8")
        for match in INCLUDE.finditer(text):
            _included_by.setdefault(match.group("path"), file.src_uri)
    return files


def _shift_headings(text: str, shift: int) -> str:
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and shift:
            line = HEADING.sub(lambda match: "#" * min(6, len(match.group(1)) + shift), line)
        lines.append(line)
    return "\n".join(lines)


def _rewrite_links(text: str, source_dir: str, page_uri: str, root: Path) -> str:
    """Links relative to ``source_dir`` (a repository folder) made to work from ``page_uri``."""
    page_dir = posixpath.dirname(page_uri)

    def rewrite(match: re.Match) -> str:
        target = match.group("target")
        if EXTERNAL.match(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        repo_path = posixpath.normpath(posixpath.join(source_dir, path))
        if repo_path.startswith("docs/"):
            docs_target = posixpath.relpath(repo_path[len("docs/") :], page_dir or ".")
            return f"{match.group('bang')}[{match.group('text')}]({docs_target}{'#' + anchor if anchor else ''})"
        page = _included_by.get(repo_path)
        if page is not None:
            relative = posixpath.relpath(page, page_dir or ".")
            return f"[{match.group('text')}]({relative}{'#' + anchor if anchor else ''})"
        if not (root / repo_path).exists():
            raise ValueError(
                f"{source_dir or '.'}: the link {target!r} names {repo_path}, which is not in the repository"
            )
        label = match.group("text")
        shown = f"`{repo_path}`"
        return shown if label.strip("`") == repo_path else f"{label} ({shown})"

    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        lines.append(line if fenced else LINK.sub(rewrite, line))
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    root = _repo_root(config)
    page_uri = page.file.src_uri

    def include(match: re.Match) -> str:
        path = match.group("path")
        source = root / path
        if not source.is_file():
            raise ValueError(
                f"docs/{page_uri}: <!-- include: {path} --> names no file of the repository"
            )
        text = FRONT_MATTER.sub("", source.read_text(encoding="utf-8"), count=1)
        shift = int(match.group("shift") or 1)
        return _rewrite_links(_shift_headings(text, shift), posixpath.dirname(path), page_uri, root)

    own_folder = posixpath.join("docs", posixpath.dirname(page_uri))
    parts = []
    position = 0
    for match in INCLUDE.finditer(markdown):
        parts.append(_rewrite_links(markdown[position : match.start()], own_folder, page_uri, root))
        parts.append(include(match))
        position = match.end()
    parts.append(_rewrite_links(markdown[position:], own_folder, page_uri, root))
    return "\n".join(parts) if len(parts) > 1 else parts[0]
