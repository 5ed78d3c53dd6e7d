"""Batches encoded in lanes (threads) by an encoder that declares ``lanes`` > 1: the same rows in
the same order, progress per batch in order, a bounded number of batches in flight, and a failing
batch stopping the rest."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dialeval import graph_runners
from dialeval.metrics.engines.embedders import encode_sentences

DIMENSION = 3


class CountingEncoder:
    """``encode`` gives each text a row of its own (its length, its first code point, its batch
    size) and counts the calls running at once; it fails on a text equal to ``fail_on``."""

    def __init__(self, lanes: int, fail_on: str | None = None) -> None:
        self.lanes = lanes
        self.fail_on = fail_on
        self.lock = threading.Lock()
        self.running = 0
        self.most_running = 0
        self.calls = 0
        self.threads: set[str] = set()

    def encode(self, texts, **options):
        with self.lock:
            self.calls += 1
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            self.threads.add(threading.current_thread().name)
        try:
            if self.fail_on in texts:
                raise RuntimeError("this batch cannot be encoded")
            return np.array(
                [[len(text), ord(text[0]), len(texts)] for text in texts], dtype=np.float32
            )
        finally:
            with self.lock:
                self.running -= 1


TEXTS = [f"{'x' * (index % 17 + 1)} text {index}" for index in range(203)]


def test_lanes_give_the_rows_and_progress_of_one_lane():
    one = CountingEncoder(lanes=1)
    three = CountingEncoder(lanes=3)
    seen_one: list[int] = []
    seen_three: list[int] = []
    expected = encode_sentences(one, TEXTS, 8, seen_one.append)
    got = encode_sentences(three, TEXTS, 8, seen_three.append)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), DIMENSION)
    assert np.array_equal(got, expected)
    assert got[:, 0].tolist() == [len(text) for text in TEXTS]  # each row is its own text's
    assert seen_three == seen_one and sum(seen_one) == len(TEXTS)
    # one lane: the calling thread alone; three: worker threads, never more than three at once
    assert one.threads == {threading.current_thread().name} and one.most_running == 1
    assert threading.current_thread().name not in three.threads
    assert 1 <= three.most_running <= 3


def test_a_failing_batch_stops_the_others():
    # 400 texts in batches of 4, longest first (characters: this encoder has no tokenizer), so
    # "text 100" to "text 399" come first in their order: "text 112" is in the 4th batch of 100
    texts = [f"text {index}" for index in range(400)]
    encoder = CountingEncoder(lanes=2, fail_on="text 112")
    with pytest.raises(RuntimeError, match="cannot be encoded"):
        encode_sentences(encoder, texts, 4)
    # the batches queued behind the failing one were cancelled: at most twice the lanes were in
    # flight when its error was read
    assert encoder.calls <= 4 + 2 * encoder.lanes
    assert encoder.running == 0


def test_in_lanes_keeps_the_order_and_a_bounded_number_in_flight():
    lock = threading.Lock()
    started: list[int] = []
    threads: set[str] = set()

    def square(item: int) -> int:
        with lock:
            started.append(item)
            threads.add(threading.current_thread().name)
        return item * item

    results = graph_runners.in_lanes(square, range(50), 3)
    # nothing runs before the first result is asked for; then at most 2 x 3 are submitted
    assert started == []
    assert next(results) == 0
    assert len(started) <= 6
    assert list(results) == [item * item for item in range(1, 50)]
    assert sorted(started) == list(range(50))
    assert threading.current_thread().name not in threads
    assert list(graph_runners.in_lanes(square, [], 3)) == []
    assert list(graph_runners.in_lanes(square, [4, 5], 1)) == [16, 25]
    # fewer items than the lanes' minimum start no thread
    threads.clear()
    few = list(range(graph_runners.LANE_MIN_ITEMS_PER_LANE * 3 - 1))
    assert list(graph_runners.in_lanes(square, few, 3)) == [item * item for item in few]
    assert threads == {threading.current_thread().name}


def test_calls_inside_a_lane_know_it_and_do_not_start_lanes_of_their_own():
    seen: list[tuple[bool, bool]] = []

    def nested(item: int) -> int:
        inner = list(graph_runners.in_lanes(lambda value: graph_runners.in_lane(), range(40), 2))
        seen.append((graph_runners.in_lane(), all(inner)))
        return item

    assert not graph_runners.in_lane()
    assert list(graph_runners.in_lanes(nested, range(20), 2)) == list(range(20))
    # every call ran in a lane, and its own calls ran inline, on that lane
    assert seen == [(True, True)] * 20
    assert not graph_runners.in_lane()


@pytest.mark.parametrize(("cores", "lanes"), [(1, 1), (2, 2), (4, 4), (5, 1), (64, 1)])
def test_lanes_follow_the_usable_cores(monkeypatch, cores, lanes):
    monkeypatch.setattr(graph_runners, "usable_cores", lambda: cores)
    assert graph_runners.encoder_lanes() == lanes
