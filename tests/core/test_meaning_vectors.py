"""The semantic stage's vectors: the file is checked before use, a text's vector is the mean of
its tokens' rows (summed a big integer at a time, exactly), and the shipped vectors put a
paraphrase nearer its skill than an unrelated one."""

from __future__ import annotations

import json
import math
import random
from array import array

import pytest

from skillsd.core.catalog.meaning_vectors import (
    DIMENSIONS,
    MAGIC,
    MAX_CHARS,
    MAX_TOKENS,
    MeaningVectors,
    cosine,
)
from skillsd.runtime.embeddings import SemanticModel, SemanticUnavailable

VOCAB = ["[PAD]", "[UNK]", "deploy", "##ing", "site", "online", "slack", "gif", "the"]


def model_file(rows: dict[str, list[int]], *, head: dict[str, object] | None = None) -> bytes:
    """A meaning-vectors file over :data:`VOCAB` with a row for each token of ``rows``."""
    kept = [token for token in VOCAB if token in rows]
    rows_of = array("i", [kept.index(t) if t in rows else -1 for t in VOCAB])
    vocab = "\n".join(VOCAB).encode()
    header = {
        "model": "test",
        "dimensions": DIMENSIONS,
        "tokens": len(VOCAB),
        "rows": len(kept),
        "vocab_bytes": len(vocab),
        **(head or {}),
    }
    matrix = bytes(v + 128 for t in kept for v in rows[t])
    return MAGIC + json.dumps(header).encode() + b"\n" + vocab + rows_of.tobytes() + matrix


def random_rows(*tokens: str) -> dict[str, list[int]]:
    rng = random.Random(7)
    return {t: [rng.randint(-127, 127) for _ in range(DIMENSIONS)] for t in tokens}


def test_a_vector_is_the_unit_mean_of_its_tokens_rows() -> None:
    rows = random_rows("deploy", "##ing", "site", "online")
    vectors = MeaningVectors.from_bytes(model_file(rows))
    got = vectors.vector("Deploying the site, online")  # "the" and "," have no row
    total = [
        sum(rows[t][d] for t in ("deploy", "##ing", "site", "online")) for d in range(DIMENSIONS)
    ]
    norm = math.sqrt(sum(v * v for v in total))
    assert got is not None
    assert list(got) == pytest.approx([v / norm for v in total], abs=1e-7)
    assert cosine(got, got) == pytest.approx(1.0)


def test_the_sum_never_carries_between_dimensions() -> None:
    """The most a field can hold: :data:`MAX_TOKENS` tokens of the largest and of the smallest
    value, side by side."""
    high, low = [127] * DIMENSIONS, [-127] * DIMENSIONS
    high[0], low[0] = -127, 127
    vectors = MeaningVectors.from_bytes(model_file({"deploy": high, "site": low}))
    got = vectors.vector("deploy " * (MAX_TOKENS + 10))
    assert got is not None and got[0] < 0 < got[1] and len(set(got[1:])) == 1
    assert vectors.vector("site " * MAX_TOKENS) == pytest.approx([-v for v in got])


def test_only_a_texts_opening_is_read() -> None:
    """A skill's megabyte of ``when_to_use`` costs what its first :data:`MAX_CHARS` do: a word
    past them is never read, whatever comes before it."""
    vectors = MeaningVectors.from_bytes(model_file(random_rows("deploy", "site")))
    assert vectors.vector("deploy" + " " * MAX_CHARS + "site") == vectors.vector("deploy")
    assert vectors.vector("deploy" + " " * (MAX_CHARS - 20) + "site") != vectors.vector("deploy")


def test_a_text_without_a_known_token_has_no_vector() -> None:
    vectors = MeaningVectors.from_bytes(model_file(random_rows("deploy")))
    assert vectors.vector("the gif") is None
    assert vectors.vector("") is None


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda data: b"PK\x03\x04" + data, "not a skillsd meaning-vectors file"),
        (lambda data: data.replace(b'"rows": 2', b'"rows": "two"'), "header it cannot read"),
        (lambda data: data[:-1], "bytes of rows, not"),
        (lambda data: data + b"\x00" * DIMENSIONS, "bytes of rows, not"),
    ],
)
def test_a_damaged_file_is_refused_saying_why(damage: object, message: str) -> None:
    data = model_file(random_rows("deploy", "site"))
    with pytest.raises(ValueError, match=message):
        MeaningVectors.from_bytes(damage(data))  # type: ignore[operator]


def test_a_file_of_other_dimensions_or_rows_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="128 dimensions, not 256"):
        MeaningVectors.from_bytes(model_file(random_rows("deploy"), head={"dimensions": 128}))
    data = bytearray(model_file(random_rows("deploy")))
    at = data.index(b"[UNK]\ndeploy") + len("\n".join(VOCAB))  # the row numbers follow
    data[at + 4 * 2 : at + 4 * 3] = array("i", [5]).tobytes()  # "deploy" -> row 5 of 1
    with pytest.raises(ValueError, match="row number is out of range"):
        MeaningVectors.from_bytes(bytes(data))


def test_the_shipped_vectors_put_a_paraphrase_nearest_its_skill() -> None:
    """What the stage is for: a request in none of the skill's words ("publish my website")
    is nearer the deploy skill than a skill about something else."""
    model = SemanticModel()
    deploy, gifs, request, unrelated = model.vectors(
        [
            "deploy to vercel. Deploy applications and websites to Vercel.",
            "slack gif creator. Animated GIFs optimized for Slack.",
            "publish my website",
            "what's a good recipe for banana bread",
        ]
    )
    assert deploy and gifs and request and unrelated
    assert cosine(request, deploy) > cosine(request, gifs) + 0.1
    assert cosine(unrelated, deploy) < cosine(request, deploy) - 0.1


def test_a_damaged_install_turns_the_stage_off_once_saying_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Vectors that cannot be read make the stage unavailable: the reason names the file, is
    logged once, and ``doctor``'s check gives it; the ranking goes on on words alone."""
    model = SemanticModel(b"truncated")
    for _ in range(3):
        with pytest.raises(SemanticUnavailable, match=r"meaning_vectors\.bin: not a skillsd"):
            model.vectors(["deploy the site"])
    assert model.problem() == "meaning_vectors.bin: not a skillsd meaning-vectors file"
    warned = [r for r in caplog.records if "semantic stage is off" in r.getMessage()]
    assert len(warned) == 1
    assert SemanticModel().problem() is None


def test_a_skill_is_embedded_again_only_when_its_text_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Skill vectors are kept by the digest of their text: a catalog's second index embeds
    only the skill whose text changed."""
    embedded: list[str] = []
    real = MeaningVectors.vector

    def counted(self: MeaningVectors, text: str) -> array[float] | None:
        embedded.append(text)
        return real(self, text)

    monkeypatch.setattr(MeaningVectors, "vector", counted)
    model = SemanticModel(model_file(random_rows("deploy", "site", "online")))
    first = model.vectors(["deploy the site", "site online"])
    again = model.vectors(["deploy the site", "site online now"])
    assert embedded == ["deploy the site", "site online", "site online now"]
    assert again[0] is first[0]
