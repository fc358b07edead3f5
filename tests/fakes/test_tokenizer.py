"""The stand-in tokenizer: deterministic, and roughly the size real ones produce."""

from __future__ import annotations

import pytest

from fakes import count_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("a", 1),
        ("abcd", 1),
        ("abcde", 2),  # long words cost ceil(len / 4)
        ("Hello, world!", 6),  # "Hello" 2, "," 1, " world" 2 (the space is free), "!" 1
        ("tokenization 2024", 5),  # 3 + digits in groups of three: 2
        ("日本語", 3),  # one token per CJK character
        ("abc日本def", 4),  # CJK splits a run of letters
        ("a\n\n  b", 3),  # a whitespace run other than one space is a token
        ("snake_case", 4),  # "snake" 2, "_" 1, "case" 1
        ('{"path":"état.md"}', 11),
    ],
)
def test_exact_counts(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


def test_the_same_text_always_costs_the_same() -> None:
    text = "Je vérifie d'abord l'état — 日本語 ok. " * 50
    assert count_tokens(text) == count_tokens(text) == count_tokens(str(text))
    assert count_tokens(text * 2) == 2 * count_tokens(text)


def test_english_prose_is_about_four_characters_a_token() -> None:
    prose = "The quick brown fox jumps over the lazy dog while the cache stays warm. " * 20
    assert 3.0 < len(prose) / count_tokens(prose) < 5.0
