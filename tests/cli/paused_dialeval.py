"""``dialeval`` that stops at a chosen point and waits for a signal: the signal tests' subject.

    python paused_dialeval.py [--pause-after-batches N | --pause-after-checkpoints N] --ready FILE [--log FILE]
        -- <dialeval arguments>

After the N-th batch ``dialeval dtg`` appended (or the N-th metric ``dialeval evaluate``
checkpointed), the process writes ``{"pid": ...}`` to FILE and waits in ``signal.pause()`` until a
signal ends it, so a test sends its signal at a known point instead of after a guessed delay.
``--log`` appends one JSON line per event: ``{"ran": STEP}`` for each metric the run computed (a
checkpointed step is computed before it is kept) and ``{"called": "set_lexical_diversity"}`` for
each call of the lexical metric, so a test can tell what a resumed run recomputed.
"""

import argparse
import json
import os
import signal
import sys
from pathlib import Path


def _log(path: str | None, event: dict) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(event) + "\n")


def _pause(ready: Path) -> None:
    building = ready.with_name(ready.name + ".tmp")
    building.write_text(json.dumps({"pid": os.getpid()}), encoding="utf-8")
    building.rename(ready)  # the test never reads half a file
    while True:
        signal.pause()


def _pause_after(cls, method: str, count: int, ready: Path, log: str | None = None) -> None:
    original = getattr(cls, method)
    calls = []

    def paused(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if log and method == "put":
            _log(log, {"ran": args[0]})
        calls.append(1)
        if len(calls) == count:
            _pause(ready)

    setattr(cls, method, paused)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pause-after-batches", type=int)
    parser.add_argument("--pause-after-checkpoints", type=int)
    parser.add_argument("--ready")
    parser.add_argument("--log")
    own, dialeval_arguments = (
        sys.argv[1 : sys.argv.index("--")],
        sys.argv[sys.argv.index("--") + 1 :],
    )
    options = parser.parse_args(own)

    from dialeval.cli import checkpoints, dtg_writer
    from dialeval.cli.main import main as dialeval

    # the lexical step reads its function from here when it runs
    from dialeval.metrics.lexical_diversity import by_scope as lexical_module

    if options.pause_after_batches:
        _pause_after(
            dtg_writer.ResumableJsonl, "append", options.pause_after_batches, Path(options.ready)
        )
    # every put is logged; the pause, if asked for, comes after the N-th
    _pause_after(
        checkpoints.MetricCheckpoints,
        "put",
        options.pause_after_checkpoints or -1,
        Path(options.ready or "."),
        options.log,
    )
    lexical = lexical_module.set_lexical_diversity

    def counted_lexical(*args, **kwargs):
        _log(options.log, {"called": "set_lexical_diversity"})
        return lexical(*args, **kwargs)

    lexical_module.set_lexical_diversity = counted_lexical
    return dialeval(dialeval_arguments)


if __name__ == "__main__":
    sys.exit(main())
