"""Agreement between raters: Krippendorff's alpha, Fleiss' kappa, Gwet's AC1/AC2, percent agreement.

One function, :func:`agreement`, takes ratings in long form (one row per unit x rater) and
returns an :class:`AgreementResult`. Everything is computed from one sparse units x values
count matrix: the coincidence matrix of Krippendorff's alpha, the pair sums of Gwet's
coefficients and the bootstrap over units are products of that matrix, so a set of 10,000
ratings is summarised in a fraction of a second.

Written here from the published formulas (Krippendorff 2011; Fleiss 1971; Gwet 2014); no code
of another package is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.durations import duration_text
from _empathic_base.invisible import INVISIBLE, describe_invisible
from _empathic_base.results import Result
from _empathic_base.words import caller, parameter
from models._agreement_stats import (
    _alpha_rows,
    _bootstrap_alpha,
    _build_counts,
    _Counts,
    _fleiss,
    _gwet,
    _rescaled,
)
from models._checks import check_choice, check_seed, check_unit
from models._errors import InvalidParameterError
from models._version import __version__
from models.limits import (
    AGREEMENT_LIMIT_SECONDS,
    AGREEMENT_MAX_N_BOOT,
    check_count,
)

__all__ = ["LEVELS", "AgreementResult", "agreement"]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
"""The levels of measurement :func:`agreement` accepts."""

#: Columns of :attr:`AgreementResult.coefficients`, in order.
COEFFICIENT_COLUMNS = [
    "term",
    "level",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "n_units",
    "n_raters",
    "n_pairable",
    "note",
]
#: Columns of the problem table :func:`rating_problems` returns.
PROBLEM_COLUMNS = ["position", "column", "value", "reason"]

_WHERE = "agreement"
_GWET_WEIGHTS = {"ordinal": "ordinal", "interval": "quadratic", "ratio": "ratio"}
# seconds per cell of the work estimate (:func:`_seconds`): sparse and gathered work, and the
# dense products of the ratio level's value x value differences. Measured with
# ``benchmarks/bench_agreement.py``-sized data (5,000 to 50,000 units, 5 to 1,000 values) on
# a shared two-core machine: 1 to 7 ns per sparse cell, 0.9 ns per dense one.
_SECONDS_PER_CELL = 5e-9
_SECONDS_PER_DENSE_CELL = 1e-9


@dataclass(frozen=True, repr=False)
class AgreementResult(Result):
    """Agreement between raters, as :func:`agreement` returns it.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        One row per coefficient (see :func:`agreement`, Returns): the main table.
    coincidences : pandas.DataFrame
        Krippendorff's coincidence matrix in long form, ``value_a, value_b, count``: the pairs
        of values that raters gave to the same unit, each unit weighted by 1 / (m_u - 1)
        where m_u is the number of its pairable values. Only the cells that are not zero.
    left_out : pandas.DataFrame
        ``reason, n_rows, n_units``: the rows left out of every coefficient and why (a row
        without a value; a unit with fewer than two ratings). Empty when nothing was left out.
    meta : dict
        Package version, the call's parameters, the counts of rows used and left out, the
        bootstrap replicates where alpha is undefined.
    """

    coefficients: pd.DataFrame
    coincidences: pd.DataFrame
    left_out: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        row = self.coefficients.iloc[0]
        alpha = row["estimate"]
        shown = "undefined" if not np.isfinite(alpha) else f"{alpha:.3f}"
        return (
            f"AgreementResult({self.meta.get('level')}: Krippendorff's alpha {shown}, "
            f"{int(row['n_units'])} units, {int(row['n_raters'])} raters)"
        )

    def _parts(self) -> list[tuple[str, Any]]:
        return [
            ("Agreement", self.coefficients),
            ("Left out", self.left_out),
            ("Coincidences", self.coincidences),
        ]


# --------------------------------------------------------------------------- input checks


def _is_blank(values: pd.Series) -> np.ndarray:
    """Return True where a cell holds no value: NaN/None, or blank text."""
    blank = values.isna().to_numpy(dtype=bool, na_value=True)
    if values.dtype.kind in "biufc":
        return blank
    try:
        stripped = values.str.strip()  # NaN for cells that are not text
    except AttributeError:  # no text at all
        return blank
    return blank | (stripped == "").to_numpy(dtype=bool, na_value=False)


def _label(value: Any) -> Any:
    """Return an index label as a plain Python value (``10``, not ``np.int64(10)``)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "ndim", 1) == 0 else value


