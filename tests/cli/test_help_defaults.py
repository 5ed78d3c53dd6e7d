"""Each flag's ``--help`` states its default once.

The parser appends "(default: ...)" from the field's default (``dialeval/cli/options.py``), so a
help text that says the default again ("..., 20 by default (default: 20)") says it twice. Every
command's ``--help`` is read as a user sees it and each flag's entry is checked.
"""

from __future__ import annotations

import re

import pytest

from dialeval.cli import main

DEFAULT = re.compile(r"\bdefault\b", re.IGNORECASE)
#: A flag's entry: its line ("  --flag METAVAR  help...") and the deeper-indented lines under it.
ENTRY_START = re.compile(r"^  -")


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv + ["--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def commands(capsys: pytest.CaptureFixture[str]) -> list[str]:
    top = help_text([], capsys)
    listed = re.search(r"\{([a-z,-]+)\}", top)
    assert listed, top
    return listed.group(1).split(",")


def flag_entries(text: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if ENTRY_START.match(line):
            current = line.split()[0].rstrip(",")
            entries[current] = line
        elif current and line.startswith("   "):
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def test_every_flag_states_its_default_at_most_once(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
    names = commands(capsys)
    assert {"evaluate", "meta-eval", "dtg"} <= set(names)
    twice = {}
    for name in names:
        entries = flag_entries(help_text([name], capsys))
        assert "--help" in entries or "-h" in entries, name
        for flag, entry in entries.items():
            if len(DEFAULT.findall(entry)) > 1:
                twice[f"{name} {flag}"] = entry
    assert twice == {}


def test_an_entry_that_says_default_twice_is_found():
    text = (
        "options:\n"
        "  --sem-ent-k K   number of clusters, as many as the paper by\n"
        "                  default (default: 20)\n"
        "  --seed SEED     seed (default: 0)\n"
    )
    entries = flag_entries(text)
    assert len(DEFAULT.findall(entries["--sem-ent-k"])) == 2
    assert len(DEFAULT.findall(entries["--seed"])) == 1
