"""A deterministic stand-in tokenizer: the same text always costs the same tokens.

This is NOT a real BPE (no vocabulary, no merges). It only has to be stable,
fast and roughly the size real tokenizers produce, so that cache thresholds
(1,024 tokens, 128-token steps) and prices behave as they would in production:

- a run of letters costs ``ceil(len / 4)`` tokens (English averages about four
  characters per token), so ``"cache"`` is 2 and ``"a"`` is 1;
- a run of digits costs ``ceil(len / 3)`` (BPE vocabularies hold 1-3 digit groups);
- each CJK character (Han, kana, hangul) is one token;
- each other symbol (punctuation, emoji) is one token;
- a single space before a word is free (BPE merges it into the word);
  any other run of whitespace (newlines, indentation) is one token.

Example::

    assert count_tokens("Hello, world!") == 6   # "Hello" 2, "," 1, " world" 2, "!" 1
    assert count_tokens("日本語") == 3
"""

from __future__ import annotations

import re
from functools import lru_cache

# Han (incl. extension A and compatibility), kana, hangul syllables.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# CJK characters are replaced by \x00 first, so they fall into the one-symbol class.
_PIECE = re.compile(r"(?P<word>[^\W\d_]+)|(?P<digits>\d+)|(?P<space>\s+)|(?P<symbol>[^\w\s]|_)")
_LETTERS_PER_TOKEN = 4
_DIGITS_PER_TOKEN = 3


def count_tokens(text: str) -> int:
    """The number of tokens ``text`` costs; see the module docstring for the rules.

    >>> count_tokens("")
    0
    >>> count_tokens("tokenization 2024")
    5
    """
    if not text:
        return 0
    return _count(text)


@lru_cache(maxsize=8192)
def _count(text: str) -> int:
    # Conversations resend the same messages every turn; memoising by text keeps
    # a long scripted run linear instead of quadratic in tokenizer work.
    total = 0
    for match in _PIECE.finditer(_CJK.sub("\x00", text)):
        total += _piece_cost(match)
    return total


def _piece_cost(match: re.Match[str]) -> int:
    piece = match.group()
    kind = match.lastgroup
    if kind == "word":
        return -(-len(piece) // _LETTERS_PER_TOKEN)
    if kind == "digits":
        return -(-len(piece) // _DIGITS_PER_TOKEN)
    if kind == "space":
        return 0 if piece == " " else 1
    return 1