def _as_number(value: Any) -> float | None:
    """Return the value as a float when it is a number (not text or a boolean), else None."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    return None


def _invisible_cells(values: pd.Series) -> list[tuple[int, str, str]]:
    """``(position, text, description)`` of each text cell holding an invisible character."""
    if values.dtype.kind in "biufcmM":
        return []
    cells = values.to_numpy(dtype=object)
    texts = [v for v in cells if isinstance(v, str)]
    if not INVISIBLE.search("\n".join(texts)):
        return []  # one search over the column: no cell holds one
    found = []
    for pos, value in enumerate(cells):
        named = describe_invisible(value) if isinstance(value, str) else None
        if named:
            found.append((pos, value, named))
    return found


def rating_problems(
    data: pd.DataFrame,
    *,
    unit_col: str,
    rater_col: str,
    value_col: str,
    level: str,
    levels: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Return every problem of a ratings table, one row each (empty when there is none).

    Used by :func:`agreement`, which raises them together, and by the command line, which
    names the file and its lines. ``position`` is the 0-based position of the row in
    ``data``; ``column`` the column name as ``data`` has it.

    Problems: a unit or rater without an id; a unit, rater or text value holding an invisible
    character (:data:`_empathic_base.invisible.INVISIBLE`: zero-width, direction and line
    separator characters, which make ``r1`` and ``r1`` followed by U+200B two raters); a unit
    listed more than once for the same rater; a value outside ``levels``; for ``interval``
    and ``ratio`` a value that is not a number (ratio: also a negative number); for
    ``ordinal`` without ``levels`` a value that is not a number (text has no order unless
    ``levels`` gives it).
    """
    problems: list[tuple[int, str, Any, str]] = []
    units = data[unit_col]
    raters = data[rater_col]
    values = data[value_col]
    for column, series, what in ((unit_col, units, "unit"), (rater_col, raters, "rater")):
        for pos in np.flatnonzero(_is_blank(series)):
            problems.append((int(pos), column, None, f"no {what} id"))
    hidden = np.zeros(len(data), dtype=bool)  # a value named for its invisible character
    for column, series, what in (
        (unit_col, units, "unit id"),
        (rater_col, raters, "rater id"),
        (value_col, values, "value"),
    ):
        for pos, text, named in _invisible_cells(series):
            problems.append((pos, column, text, f"the {what} holds {named}; delete it"))
            if column == value_col:
                hidden[pos] = True
    ids_ok = ~(_is_blank(units) | _is_blank(raters))
    keys = pd.DataFrame({"u": units.astype(str), "r": raters.astype(str)})
    dup = keys.duplicated(keep=False).to_numpy() & ids_ok
    for pos in np.flatnonzero(dup):
        problems.append(
            (
                int(pos),
                rater_col,
                raters.iloc[pos],
                f"rater {raters.iloc[pos]!s} rated unit {units.iloc[pos]!s} more than once; "
                "each rater gives a unit one value",
            )
        )
    blank_value = _is_blank(values) | hidden
    if levels is not None:
        allowed = list(levels)
        listed = ", ".join(str(v) for v in allowed)
        inside = values.isin(allowed).to_numpy()
        for pos in np.flatnonzero(~inside & ~blank_value):
            problems.append(
                (
                    int(pos),
                    value_col,
                    values.iloc[pos],
                    f"not one of the declared levels ({listed})",
                )
            )
    elif level in ("interval", "ratio", "ordinal"):
        if values.dtype.kind in "iuf":  # numbers: only non-finite or negative ones to find
            numbers = values.to_numpy(dtype=float, na_value=np.nan)
            bad = ~blank_value & ~np.isfinite(numbers)
            if level == "ratio":
                bad |= ~blank_value & (numbers < 0)
            suspects = np.flatnonzero(bad)
        else:
            suspects = np.flatnonzero(~blank_value)
        for pos in suspects:
            value = values.iloc[pos]
            number = _as_number(value)
            if number is None or not math.isfinite(number):
                if level == "ordinal":
                    reason = (
                        "an ordinal value must be a number, or be listed in levels to give its "
                        "order"
                    )
                else:
                    article = "an" if level == "interval" else "a"
                    reason = f"{article} {level} value must be a finite number"
                    if number is None:
                        reason += "; got text"
                problems.append((int(pos), value_col, value, reason))
            elif level == "ratio" and number < 0:
                problems.append(
                    (
                        int(pos),
                        value_col,
                        value,
                        "a ratio value must be 0 or more (it has a true zero)",
                    )
                )
    table = pd.DataFrame(problems, columns=PROBLEM_COLUMNS)
    return table.sort_values("position", kind="stable").reset_index(drop=True)


