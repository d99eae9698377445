"""Small pieces of English the generated text is built from: articles, counts, spans, names.

Every sentence the package writes about a study names the study's own things (its waves, its
columns, its length); these helpers choose the words that go with them, so that a wave called
``intake`` gets "an intake survey" and one participant is "1 participant".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "RENAMED",
    "article",
    "count_noun",
    "instrument_title",
    "NOT_SCORED",
    "NOT_TAKEN",
    "left_out_reasons",
    "missing_reason",
    "number_word",
    "own_names",
    "span_text",
    "with_article",
]

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# letters whose spoken name starts with a vowel sound: "an F test", "an SD", "an RCI"
_VOWEL_LETTERS = set("AEFHILMNORSX")
# capitals read as a word rather than letter by letter
_SPOKEN_ACRONYMS = {"REML": "a", "NUTS": "a", "ANOVA": "an", "LOESS": "a", "ICC": "an"}
# lower-case starts whose sound is not what the letter suggests
_CONSONANT_SOUND = ("uni", "use", "usu", "uti", "ura", "ure", "eu", "ewe", "one", "once", "ubiq")
_VOWEL_SOUND = ("hour", "honest", "honor", "honour", "heir")


def article(word: str) -> str:
    """Return the indefinite article, ``"a"`` or ``"an"``, that goes before ``word``.

    The choice follows the sound: vowel letters take "an" (``an intake``) except where they
    sound like a consonant (``a unit``, ``a one-way``); a silent h takes "an" (``an hour``);
    capitals spelled letter by letter go by the letter's name (``an SD``, ``a UBC``); a
    number goes by how it is read (``an 8``, ``an 11``, ``an 80%``, ``a 1–7``).

    Parameters
    ----------
    word : str
        The word (or phrase: its first word decides) that follows the article.

    Returns
    -------
    str
        ``"a"`` or ``"an"``.

    Examples
    --------
    >>> from longitudinal._wording import article
    >>> [article(w) for w in ("intake", "exit", "pre", "unit", "hour", "SD", "UBC", "8", "18")]
    ['an', 'an', 'a', 'a', 'an', 'an', 'a', 'an', 'an']
    """
    text = word.strip().lstrip("\"'‘“(*_`")
    if not text:
        return "a"
    first = re.match(r"[\w.,%–-]+", text)
    token = first.group(0) if first else text
    if token[0].isdigit():
        digits = re.match(r"\d+", token).group(0)  # type: ignore[union-attr]
        leading = digits.lstrip("0") or "0"
        if digits.startswith("8"):
            return "an"
        # eleven, eighteen; and eleven or eighteen thousand (11,000 / 18,500)
        group = re.match(r"\d+(?:,\d{3})*", token).group(0)  # type: ignore[union-attr]
        head = group.split(",")[0] if "," in group else leading
        if head in ("11", "18") and (len(group.replace(",", "")) - len(head)) % 3 == 0:
            return "an"
        return "a"
    letters = re.match(r"[A-Za-z]+", token)
    if letters is None:
        return "a"
    name = letters.group(0)
    if name in _SPOKEN_ACRONYMS:
        return _SPOKEN_ACRONYMS[name]
    if name.isupper() and (len(name) > 1 or len(token) == 1 or not token[1:2].islower()):
        return "an" if name[0] in _VOWEL_LETTERS else "a"
    lower = name.lower()
    if lower.startswith(_VOWEL_SOUND):
        return "an"
    if lower.startswith(_CONSONANT_SOUND):
        return "a"
    return "an" if lower[0] in "aeiou" else "a"


def with_article(phrase: str) -> str:
    """Put the right indefinite article before ``phrase``: ``an intake survey``.

    Examples
    --------
    >>> from longitudinal._wording import with_article
    >>> with_article("intake survey"), with_article("post survey")
    ('an intake survey', 'a post survey')
    """
    return f"{article(phrase)} {phrase}"


def number_word(n: int) -> str:
    """Write a whole number as APA style does in text: words below 10, digits from 10.

    Examples
    --------
    >>> from longitudinal._wording import number_word
    >>> number_word(5), number_word(12)
    ('five', '12')
    """
    n = int(n)
    return _NUMBER_WORDS[n] if 0 <= n < len(_NUMBER_WORDS) else str(n)


def count_noun(n: int, singular: str, plural: str | None = None, *, words: bool = False) -> str:
    """Write a count with its noun in the right number: ``1 participant``, ``3 participants``.

    Parameters
    ----------
    n : int
        The count.
    singular : str
        The noun for one.
    plural : str, optional
        The noun for any other count (default ``singular + "s"``).
    words : bool, default False
        Write counts below 10 in words (``five weeks``).

    Examples
    --------
    >>> from longitudinal._wording import count_noun
    >>> count_noun(1, "participant"), count_noun(0, "person", "people"), count_noun(3, "day")
    ('1 participant', '0 people', '3 days')
    """
    n = int(n)
    noun = singular if n == 1 else (plural or singular + "s")
    return f"{number_word(n) if words else n} {noun}"


def instrument_title(instrument: Any) -> str:
    """Readable name of an instrument: its title up to the first comma, else its name."""
    return instrument.title.split(",")[0].strip() or instrument.name


def span_text(days: int) -> str:
    """Say how long a study lasted, in the unit that suits its length.

    Under two weeks in days (``12 days``), under about two months in weeks (``five weeks``),
    under two years in months (``three months``), else in years; rounded to the nearest
    whole unit, with counts below 10 in words.

    Parameters
    ----------
    days : int
        The length in calendar days (the first and the last day both counted).

    Examples
    --------
    >>> from longitudinal._wording import span_text
    >>> span_text(12), span_text(35), span_text(30), span_text(95), span_text(1)
    ('12 days', 'five weeks', 'four weeks', 'three months', 'one day')
    """
    days = max(int(days), 1)
    if days < 14:
        return count_noun(days, "day", words=True)
    if days < 60:
        return count_noun(round(days / 7), "week", words=True)
    if days < 730:
        return count_noun(round(days / 30.44), "month", words=True)
    return count_noun(round(days / 365.25), "year", words=True)


NOT_TAKEN = "not taken"
"""Kind of a missing score: the participant has no row in the survey of that wave."""
NOT_SCORED = "not scored"
"""Kind of a missing score: the survey was taken but too few of the scale's items answered."""


