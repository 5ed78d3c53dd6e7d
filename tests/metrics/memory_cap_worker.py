"""Model-based metrics on 100k-character inputs under a memory cap, for test_memory_cap.py.

``python memory_cap_worker.py METRIC=MODEL_DIR ...``, for each metric in turn:

1. runs METRIC once on short texts with the model in MODEL_DIR, so the model, the tokenizer,
   lazy imports and the worker threads (with their stacks and malloc arenas) exist before
   anything is measured;
2. resets the kernel's peak-RSS mark (``/proc/self/clear_refs`` 5) and caps the address space
   (``RLIMIT_AS``) at its current size + 1 GiB, so an allocation that would take it further
   fails (a Python ``MemoryError``, or an abort in Rust or C++ code: both exit non-zero);
3. runs METRIC on the huge inputs (``"word " * 20000``, ``"x" * 100000``, ``"short"``);
4. prints one JSON line (flushed): the metric, the RSS before, the peak RSS during step 3
   (``VmHWM``) and the result; then lifts the cap for the next metric.

``planted=BYTES`` is the harness's own check: its step 3 allocates and touches BYTES.
``MEMORY_CAP_OFF=1`` skips the ``RLIMIT_AS`` cap (the peak-RSS measurement alone).
"""

import json
import os
import resource
import sys

HEADROOM = 1 << 30
BIG_SET = ["word " * 20000, "x" * 100000, "short"]
SMALL_SET = ["hi there", "how are you?", "short"]


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _metric(name: str, model: str):
    """``texts -> JSON-able summary`` running the metric named ``name`` with ``model``."""
    if name == "nli":
        from dialeval.metrics.nli_diversity.nli import nli_diversity

        def run(texts):
            result = nli_diversity([texts], model=model, device="cpu", batch_size=2)
            return {"nli_diversity": result["per_set"][0], "num_truncated": result["num_truncated"]}
    elif name in ("cross_encoder", "bertscore", "sent_bert"):
        from dialeval.metrics.similarity_diversity.similarity import similarity_diversity

        options = {"rescale_with_baseline": False} if name == "bertscore" else {}

        def run(texts):
            result = similarity_diversity(
                [texts], name, model=model, device="cpu", batch_size=2, **options
            )
            return {"similarity_diversity": result["similarity_diversity"]}
    elif name in ("mean_pooling", "last_token"):
        from dialeval.metrics.engines.embedders import load_embedder

        embedder = load_embedder(name, model, max_length=64, device="cpu", batch_size=2)

        def run(texts):
            vectors = embedder.embed(texts)
            return {
                "shape": list(vectors.shape),
                "finite": bool((abs(vectors) < float("inf")).all()),
            }
    elif name == "planted":
        size = int(model)

        def run(texts):
            if texts is SMALL_SET:
                return {}
            planted = bytearray(size)
            # touch every page: resident, not just reserved
            planted[::4096] = b"\1" * len(planted[::4096])
            return {"planted": len(planted)}
    else:
        raise SystemExit(f"unknown metric {name!r}")
    return run


def measure(name: str, model: str) -> dict:
    run = _metric(name, model)
    run(SMALL_SET)
    with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
        handle.write("5")
    rss_before = _status_kib("VmRSS") * 1024
    vm_before = _status_kib("VmSize") * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if os.environ.get("MEMORY_CAP_OFF") != "1":
        resource.setrlimit(resource.RLIMIT_AS, (vm_before + HEADROOM, hard))
    try:
        summary = run(BIG_SET)
        peak_rss = _status_kib("VmHWM") * 1024
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return {
        "metric": name,
        "rss_before": rss_before,
        "vm_before": vm_before,
        "peak_rss": peak_rss,
        "result": summary,
    }


def main(specs: list[str]) -> None:
    for spec in specs:
        name, _, model = spec.partition("=")
        print(json.dumps(measure(name, model)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