def _check_arguments(
    data: Any,
    unit_col: Any,
    rater_col: Any,
    value_col: Any,
    level: Any,
    levels: Any,
) -> None:
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} must be a pandas DataFrame in long form (one row "
            f"per unit x rater); got {type(data).__name__}"
        )
    check_choice(level, LEVELS, name="level", where=_WHERE)
    names = {"unit_col": unit_col, "rater_col": rater_col, "value_col": value_col}
    for name, column in names.items():
        if not isinstance(column, str) or column not in data.columns:
            raise InvalidParameterError(
                f"the `{name}` parameter of {_WHERE} must name a column of `data` "
                f"({', '.join(map(str, data.columns))}); got {column!r}"
            )
    if len(set(names.values())) < 3:
        raise InvalidParameterError(
            f"unit_col, rater_col and value_col of {_WHERE} must be three different columns; "
            f"got {unit_col!r}, {rater_col!r}, {value_col!r}"
        )
    if levels is not None:
        if level not in ("nominal", "ordinal"):
            raise InvalidParameterError(
                f"the `levels` parameter of {_WHERE} applies to nominal and ordinal ratings "
                f"only; level is {level!r}, whose values are numbers"
            )
        listed = isinstance(levels, Sequence | np.ndarray) and not isinstance(levels, str)
        if not listed or len(levels) < 2:
            raise InvalidParameterError(
                f"the `levels` parameter of {_WHERE} must be a list of at least two values "
                f"(for ordinal ratings, in their order); got {levels!r}"
            )
        if len(set(list(levels))) != len(levels):
            raise InvalidParameterError(
                f"the `levels` parameter of {_WHERE} lists a value twice; got {list(levels)!r}"
            )


def _seconds(level: str, built: _Counts, n_boot: int) -> float:
    """Estimated seconds of alpha, Gwet's coefficient and ``n_boot`` bootstrap resamples.

    A resample draws a weight per unit, multiplies the unit x value counts (ordinal: also
    the unit x pair coincidences) and, at the ratio level, the values' differences every
    value x value; alpha and Gwet's ratio weights take one such round each.
    """
    n_units, n_cat = built.counts.shape
    cells = 3 * n_units + built.counts.nnz + n_cat
    if level == "ordinal":
        cells += built.pair_by_unit.nnz + 4 * len(built.pair_a)
    dense = float(n_cat) ** 2 if level == "ratio" else 0.0
    per_round = _SECONDS_PER_CELL * cells + _SECONDS_PER_DENSE_CELL * dense
    return per_round * (2 + n_boot)