def missing_reason(
    kind: str, wave: str, answered: int | None = None, items: int | None = None
) -> str:
    """Say why one participant has no score at one wave, in the words of the report.

    Examples
    --------
    >>> from longitudinal._wording import missing_reason
    >>> missing_reason("not taken", "exit")
    'did not take the exit survey'
    >>> missing_reason("not scored", "exit", 7, 10)
    'not scored at exit (7 of 10 items answered)'
    """
    if kind == NOT_TAKEN:
        return f"did not take the {wave} survey"
    if answered is None or items is None:
        return f"not scored at {wave} (too few items answered)"
    return f"not scored at {wave} ({answered} of {items} items answered)"


def left_out_reasons(counts: Sequence[tuple[str, str, int]]) -> str:
    """Say why participants were left out of a complete-case analysis, reason by reason.

    Parameters
    ----------
    counts : sequence of (kind, wave, n)
        How many participants lack a score at a wave for each reason: ``kind`` is
        :data:`NOT_TAKEN` (no survey that wave) or :data:`NOT_SCORED` (too few items
        answered for a score). A participant missing two waves counts under each.

    Returns
    -------
    str
        The reasons joined with commas, in the order given; empty when ``counts`` is.

    Examples
    --------
    >>> from longitudinal._wording import left_out_reasons
    >>> left_out_reasons([("not taken", "exit", 3), ("not scored", "exit", 1)])
    '3 did not take the exit survey, 1 was not scored at exit (too few items answered)'
    """
    parts = []
    for kind, wave, n in counts:
        if not n:
            continue
        if kind == NOT_TAKEN:
            parts.append(f"{n} did not take the {wave} survey")
        else:
            verb = "was" if n == 1 else "were"
            parts.append(f"{n} {verb} not scored at {wave} (too few items answered)")
    return ", ".join(parts)


_QUOTED = re.compile(r"(`[^`]*`)")
RENAMED = ("session_id", "story_id", "started_at")
"""The internal column names :func:`own_names` replaces (``position`` is a plain word too)."""


def own_names(text: str, names: Mapping[str, str]) -> str:
    """Write the study's own column names where a text names the package's internal ones.

    Inside the package the session and story columns are called ``session_id`` and
    ``story_id`` whatever the study calls them; a formula or a message shown to the user
    names them as the study does (``[columns]`` of study.toml). A name in backticks (a
    column name quoted in a formula) is left as it is; a replacement that is not a plain
    name is put in backticks (:func:`models.formula.formula_name`).

    Parameters
    ----------
    text : str
        A formula or a message.
    names : mapping of str to str
        Internal name -> the study's name (:attr:`StudyConfig.column_names`); the names of
        :data:`RENAMED` whose study name differs are replaced.

    Examples
    --------
    >>> from longitudinal._wording import own_names
    >>> own_names("y ~ 1 + (1 | pid) + (1 | story_id)", {"story_id": "tale"})
    'y ~ 1 + (1 | pid) + (1 | tale)'
    >>> own_names("y ~ (1 | `story_id x`)", {"story_id": "tale"})
    'y ~ (1 | `story_id x`)'
    """
    from models.formula import formula_name

    changed = {k: v for k, v in names.items() if k in RENAMED and k != v}
    if not changed or not text:
        return text
    pattern = re.compile(r"(?<![\w`])(" + "|".join(map(re.escape, changed)) + r")(?![\w`])")
    pieces = _QUOTED.split(text)
    return "".join(
        piece
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1
        else pattern.sub(lambda m: formula_name(changed[m.group(1)]), piece)
        for piece in pieces
    )
