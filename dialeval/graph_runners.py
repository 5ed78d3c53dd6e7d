"""What runs an exported graph, without torch: the export's settings and place in the cache, and
the ONNX Runtime and OpenVINO sessions that run it on numpy arrays.

:mod:`dialeval.exported_models` (which imports torch) exports graphs and wraps these runners
behind the transformers interface; :mod:`dialeval.sentence_graph` runs a sentence encoder's
graph straight from here, so that a job encoding with an export never imports torch.
"""

from __future__ import annotations

import importlib.metadata
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from dialeval.distributed import usable_cores
from dialeval.runtimes import export_folder, export_key
from dialeval.validation import check_int

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from openvino import Core as OpenVinoCore

#: The backends that run an exported graph (on the CPU).
EXPORTED_BACKENDS = ("onnx", "openvino")
#: ONNX opset of the export (ONNX Runtime and OpenVINO both run it; LayerNorm is one op from 17).
OPSET = 17
MODEL_FILE = "model.onnx"
#: What an export depends on besides the weights (part of its cache key).
EXPORTER = "torch.onnx.export(dynamo=False)"
#: OpenVINO's inference precision per dtype: float32 unless a reduced precision is asked for.
OPENVINO_PRECISION = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}
#: Most cores on which a sentence encoder's graph runs as single-thread lanes (see
#: :func:`encoder_lanes`); above, one session with ONNX Runtime's own intra-op threads.
MAX_LANES = 4


def encoder_lanes() -> int:
    """How many batches a sentence encoder's ONNX Runtime session runs at once, one thread each:
    the usable cores, from 2 up to :data:`MAX_LANES`, else 1 (one session with ONNX Runtime's
    intra-op threads). On the 2-core machine two single-thread lanes encoded 9,491 DailyDialog++
    texts (MiniLM, batches of 64) in 23.5-25.9 s against one 2-thread session's 28.6-31.1 s,
    bit-identical (docs/performance.md): short sequences make each operator small, and the
    threads of one session wait for each other after every operator."""
    cores = usable_cores()
    return cores if 2 <= cores <= MAX_LANES else 1


def export_settings(kind: str, layers: int | None = None) -> dict[str, object]:
    """What an export of ``kind`` depends on besides the weights (part of its cache key); the
    torch version is read from the installed distribution (``torch.__version__`` is the same
    string), so that finding an export imports no torch. ``layers``: an encoder exported with its
    layer stack cut after that many layers (:mod:`dialeval.layer_stacks`); None: whole."""
    settings: dict[str, object] = {
        "kind": kind,
        "opset": OPSET,
        "exporter": EXPORTER,
        "torch": importlib.metadata.version("torch"),
    }
    if layers is not None:
        settings["layers"] = layers
    return settings


def cached_export(model_path: str, kind: str, layers: int | None = None) -> tuple[str, Path | None]:
    """The cache key of ``model_path``'s export as ``kind`` (cut after ``layers`` layers when
    given), and its ONNX file when it is in the cache (None: it is to be exported)."""
    key = export_key(model_path, export_settings(kind, layers))
    path = export_folder(key) / MODEL_FILE
    return key, (path if path.is_file() else None)


#: Fewest items (batches) a lane for :func:`in_lanes` to run them in lanes. Two single-thread
#: lanes against one 2-thread session (benchmarks/RESULTS.md, bench_encoder_lanes): 0.75-0.79x
#: its speed on 300 DailyDialog++ strings (5 batches of 64, 10 of 32), 1.06-1.11x on 3,000 (47,
#: 94 batches); in the 10,000-response job (149 batches) 10-11% less time (bench_job).
LANE_MIN_ITEMS_PER_LANE = 8

_LANE = threading.local()
_THREADED_SESSION_LOCK = threading.Lock()


def in_lane() -> bool:
    """Whether the calling thread is running one of :func:`in_lanes`' calls."""
    return bool(getattr(_LANE, "active", False))


Item = TypeVar("Item")
Result = TypeVar("Result")