def _check_time(level: str, built: _Counts, n_boot: int) -> None:
    """Refuse, before it starts, work estimated over :data:`AGREEMENT_LIMIT_SECONDS`."""
    seconds = _seconds(level, built, n_boot)
    if seconds <= AGREEMENT_LIMIT_SECONDS:
        return
    n_units, n_cat = built.counts.shape
    base = _seconds(level, built, 0)
    per_resample = _seconds(level, built, 1) - base
    fits = int((AGREEMENT_LIMIT_SECONDS - base) / per_resample) if per_resample > 0 else 0
    head = (
        f"{caller(_WHERE)}: {level} agreement of {n_units:,} units with {n_cat:,} distinct "
        f"values and {n_boot:,} bootstrap resamples ({parameter('n_boot', _WHERE)}) is "
        f"estimated to take about {duration_text(seconds)}, more than the "
        f"{duration_text(AGREEMENT_LIMIT_SECONDS)} this refuses before any work"
    )
    if n_boot > 0 and fits >= 10:
        rounded = fits // 10 * 10 if fits < 1000 else fits // 100 * 100
        fix = (
            f"; n_boot={rounded} (command line: --n-boot {rounded}) would take about "
            f"{duration_text(base + per_resample * rounded)}"
        )
    elif level == "ratio":
        fix = (
            "; even with few resamples it is too long: ratio alpha compares every two of the "
            "distinct values, so round the values to fewer distinct ones"
        )
    else:
        fix = "; even with few resamples it is too long: split the ratings into smaller sets"
    raise InvalidParameterError(head + fix)


# --------------------------------------------------------------------------- the function


