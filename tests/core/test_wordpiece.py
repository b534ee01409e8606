"""The meaning vectors' tokenizer cuts text as the sentence model they come from was trained to
(the expected pieces are what Hugging Face's ``tokenizers`` gives for the same vocabulary)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

import pytest

from skillsd.core.catalog.meaning_vectors import MeaningVectors


@pytest.fixture(scope="module")
def pieces() -> Callable[..., list[str]]:
    shipped = resources.files("skillsd.core.catalog").joinpath("meaning_vectors.bin")
    tokenizer = MeaningVectors.from_bytes(shipped.read_bytes()).tokenizer

    def cut(text: str, limit: int = 1000) -> list[str]:
        return [tokenizer.vocab[i] for i in tokenizer.ids(text, limit)]

    return cut


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Deploying the Next.js site!",
            ["deploy", "##ing", "the", "next", ".", "j", "##s", "site", "!"],
        ),
        ("Café naïve résumé", ["cafe", "naive", "resume"]),
        ("日本語 text", ["日", "本", "語", "text"]),
        # NUL and a zero-width space are dropped, not separators: the word runs on.
        ("tab\there\x00nul\u200bzw", ["tab", "here", "##nu", "##lz", "##w"]),
        (
            "x^2 $HOME `code` ~/path",
            ["x", "^", "2", "$", "home", "`", "code", "`", "~", "/", "path"],
        ),
        ("a" * 101, ["[UNK]"]),
        ("unaffordablenesses", ["una", "##ff", "##ord", "##able", "##ness", "##es"]),
        ("ship it to prod ASAP", ["ship", "it", "to", "pro", "##d", "asa", "##p"]),
        # A request's text is text: "[SEP]" is never the model's separator token.
        ("a [SEP] b", ["a", "[", "sep", "]", "b"]),
    ],
)
def test_text_is_cut_as_the_model_was_trained(
    pieces: Callable[..., list[str]], text: str, expected: list[str]
) -> None:
    assert pieces(text) == expected


def test_a_text_gives_at_most_its_limit_of_tokens(pieces: Callable[..., list[str]]) -> None:
    assert pieces("deploying " * 50, limit=7) == ["deploy", "##ing"] * 3 + ["deploy"]