def in_lanes(
    function: Callable[[Item], Result], items: Sequence[Item], lanes: int
) -> Iterator[Result]:
    """``map(function, items)``, results in order. With ``lanes`` > 1 and at least
    :data:`LANE_MIN_ITEMS_PER_LANE` items a lane, that many calls run at once in threads (where
    :func:`in_lane` is true) and at most twice that many are in flight, so that memory stays
    bounded and a stop (an exception, a Ctrl-C) waits for the running calls only; otherwise, and
    inside a lane, the calls run one after another on the calling thread."""
    if lanes <= 1 or len(items) < LANE_MIN_ITEMS_PER_LANE * lanes or in_lane():
        yield from map(function, items)
        return

    def in_a_lane(item: Item) -> Result:
        _LANE.active = True
        try:
            return function(item)
        finally:
            _LANE.active = False

    pool = ThreadPoolExecutor(lanes, thread_name_prefix="dialeval-lane")
    pending: deque[Future[Result]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(in_a_lane, item))
            if len(pending) >= 2 * lanes:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class OnnxRuntimeRunner:
    """An ONNX Runtime CPU session: ``runner(feeds, outputs)`` returns the named outputs, each call
    on ONNX Runtime's intra-op threads.

    ``lanes`` > 1 adds a session computing each call on the calling thread alone, which the calls
    made in :func:`in_lanes`' threads use, ``lanes`` at once (ONNX Runtime's ``run`` is
    thread-safe); the threaded session is then built at the first call made outside a lane (a
    small input), so that a job that only encodes in lanes holds the weights once."""

    precision = "float32"

    def __init__(self, path: Path, lanes: int = 1) -> None:
        self.path = path
        self.lanes = check_int(lanes, "lanes")
        self._threaded: InferenceSession | None = None
        self.lane_session = self._session(1) if self.lanes > 1 else None
        first = self.lane_session if self.lane_session is not None else self.session
        self.outputs = [output.name for output in first.get_outputs()]

    def _session(self, threads: int) -> InferenceSession:
        # onnxruntime: deferred, so that only the backend asked for is imported
        import onnxruntime

        # the default session options apply every graph optimization (ORT_ENABLE_ALL)
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        return onnxruntime.InferenceSession(
            str(self.path), options, providers=["CPUExecutionProvider"]
        )

    @property
    def session(self) -> InferenceSession:
        """The session on ONNX Runtime's intra-op threads (one per core, its default)."""
        with _THREADED_SESSION_LOCK:
            if self._threaded is None:
                self._threaded = self._session(0)
        return self._threaded

    def __call__(self, feeds: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]:
        if self.lane_session is not None and in_lane():
            return list(self.lane_session.run(outputs, feeds))
        return list(self.session.run(outputs, feeds))


_OPENVINO_CORE: list[OpenVinoCore] = []
_OPENVINO_CORE_LOCK = threading.Lock()


def openvino_core() -> OpenVinoCore:
    """The process's one OpenVINO ``Core``, kept until the process ends.

    One for the process, not one per model: OpenVINO's CPU plugin gives the thread that creates
    it a new alternate signal stack and, when it is destroyed, puts back the one it found and
    unmaps its own. Two plugins destroyed in the order they were made (two models let go, say)
    leave the thread on the first plugin's unmapped stack, and the next signal handled there
    (Ctrl-C: Python runs every handler on that stack) kills the process with SIGSEGV."""
    with _OPENVINO_CORE_LOCK:
        if not _OPENVINO_CORE:
            # openvino: deferred, so that only the backend asked for is imported
            import openvino

            _OPENVINO_CORE.append(openvino.Core())
        return _OPENVINO_CORE[0]


class OpenVinoRunner:
    """An OpenVINO CPU compiled model computing in ``precision`` (float32 unless a reduced
    precision is asked for); ``precision`` afterwards is the one OpenVINO settled on. It runs
    one call at a time (``lanes`` 1): its throughput mode was no faster (docs/runtimes.md)."""

    lanes = 1

    def __init__(self, path: Path, precision: str) -> None:
        self.core = openvino_core()
        self.compiled = self.core.compile_model(
            self.core.read_model(str(path)),
            "CPU",
            {"INFERENCE_PRECISION_HINT": OPENVINO_PRECISION[precision]},
        )
        self.outputs = [output.any_name for output in self.compiled.outputs]
        # A CPU without bf16 / f16 arithmetic computes in f32 whatever the hint: the precision
        # reported is the one OpenVINO settled on.
        settled = self.compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        self.precision = {hint: name for name, hint in OPENVINO_PRECISION.items()}.get(
            settled, settled
        )

    def __call__(self, feeds: dict[str, np.ndarray], outputs: list[str]) -> list[np.ndarray]:
        # the results are copies (share_outputs is off), so the next call cannot overwrite them
        results = self.compiled(feeds)
        return [np.asarray(results[name]) for name in outputs]


def graph_runner(
    path: Path, backend: str, precision: str, lanes: int = 1
) -> OnnxRuntimeRunner | OpenVinoRunner:
    """The runner of the graph at ``path`` on ``backend`` (``onnx`` or ``openvino``); ``lanes``
    is ONNX Runtime's (OpenVINO runs one call at a time)."""
    if backend == "onnx":
        return OnnxRuntimeRunner(path, lanes)
    return OpenVinoRunner(path, precision)