def agreement(
    data: pd.DataFrame,
    *,
    unit_col: str,
    rater_col: str,
    value_col: str,
    level: Level = "nominal",
    levels: Sequence[Any] | None = None,
    ci_level: float = 0.95,
    n_boot: int = 2000,
    seed: int | None = None,
) -> AgreementResult:
    """Agreement between raters on the same units: alpha, kappa, AC1/AC2, percent agreement.

    Parameters
    ----------
    data : pandas.DataFrame
        Ratings in long form: one row per unit x rater. A row whose value is empty (NaN,
        None or blank text) is a unit the rater did not rate; it is counted and left out.
    unit_col, rater_col, value_col : str
        The columns holding the unit (the thing rated: a story, an utterance), the rater and
        the value given.
    level : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        Level of measurement of the values. It chooses Krippendorff's difference function,
        Gwet's weights (AC1 for nominal; AC2 with Gwet's ordinal, quadratic or ratio weights
        for ordinal, interval and ratio) and which values are accepted: interval and ratio
        values must be numbers (ratio: 0 or more), ordinal values numbers or ``levels``.
    levels : sequence, optional
        Nominal or ordinal only: the values a rating may take (for ordinal, in their order).
        A value outside them is refused. Declared levels also set Gwet's number of categories
        ``q`` and the range of its weights, as Gwet's ``categ.labels`` does; without them the
        values observed are the categories.
    ci_level : float, default 0.95
        Level of the bootstrap interval of alpha.
    n_boot : int, default 2000
        Bootstrap resamples for the interval of alpha (0: no interval), at most
        :data:`~models.limits.AGREEMENT_MAX_N_BOOT` (100,000). Work estimated at more than
        10 minutes (:data:`~models.limits.AGREEMENT_LIMIT_SECONDS`; resamples x units,
        and at the ratio level x the squared number of distinct values) is refused before it
        starts, with the ``n_boot`` that would fit.
    seed : int, optional
        Seed of the bootstrap; the same seed gives the same interval (by default a fresh
        one; ``longitudinal agreement --seed`` defaults to 0).

    Returns
    -------
    AgreementResult
        ``coefficients`` (the main table, ``to_frame()``), one row per coefficient:

        - ``term``: ``krippendorff_alpha``, ``fleiss_kappa``, ``gwet_ac1`` (nominal) or
          ``gwet_ac2`` (other levels), ``percent_agreement``;
        - ``level``: the level of measurement used by this row (Fleiss' kappa and percent
          agreement always treat values as nominal categories);
        - ``estimate``: the coefficient (NaN where it is undefined, with the reason in
          ``note``);
        - ``se``, ``ci_low``, ``ci_high``: for alpha, the standard deviation and the
          percentile interval of the bootstrap over units; NaN for the others;
        - ``n_units``, ``n_raters``, ``n_pairable``: the units, raters and values the
          coefficient rests on;
        - ``note``: what the row rests on, and what was left out.

        ``coincidences`` (Krippendorff's coincidence matrix), ``left_out`` (rows left out and
        why) and ``meta`` complete it.

    Raises
    ------
    InvalidParameterError
        For an argument of the wrong kind, and (all at once) for rows that cannot be used:
        a unit or rater without an id, a rater who rated the same unit twice, a value outside
        ``levels``, text in an interval or ratio column (or in an ordinal one without
        ``levels``), a negative ratio value, an invisible character (U+200B, U+2028,
        U+202E, ...) in an id or a text value. The message names each row by its index label.
        Also for more bootstrap resamples than the ceiling, more than
        :data:`~models.limits.AGREEMENT_MAX_PAIRS` within-unit pairs of distinct values, or
        work estimated over 10 minutes (see ``n_boot``).

    See Also
    --------
    surveys.score : Cronbach's alpha and omega of questionnaire scales.

    Notes
    -----
    Units with fewer than two ratings cannot show agreement; they are counted (``left_out``,
    and the ``note`` of every row) and left out of every coefficient, so all coefficients
    but Fleiss' kappa rest on the same units.

    *Krippendorff's alpha* (Krippendorff 2011) is
    ``1 - (n - 1) * sum o_ck d_ck / sum n_c n_k d_ck`` where ``o`` is the coincidence matrix
    (``o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1)``), ``n_c`` its margins, ``n`` the number
    of pairable values and ``d`` the squared difference of the level: nominal ``[c != k]``,
    interval ``(c - k)^2``, ratio ``((c - k) / (c + k))^2`` and ordinal
    ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``, which is the interval difference of the values'
    mid-ranks ``sum_{g<=c} n_g - n_c / 2``.

    *Its interval* resamples whole units: each resample draws as many units as were used,
    with replacement, each with all its ratings, and recomputes alpha from the resampled
    coincidences (values, margins and, for ordinal, the mid-ranks all change with the
    resample). The interval is the percentile interval of the resamples; ``se`` their standard
    deviation. This is not Hayes and Krippendorff's (2007) bootstrap, which resamples pairs of
    values within the coincidence matrix; resampling units keeps the ratings of a unit
    together, which is what a sample of units is. A resample where alpha is undefined (all
    values equal) is left out and counted in ``note``.

    *Fleiss' kappa* (Fleiss 1971) needs the same number of ratings per unit: it is computed
    on the complete units, those rated by every rater in the data, and treats values as
    nominal. ``kappa = (P - Pe) / (1 - Pe)`` with ``P`` the mean over units of
    ``(sum_j n_ij^2 - R) / (R (R - 1))`` and ``Pe = sum_j p_j^2``. With no complete unit it is
    NaN, and the note says so; with two raters it equals Scott's pi.

    *Gwet's AC1 / AC2* (Gwet 2014, ch. 2-3): ``(pa - pe) / (1 - pe)`` where
    ``pa = mean_u sum_k r_uk (r*_uk - 1) / (r_u (r_u - 1))``, ``r*_uk = sum_l w_kl r_ul``,
    ``pe = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)``, ``pi_k = mean_u r_uk / r_u`` and ``T_w``
    the sum of the weights. Weights: identity (AC1); ordinal ``1 - C(|k - l| + 1, 2) / C(q, 2)``
    on the ranks of the categories; quadratic ``1 - (x_k - x_l)^2 / (x_max - x_min)^2`` for
    interval; ratio ``1 - ((x_k - x_l) / (x_k + x_l))^2 / ((x_max - x_min) / (x_max + x_min))^2``.
    Gwet lets units with one rating into ``pi_k``; here they are left out of every coefficient
    (see above), so the two agree whenever every unit has two ratings or more.

    *Percent agreement* is the share of agreeing pairs of ratings within a unit (exact
    agreement), averaged over units: Gwet's unweighted ``pa``.

    Validated against published values (``tests/models/test_agreement.py``): Krippendorff's
    (2011) reliability data of 4 coders x 12 units (alpha nominal .743, ordinal .815,
    interval .849, ratio .797); Fleiss' (1971) 30 patients x 6 psychiatrists
    (kappa .430, 0.4302445 in ``irr::kappam.fleiss``); Gwet's 2 abstractors x 100 pregnant
    women table of ``irrCAC`` 1.0 (AC1 0.8493305, alpha 0.7972585, percent agreement 0.89,
    Scott's pi 0.7962397).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    *Psychological Bulletin*, 76(5), 378-382.

    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability* (4th ed.). Advanced Analytics.

    Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability
    measure for coding data. *Communication Methods and Measures*, 1(1), 77-89.

    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. University of
    Pennsylvania, Annenberg School for Communication.

    Examples
    --------
    >>> import pandas as pd
    >>> from models import agreement
    >>> ratings = pd.DataFrame({
    ...     "story": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
    ...     "rater": ["a", "b"] * 4,
    ...     "label": ["warm", "warm", "cold", "cold", "warm", "cold", "cold", "cold"],
    ... })
    >>> result = agreement(ratings, unit_col="story", rater_col="rater", value_col="label")
    >>> result.to_frame()[["term", "estimate"]]
                    term  estimate
    0  krippendorff_alpha  0.533333
    1        fleiss_kappa  0.466667
    2            gwet_ac1  0.529412
    3   percent_agreement  0.750000
    """
    _check_arguments(data, unit_col, rater_col, value_col, level, levels)
    ci_level = check_unit(ci_level, name="ci_level", where=_WHERE)
    n_boot = check_count(
        n_boot, name="n_boot", where=_WHERE, minimum=0, maximum=AGREEMENT_MAX_N_BOOT
    )
    seed = check_seed(seed, where=_WHERE)
    problems = rating_problems(
        data,
        unit_col=unit_col,
        rater_col=rater_col,
        value_col=value_col,
        level=level,
        levels=levels,
    )
    if len(problems):
        labels = data.index
        lines = [
            f"  row {_label(labels[int(p.position)])!r}, column {p.column!r}: {p.reason}"
            + ("" if p.value is None else f" (value {p.value!r})")
            for p in problems.head(30).itertuples(index=False)
        ]
        more = len(problems) - 30
        raise InvalidParameterError(
            f"{_WHERE}: {len(problems)} row problem(s) in the ratings:\n"
            + "\n".join(lines)
            + (f"\n  ... and {more} more" if more > 0 else "")
        )
    return _compute(data, unit_col, rater_col, value_col, level, levels, ci_level, n_boot, seed)


