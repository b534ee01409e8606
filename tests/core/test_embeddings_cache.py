"""Caches are data, checked: the semantic stage's embeddings cache is read without pickle, its zip
directory and ``.npy`` headers checked before a byte is inflated, and anything else is thrown
away with one warning and rebuilt (a damaged cache printed a traceback; a small ``.npz`` inflated
to whatever its header claimed)."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillsd.runtime.embeddings import BadCache, SemanticModel, _digest, read_cache
from tests.hang_guard import within
from tests.support.env import daemon_env
from tests.support.skill_tree import make_project

DIM = 256


class Stub:
    """A model of ``DIM`` dimensions that embeds every text alike."""

    def embed(self, texts: list[str], norm: bool = True) -> Any:
        return np.full((len(texts), DIM), 1 / 16, dtype="<f4")


def model(cache: Path) -> SemanticModel:
    semantic = SemanticModel(str(cache))
    semantic._model = Stub()
    return semantic


def npy(array: Any) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=True)
    return out.getvalue()


def save(path: Path, keys: Any, vectors: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("keys.npy", npy(keys))
        archive.writestr("vectors.npy", npy(vectors))
    return path


def keys(*texts: str) -> Any:
    return np.array([_digest(t) for t in texts], dtype="<U64")


def test_a_cache_it_wrote_is_read_back(tmp_path: Path) -> None:
    first = model(tmp_path)
    first.vectors(["a", "b"])
    again = read_cache(str(tmp_path / "embeddings.npz"), DIM)
    assert sorted(again) == sorted(keys("a", "b").tolist())
    assert all(v.shape == (DIM,) and v.dtype == np.float32 for v in again.values())


def damaged(tmp_path: Path, kind: str) -> Path:
    """A cache file damaged in one way."""
    path = tmp_path / "embeddings.npz"
    good = keys("a", "z")
    vectors = np.ones((2, DIM), dtype="<f4") / 16
    if kind == "wrong-dimension":  # another model's cache, or a damaged one
        return save(path, good, np.ones((2, 128), dtype="<f4"))
    if kind == "pickled-keys":
        return save(path, np.array(good.tolist(), dtype=object), vectors)
    if kind == "not-finite":
        return save(path, good, np.full((2, DIM), np.nan, dtype="<f4"))
    if kind == "float64":
        return save(path, good, vectors.astype("<f8"))
    if kind == "fewer-keys":
        return save(path, good[:1], vectors)
    if kind == "header-claims-more":  # the header's shape, not the bytes, would size the array
        claimed = npy(vectors).replace(b"(2, 256)", b"(9999999, 256)", 1)
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("keys.npy", npy(good))
            archive.writestr("vectors.npy", claimed)
        return path
    if kind == "extra-member":
        save(path, good, vectors)
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr("more.npy", npy(good))
        return path
    if kind == "truncated":
        save(path, good, vectors)
        path.write_bytes(path.read_bytes()[:900])
        return path
    if kind == "not-a-zip":
        path.write_bytes(b"\x80\x04K\x01.")  # a pickle
        return path
    raise AssertionError(kind)


KINDS = [
    "wrong-dimension",
    "pickled-keys",
    "not-finite",
    "float64",
    "fewer-keys",
    "header-claims-more",
    "extra-member",
    "truncated",
    "not-a-zip",
]


@pytest.mark.parametrize("kind", KINDS)
def test_the_loader_refuses_a_damaged_cache(tmp_path: Path, kind: str) -> None:
    with pytest.raises(BadCache):
        read_cache(str(damaged(tmp_path, kind)), DIM)


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_cache_is_discarded_with_one_warning_and_rebuilt(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = damaged(tmp_path, kind)
    semantic = model(tmp_path)
    with caplog.at_level(logging.WARNING, logger="skillsd.runtime.embeddings"):
        matrix = semantic.vectors(["a", "b"])
    assert matrix.shape == (2, DIM) and np.isfinite(matrix).all()
    [warning] = caplog.records
    assert "discarding the embedding cache" in warning.getMessage()
    assert sorted(read_cache(str(path), DIM)) == sorted(keys("a", "b").tolist())


def test_a_fifo_in_place_of_the_cache_is_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "embeddings.npz")
    matrix: Any = within(10, lambda: model(tmp_path).vectors(["a"]))
    assert matrix.shape == (1, DIM)


# -- a small file that inflates to gigabytes ---------------------------------------------------

#: Rows of zeros behind the bomb's header: 300 MiB once inflated, about 300 KiB in the file.
BOMB_ROWS = 300 * 1024


def bomb(path: Path) -> Path:
    """A cache whose vectors are ``BOMB_ROWS`` rows of zeros, deflated."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("keys.npy", npy(keys("a")))
        with archive.open("vectors.npy", "w", force_zip64=True) as out:
            header = {"descr": "<f4", "fortran_order": False, "shape": (BOMB_ROWS, DIM)}
            np.lib.format.write_array_header_1_0(out, header)
            chunk = bytes(DIM * 4 * 1024)
            for _ in range(BOMB_ROWS // 1024):
                out.write(chunk)
    return path


PEAK = """
import json, sys
import numpy as np
from skillsd.runtime.embeddings import SemanticModel

def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

class Stub:
    def embed(self, texts, norm=True):
        return np.full((len(texts), 256), 1 / 16, dtype="<f4")

semantic = SemanticModel(sys.argv[1])
semantic._model = Stub()
before = peak()
shape = semantic.vectors(["a"]).shape
print(json.dumps({"before": before, "after": peak(), "shape": list(shape)}))
"""


@pytest.mark.process
def test_a_compression_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    path = bomb(tmp_path / "cache" / "embeddings.npz")
    assert path.stat().st_size < 2 * 1024 * 1024
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(path.parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    assert measured["shape"] == [1, DIM]
    grew = measured["after"] - measured["before"]
    assert grew < 32 * 1024 * 1024, f"peak memory grew by {grew / 2**20:.0f} MiB"
    assert "discarding the embedding cache" in done.stderr
    assert "once inflated" in done.stderr


# -- as a user runs it -----------------------------------------------------------------------


@pytest.mark.process
def test_suggest_with_a_damaged_cache_warns_once_and_goes_on(tmp_path: Path) -> None:
    """With the extra ``skillsd[semantic]``: a cache of another dimension made ``skillsd
    suggest`` print a traceback; now one warning, the suggestions, and a rebuilt cache."""
    pytest.importorskip("wordllama")
    tree = make_project(tmp_path)
    cache = tmp_path / "cache"
    save(cache / "skillsd" / "embeddings.npz", keys("a"), np.ones((1, 128), dtype="<f4"))
    env = daemon_env(tree, XDG_CACHE_HOME=str(cache))

    def suggest() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillsd", "suggest", "draft the release notes"],
            cwd=tree["project"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    first = suggest()
    assert first.returncode == 0 and "release-notes" in first.stdout
    assert "Traceback" not in first.stderr
    assert first.stderr.count("discarding the embedding cache") == 1
    second = suggest()
    assert second.returncode == 0 and "embedding cache" not in second.stderr
