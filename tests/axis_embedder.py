"""A deterministic embedder for Sem-Ent cluster tests: ``"t<k>-<i>"`` lies near axis k."""

from __future__ import annotations

import numpy as np


class AxisEmbedder:
    """``"t<k>-<i>"`` lies near axis k of ``dim`` (with a small deterministic offset per text)."""

    def __init__(self, dim: int = 8):
        self.dim = dim

    def identity(self):
        return {"kind": "test", "model": "axis-embedder", "dim": self.dim}

    def embed(self, texts):
        rows = []
        for text in texts:
            topic, index = (int(part) for part in text[1:].split("-"))
            vector = np.full(self.dim, 0.01 * ((index * 7 + topic) % 5))
            vector[topic] = 1.0
            rows.append(vector)
        return np.asarray(rows, dtype=np.float32)


def axis_texts(per_topic: int, topics: int = 3) -> list[str]:
    """``per_topic`` texts on each of the first ``topics`` axes."""
    return [f"t{topic}-{i}" for topic in range(topics) for i in range(per_topic)]