def _compute(
    data: pd.DataFrame,
    unit_col: str,
    rater_col: str,
    value_col: str,
    level: str,
    levels: Sequence[Any] | None,
    ci_level: float,
    n_boot: int,
    seed: int,
) -> AgreementResult:
    n_rows = len(data)
    used, left, n_single_units = _pairable_ratings(data, unit_col, rater_col, value_col)
    codes, labels, x = _categories(used[value_col], level, levels)
    u_codes, u_labels = pd.factorize(used[unit_col].astype(str), sort=False)
    built = _build_counts(u_codes, np.asarray(codes, dtype=np.intp), len(labels), u_labels)
    built = _Counts(**{**built.__dict__, "x": np.asarray(x, dtype=float), "labels": labels})
    _check_time(level, built, n_boot)

    n_units = built.counts.shape[0]
    n_raters = int(used[rater_col].astype(str).nunique())
    n_pairable = len(used)
    base = {
        "n_units": n_units,
        "n_raters": n_raters,
        "n_pairable": n_pairable,
    }
    left_note = ""
    if n_single_units:
        left_note = f"; {n_single_units} unit(s) with one rating left out"
    alpha_row, undefined = _alpha_row(level, built, ci_level, n_boot, seed)
    rows = [
        {**alpha_row, **base, "note": alpha_row["note"] + left_note},
        _fleiss_row(built, n_raters),
        *(
            {**row, **base, "note": row["note"] + left_note}
            for row in _gwet_rows(level, levels, built)
        ),
    ]
    coefficients = pd.DataFrame(rows, columns=COEFFICIENT_COLUMNS)
    coefficients = coefficients.astype(
        {"n_units": "int64", "n_raters": "int64", "n_pairable": "int64"}
    )
    meta = {
        "version": __version__,
        "function": "models.agreement",
        "parameters": {
            "unit_col": unit_col,
            "rater_col": rater_col,
            "value_col": value_col,
            "level": level,
            "levels": None if levels is None else list(levels),
            "ci_level": ci_level,
            "n_boot": n_boot,
            "seed": seed,
        },
        "level": level,
        "n_rows": n_rows,
        "n_rows_used": n_pairable,
        "n_rows_left_out": n_rows - n_pairable,
        "n_units_one_rating": n_single_units,
        "n_boot_undefined": undefined,
    }
    return AgreementResult(
        coefficients=coefficients,
        coincidences=_coincidences(built),
        left_out=left,
        meta=meta,
    )


def _pairable_ratings(
    data: pd.DataFrame, unit_col: str, rater_col: str, value_col: str
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Which ratings can be paired: the rows used, the left-out table, the units rated once."""
    blank = _is_blank(data[value_col])
    kept = data.loc[~blank, [unit_col, rater_col, value_col]]
    unit_codes, _ = pd.factorize(kept[unit_col].astype(str), sort=False)
    per_unit = np.bincount(unit_codes, minlength=unit_codes.max() + 1 if len(unit_codes) else 0)
    single = per_unit[unit_codes] < 2
    used = kept.loc[~single]
    left_out = []
    if blank.any():
        left_out.append(("no value (the rater did not rate the unit)", int(blank.sum()), pd.NA))
    if single.any():
        left_out.append(
            ("the unit has fewer than two ratings", int(single.sum()), int((per_unit == 1).sum()))
        )
    left = pd.DataFrame(left_out, columns=["reason", "n_rows", "n_units"]).astype(
        {"n_rows": "int64", "n_units": "Int64"}
    )
    return used, left, int((per_unit == 1).sum())


def _categories(
    raw: pd.Series, level: str, levels: Sequence[Any] | None
) -> tuple[np.ndarray, list[Any], np.ndarray]:
    """Return the category of each rating, the categories and their numeric values.

    The declared levels, else the values used (numbers in order; nominal labels sorted when
    they are comparable, for a stable coincidence table).
    """
    if levels is not None:
        labels = list(levels)
        return pd.Index(labels).get_indexer(raw), labels, np.arange(len(labels), dtype=float)
    if level == "nominal":
        codes, uniques = pd.factorize(raw, sort=False)
        labels = list(uniques)
        try:
            order = np.argsort(np.asarray(labels, dtype=object), kind="stable")
            rank = np.empty(len(order), dtype=np.intp)
            rank[order] = np.arange(len(order))
            codes = rank[codes]
            labels = [labels[i] for i in order]
        except TypeError:
            pass
        return codes, labels, np.arange(len(labels), dtype=float)
    numbers = raw.astype(float).to_numpy()
    x, codes = np.unique(numbers, return_inverse=True)
    labels = list(x)
    if level in ("interval", "ratio"):
        x = _rescaled(x, level)
    return codes, labels, x


def _alpha_row(
    level: str, built: _Counts, ci_level: float, n_boot: int, seed: int
) -> tuple[dict[str, Any], int]:
    """Krippendorff's alpha with its bootstrap interval, and the resamples left undefined."""
    n_units = built.counts.shape[0]
    if n_units:
        coincide = np.asarray(built.pair_by_unit.sum(axis=0)).reshape(1, -1)
        n_cat = np.asarray(built.counts.sum(axis=0)).reshape(1, -1)
        alpha = float(_alpha_rows(level, coincide, n_cat, built)[0])
    else:
        alpha = float("nan")
    se = low = high = float("nan")
    undefined = 0
    if not np.isfinite(alpha):
        note = (
            "undefined: no unit has two ratings"
            if not n_units
            else "undefined: every rating has the same value (no variation to agree on)"
        )
    elif n_boot == 0:
        note = "no bootstrap interval (n_boot = 0)"
    else:
        boots = _bootstrap_alpha(level, built, n_boot, seed)
        finite = boots[np.isfinite(boots)]
        undefined = int(n_boot - len(finite))
        if len(finite) >= 2:
            se = float(np.std(finite, ddof=1))
            tail = (1.0 - ci_level) / 2.0
            low, high = (float(v) for v in np.quantile(finite, [tail, 1.0 - tail]))
        note = (
            f"{ci_level:.0%} percentile interval of {n_boot} bootstrap resamples of the "
            f"{n_units} units (seed {seed})"
        )
        if undefined:
            note += f"; {undefined} resample(s) with no variation left out"
        if n_units < 10:
            note += f"; only {n_units} units: the interval is rough"
    row = {
        "term": "krippendorff_alpha",
        "level": level,
        "estimate": alpha,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "note": note,
    }
    return row, undefined


def _fleiss_row(built: _Counts, all_raters: int) -> dict[str, Any]:
    """Fleiss' kappa on the units rated by every rater."""
    n_units = built.counts.shape[0]
    m = np.asarray(built.counts.sum(axis=1)).ravel() if n_units else np.zeros(0)
    complete = np.flatnonzero(m == all_raters) if all_raters >= 2 else np.zeros(0, dtype=int)
    if len(complete):
        kappa = _fleiss(built.counts[complete], all_raters)
        note = (
            f"the {len(complete)} unit(s) rated by all {all_raters} raters; values as nominal "
            "categories"
        )
        if not np.isfinite(kappa):
            note = "undefined: every rating of the complete units has the same value"
    elif not n_units:
        kappa = float("nan")
        note = "undefined: no unit has two ratings"
    else:
        kappa = float("nan")
        note = (
            f"undefined: no unit was rated by all {all_raters} raters (Fleiss' kappa needs the "
            "same raters' count on every unit)"
        )
    return {
        "term": "fleiss_kappa",
        "level": "nominal",
        "estimate": kappa,
        "se": np.nan,
        "ci_low": np.nan,
        "ci_high": np.nan,
        "n_units": len(complete),
        "n_raters": all_raters if len(complete) else 0,
        "n_pairable": len(complete) * all_raters,
        "note": note,
    }


def _gwet_rows(level: str, levels: Sequence[Any] | None, built: _Counts) -> list[dict[str, Any]]:
    """Gwet's AC1 (nominal) or AC2 (weighted), and the percent agreement."""
    labels = built.labels
    n_units = built.counts.shape[0]
    kind = "identity" if level == "nominal" else _GWET_WEIGHTS[level]
    if n_units:
        x_weights = built.x if kind != "ordinal" else np.arange(len(labels), dtype=float)
        ac, _ = _gwet(kind, built, x_weights)
        _, percent = _gwet("identity", built, np.arange(len(labels), dtype=float))
    else:
        ac = percent = float("nan")
    q = len(labels)
    source = "declared levels" if levels is not None else "values observed"
    if level == "nominal":
        gwet_note = f"q = {q} categories ({source})"
    else:
        gwet_note = f"{_GWET_WEIGHTS[level]} weights; q = {q} categories ({source})"
    if not n_units:
        gwet_note = "undefined: no unit has two ratings"
    elif q < 2:
        gwet_note = "undefined: one category only"
    no_interval = {"se": np.nan, "ci_low": np.nan, "ci_high": np.nan}
    return [
        {
            "term": "gwet_ac1" if level == "nominal" else "gwet_ac2",
            "level": level,
            "estimate": ac,
            **no_interval,
            "note": gwet_note,
        },
        {
            "term": "percent_agreement",
            "level": "nominal",
            "estimate": percent,
            **no_interval,
            "note": (
                "share of agreeing pairs of ratings within a unit, averaged over units"
                if n_units
                else "undefined: no unit has two ratings"
            ),
        },
    ]


def _coincidences(built: _Counts) -> pd.DataFrame:
    """Return the coincidence table: each pair of values seen within a unit, and its count."""
    labels = built.labels
    n_units = built.counts.shape[0]
    totals = np.asarray(built.pair_by_unit.sum(axis=0)).ravel() if n_units else np.zeros(0)
    order = np.lexsort((built.pair_b, built.pair_a))
    keep = order[totals[order] != 0]
    return pd.DataFrame(
        {
            "value_a": [labels[i] for i in built.pair_a[keep]],
            "value_b": [labels[i] for i in built.pair_b[keep]],
            "count": totals[keep],
        }
    )
