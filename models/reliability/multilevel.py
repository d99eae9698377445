"""Multilevel reliability of a scale answered at several occasions (psych's ``mlr``).

:func:`multilevel_reliability` takes the item answers of one scale, already keyed, from every
person at every occasion (a wave, a diary day) and splits their variance into components in two
designs: crossed (person, occasion, item and their two-way interactions, residual) and nested
(person, occasion within person, residual). From them come the generalizability coefficients of
Shrout and Lane (2012) and Cranford et al. (2006) that ``psych::mlr`` reports: the reliability of
a person's average over fixed occasions (RkF), of one random occasion (R1R), of the average of
random occasions (RkR), of change within a person (Rc), and the nested counterparts (RkRn, Rcn).

Balanced, complete data get psych's ANOVA (expected mean squares) components, negative values
included; anything else gets REML components from :class:`models.lmm.LinearMixedModel`, as
psych's ``lmer = TRUE`` gets them from ``lme4::lmer``. Reverse keying is the caller's job (the
scale's declared range lives in ``surveys``; ``longitudinal.scale_multilevel_reliability`` joins
the two).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from models._errors import (
    ConvergenceWarning,
    DataQualityWarning,
    InvalidParameterError,
    SingularFitWarning,
)
from models._version import __version__
from models.reliability._balanced import (
    crossed_anova_components,
    crossed_start,
    nested_reml_components,
)

__all__ = [
    "COEFFICIENTS",
    "COEFFICIENT_COLUMNS",
    "COMPONENT_COLUMNS",
    "CROSSED_COMPONENTS",
    "NESTED_COMPONENTS",
    "MultilevelReliability",
    "multilevel_reliability",
]

COEFFICIENTS = ("RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn")
"""The six coefficients, in psych's order."""

COEFFICIENT_COLUMNS = ["n_persons", "n_occasions", "n_items", "method", *COEFFICIENTS]
"""Columns of :attr:`MultilevelReliability.coefficients`."""

COMPONENT_COLUMNS = ["design", "component", "variance", "percent", "negative"]
"""Columns of :attr:`MultilevelReliability.components`."""

CROSSED_COMPONENTS = (
    "person",
    "occasion",
    "item",
    "person_x_occasion",
    "person_x_item",
    "occasion_x_item",
    "residual",
)
"""Components of the crossed design, in psych's order."""

NESTED_COMPONENTS = ("person", "occasion_in_person", "residual")
"""Components of the nested design (occasions within persons; items are replicates)."""

SMALL_SAMPLE = 20
"""Fewer persons than this get a note: the person components rest on few people."""

_WHERE = "models.multilevel_reliability"
_CROSSED_FORMULA = (
    "value ~ 1 + (1 | person) + (1 | occasion) + (1 | item) + (1 | person:occasion) "
    "+ (1 | person:item) + (1 | occasion:item)"
)
_NESTED_FORMULA = "value ~ 1 + (1 | person/occasion)"
_CROSSED_GROUPS = {
    "person": "person",
    "occasion": "occasion",
    "item": "item",
    "person:occasion": "person_x_occasion",
    "person:item": "person_x_item",
    "occasion:item": "occasion_x_item",
    "Residual": "residual",
}
_NESTED_GROUPS = {
    "person": "person",
    "person:occasion": "occasion_in_person",
    "Residual": "residual",
}


@dataclass(frozen=True, repr=False)
class MultilevelReliability(Result):
    """Variance components and generalizability coefficients of one scale over occasions.

    Attributes
    ----------
    coefficients : pandas.DataFrame
        One row: ``n_persons``, ``n_occasions``, ``n_items`` (those with at least one answer),
        ``method`` (``"anova"``: crossed components from expected mean squares of balanced,
        complete data; ``"reml"``: crossed components by REML), and ``RkF``, ``R1R``, ``RkR``,
        ``Rc``, ``RkRn``, ``Rcn``. The nested coefficients ``RkRn`` and ``Rcn`` always come from
        REML components, as psych's come from ``nlme::lme`` (balanced answers: the closed-form
        REML solution unless a component lies on the boundary).
    components : pandas.DataFrame
        One row per component: ``design`` (``"crossed"`` or ``"nested"``), ``component`` (see
        :data:`CROSSED_COMPONENTS`, :data:`NESTED_COMPONENTS`), ``variance``, ``percent``
        (share of the design's total, as psych's ``Percent``) and ``negative`` (True for a
        negative ANOVA estimate, kept as it is).
    notes : tuple of str
        What the reader must know: negative or zero components, a fit that did not converge,
        few persons, answers or people left out (the summary shows them after the methods).
    meta : dict
        Provenance: package version, the call's options, answers used and missing, whether the
        data were balanced, and ``methods``: how each design's components were estimated.
    """

    coefficients: pd.DataFrame
    components: pd.DataFrame
    notes: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> float:
        """Return one coefficient by name (``result["RkF"]``)."""
        if name not in COEFFICIENTS:
            raise KeyError(f"{name!r} is not a coefficient; choose one of {list(COEFFICIENTS)}")
        return float(self.coefficients[name].iloc[0])

    def _title(self) -> str:
        row = self.coefficients.iloc[0]
        method = "ANOVA" if row["method"] == "anova" else "REML"
        return (
            f"MultilevelReliability({int(row['n_persons'])} persons x "
            f"{int(row['n_occasions'])} occasions x {int(row['n_items'])} items, {method}: "
            f"RkF {row['RkF']:.3f}, RkR {row['RkR']:.3f}, Rc {row['Rc']:.3f})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("coefficients", self.coefficients), ("variance components", self.components)]

    def _text(self, decimals: int) -> str | None:
        blocks = [self._title()]
        for caption, table in self._parts():
            shown = table.round(decimals)
            blocks.append(f"{caption}\n{shown.to_string(index=False)}")
        methods = self.meta.get("methods", [])
        if methods or self.notes:
            lines = [*methods, *self.notes]
            blocks.append("notes\n" + "\n".join(f"- {n}" for n in lines))
        return "\n\n".join(blocks)


def multilevel_reliability(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    items: Sequence[str] | None = None,
    format: Literal["wide", "long"] = "wide",
    item_col: str = "item",
    value_col: str = "value",
    method: Literal["auto", "anova", "reml"] = "auto",
) -> MultilevelReliability:
    r"""Variance components and generalizability coefficients of a scale over occasions.

    Parameters
    ----------
    data : pandas.DataFrame
        Keyed item answers of one scale (reverse-keyed items already reversed). Not modified.
    id_col : str
        The participant column.
    wave_col : str
        The occasion column (waves, diary days).
    items : sequence of str, optional
        With ``format="wide"`` (required there): the item columns. Not used with ``"long"``.
    format : {"wide", "long"}, default "wide"
        ``"wide"``: one row per person and occasion, one column per item. ``"long"``: one row
        per person, occasion and item, with the item in `item_col` and the answer in
        `value_col`. The format is never guessed.
    item_col, value_col : str, default "item", "value"
        The item and answer columns of long data.
    method : {"auto", "anova", "reml"}, default "auto"
        How the crossed components are estimated: ``"anova"`` (balanced, complete data only:
        psych's default), ``"reml"`` (any data: psych's ``lmer = TRUE``), or ``"auto"``:
        ANOVA when every person answered every item at every occasion, REML otherwise.

    Returns
    -------
    MultilevelReliability
        ``coefficients`` (one row: ``n_persons, n_occasions, n_items, method, RkF, R1R, RkR,
        Rc, RkRn, Rcn``), ``components`` (``design, component, variance, percent,
        negative``), ``notes`` and ``meta``; ``result["RkF"]`` gives one coefficient.

    Raises
    ------
    InvalidParameterError
        If `data` is not a DataFrame; a column is missing; an answer column is not numeric
        (the columns are listed; nothing is converted) or holds an infinite value; an id or
        occasion is missing; a person answers an occasion (or, in long data, an item) twice
        (the ids are listed); fewer than two persons, occasions or items have answers; no
        person answers at two or more occasions; or
        ``method="anova"`` is asked of unbalanced or incomplete data.

    Warns
    -----
    DataQualityWarning
        When an ANOVA component is negative (kept, as psych keeps it, and flagged).
    SingularFitWarning
        When a REML component is estimated at zero.
    ConvergenceWarning
        When a REML fit did not converge.

    See Also
    --------
    longitudinal.scale_multilevel_reliability : the same from an instrument's scale, reverse
        keyed from its declared range.
    models.LinearMixedModel : the REML engine.

    Notes
    -----
    With persons :math:`p` (:math:`n_P`), occasions :math:`t` (:math:`n_T`) and items
    :math:`i` (:math:`n_I`), the crossed model is
    :math:`y_{pti} = \mu + P_p + T_t + I_i + PT_{pt} + PI_{pi} + TI_{ti} + e_{pti}`. Balanced
    data: the two-way mean squares of the three-way ANOVA without replication give
    :math:`\sigma^2_P = (MS_P - MS_{PT} - MS_{PI} + MS_e) / (n_T n_I)` (and likewise for
    :math:`T` and :math:`I`), :math:`\sigma^2_{PT} = (MS_{PT} - MS_e) / n_I`,
    :math:`\sigma^2_{PI} = (MS_{PI} - MS_e) / n_T`, :math:`\sigma^2_{TI} = (MS_{TI} - MS_e)
    / n_P`, :math:`\sigma^2_e = MS_e`. With :math:`S = \sigma^2_P + \sigma^2_{PI} / n_I`:

    - :math:`R_{kF} = S / (S + \sigma^2_e / (n_T n_I))`
    - :math:`R_{1R} = S / (S + \sigma^2_T + \sigma^2_{PT} + \sigma^2_e / n_I)`
    - :math:`R_{kR} = S / (S + \sigma^2_T / n_T + \sigma^2_{PT} / n_T + \sigma^2_e / (n_T
      n_I))`
    - :math:`R_C = \sigma^2_{PT} / (\sigma^2_{PT} + \sigma^2_e / n_I)`

    The nested model :math:`y_{pti} = \mu + P_p + T(P)_{pt} + e_{pti}` (REML, items as
    replicates) gives :math:`R_{kRn} = \sigma^2_P / (\sigma^2_P + \sigma^2_{T(P)} / n_T +
    \sigma^2_e / (n_T n_I))` and :math:`R_{Cn} = \sigma^2_{T(P)} / (\sigma^2_{T(P)} +
    \sigma^2_e / n_I)`. On balanced answers its REML components are the ANOVA estimates
    :math:`\sigma^2_e = MS_e`, :math:`\sigma^2_{T(P)} = (MS_{T(P)} - MS_e) / n_I`,
    :math:`\sigma^2_P = (MS_P - MS_{T(P)}) / (n_T n_I)` when all three are positive; otherwise
    (and on unbalanced answers) they come from the iterative REML fit. The crossed REML fit
    starts from the ANOVA components of the layout with its absent cells filled in by the
    additive fit of the main effects (a start near the optimum; the optimum is lme4's). The
    counts are the
    persons, occasions and items with at least one answer (psych counts rows, so a person whose
    every answer is missing counts there).

    A negative ANOVA component means the true one is near zero; it is kept, as psych keeps it,
    so that the coefficients equal psych's, and flagged in ``components`` and ``notes``. REML
    components are never negative.

    Validated against ``psych::mlr`` 2.2.9 (R 4.2.2, lme4 1.1-31, nlme 3.1-162) on Shrout and
    Lane's example, psychTools' ``sai`` (study VALE, six state-anxiety items over four
    occasions, balanced and with its missing answers) and a simulated set with a negative
    component: ANOVA components and coefficients to 1e-10, REML ones to 1e-3
    (``tests/models/reliability/test_multilevel_reliability.py``, R script
    ``tests/models/reference/multilevel_reliability.R``).

    References
    ----------
    Shrout PE, Lane SP (2012). Psychometrics. In Mehl MR, Conner TS (eds), Handbook of
    research methods for studying daily life (pp. 302-320). Guilford Press.
    Cranford JA, Shrout PE, Iida M, Rafaeli E, Yip T, Bolger N (2006). A procedure for
    evaluating sensitivity to within-person change. Personality and Social Psychology
    Bulletin 32(7), 917-929.

    Examples
    --------
    >>> import pandas as pd
    >>> from models import multilevel_reliability
    >>> shrout = pd.DataFrame({
    ...     "person": list(range(1, 6)) * 4,
    ...     "time": [t for t in range(1, 5) for _ in range(5)],
    ...     "item1": [2, 3, 6, 3, 7, 3, 5, 6, 3, 8, 4, 4, 7, 5, 6, 1, 5, 8, 8, 6],
    ...     "item2": [3, 4, 6, 4, 8, 3, 7, 7, 5, 8, 2, 6, 8, 6, 7, 3, 9, 9, 7, 8],
    ...     "item3": [6, 4, 5, 3, 7, 4, 7, 8, 9, 9, 5, 7, 9, 7, 8, 4, 7, 9, 9, 6],
    ... })
    >>> result = multilevel_reliability(
    ...     shrout, id_col="person", wave_col="time", items=["item1", "item2", "item3"]
    ... )
    >>> round(result["RkF"], 4), round(result["R1R"], 4), round(result["Rc"], 4)
    (0.9676, 0.5954, 0.7422)
    """
    long, meta = _long_answers(data, id_col, wave_col, items, format, item_col, value_col)
    if method not in ("auto", "anova", "reml"):
        raise InvalidParameterError(
            f"the `method` parameter of {_WHERE} must be 'auto', 'anova' or 'reml'; got {method!r}"
        )
    n_p, n_t, n_i = (int(long[c].max()) + 1 for c in ("person", "occasion", "item"))
    balanced = len(long) == n_p * n_t * n_i
    if method == "anova" and not balanced:
        raise InvalidParameterError(
            f"the `method` parameter of {_WHERE}: ANOVA components need every person to answer "
            f"every item at every occasion; {len(long)} of {n_p * n_t * n_i} answers are "
            "present. Use method='reml' (or 'auto')"
        )
    use = "anova" if method == "anova" or (method == "auto" and balanced) else "reml"
    notes = list(meta.pop("notes"))
    if use == "anova":
        crossed = crossed_anova_components(long, n_p, n_t, n_i)
        methods = ["crossed components by ANOVA (expected mean squares of balanced data)"]
    else:
        start = _start_theta(crossed_start(long, n_p, n_t, n_i))
        crossed = _reml_components(
            long, _CROSSED_FORMULA, _CROSSED_GROUPS, "crossed", notes, start=start
        )
        reason = "" if balanced else f"; {n_p * n_t * n_i - len(long)} answers missing"
        methods = [f"crossed components by REML (lme4's model{reason})"]
    nested = nested_reml_components(long, n_p, n_t, n_i) if balanced else None
    if nested is None:
        nested = _reml_components(long, _NESTED_FORMULA, _NESTED_GROUPS, "nested", notes)
    methods.append("nested components (occasion within person) by REML, as psych's nlme fit")

    negative = [name for name, value in crossed.items() if value < 0]
    if negative:
        listed = ", ".join(f"{name} ({crossed[name]:.4g})" for name in negative)
        text = (
            f"negative ANOVA variance estimate(s): {listed}; kept as psych keeps them (the "
            "true component is near zero) and used as they are in the coefficients"
        )
        notes.append(text)
        warnings.warn(f"{_WHERE}: {text}", DataQualityWarning, stacklevel=2)
    if n_p < SMALL_SAMPLE:
        notes.append(
            f"only {n_p} persons: the person components and every coefficient rest on few "
            "people and are imprecise"
        )

    coefficients = _coefficients(crossed, nested, n_p, n_t, n_i)
    row: dict[str, Any] = {
        "n_persons": n_p,
        "n_occasions": n_t,
        "n_items": n_i,
        "method": use,
        **coefficients,
    }
    undefined = [k for k, v in coefficients.items() if not np.isfinite(v)]
    if undefined:
        notes.append(f"undefined (zero denominator): {', '.join(undefined)}")
    table = pd.DataFrame([row], columns=COEFFICIENT_COLUMNS)
    components = pd.DataFrame(
        [
            *_component_rows("crossed", crossed, flag=use == "anova"),
            *_component_rows("nested", nested, flag=False),
        ],
        columns=COMPONENT_COLUMNS,
    )
    meta.update(
        {
            "package": "empathic-longitudinal",
            "version": __version__,
            "function": _WHERE,
            "options": {"format": format, "method": method},
            "method": use,
            "balanced": bool(balanced),
            "methods": methods,
            "n_answers": len(long),
        }
    )
    return MultilevelReliability(table, components, tuple(notes), meta)


def _long_answers(
    data: Any,
    id_col: str,
    wave_col: str,
    items: Sequence[str] | None,
    format: str,
    item_col: str,
    value_col: str,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Check the input; return the answers as integer codes and values, and what was dropped."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    if format not in ("wide", "long"):
        raise InvalidParameterError(
            f"the `format` parameter of {_WHERE} must be 'wide' or 'long'; got {format!r}"
        )
    for name, value in (("id_col", id_col), ("wave_col", wave_col)):
        if not isinstance(value, str):
            raise InvalidParameterError(
                f"the `{name}` parameter of {_WHERE} must be a column name (str); got {value!r}"
            )
    if format == "wide":
        if items is None or isinstance(items, str) or len(list(items)) == 0:
            raise InvalidParameterError(
                f"the `items` parameter of {_WHERE} must list the item columns of wide data; "
                f"got {items!r}"
            )
        items = list(items)
        if len(set(items)) != len(items):
            raise InvalidParameterError(
                f"the `items` parameter of {_WHERE} names an item twice: {items!r}"
            )
        needed = [id_col, wave_col, *items]
        answer_cols = items
        keys = [id_col, wave_col]
    else:
        if items is not None:
            raise InvalidParameterError(
                f"the `items` parameter of {_WHERE} is for wide data; long data name their "
                f"items in the `item_col` column ({item_col!r}). Got items={items!r}"
            )
        needed = [id_col, wave_col, item_col, value_col]
        answer_cols = [value_col]
        keys = [id_col, wave_col, item_col]
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} has no column(s) {missing}; its columns are "
            f"{list(map(str, data.columns))}"
        )
    text = [
        c
        for c in answer_cols
        if not pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c])
    ]
    if text:
        raise InvalidParameterError(
            f"the answer column(s) {text} passed to {_WHERE} are not numeric; nothing is "
            "converted. Read the answers as numbers (the check of surveys.check_export lists "
            "every text cell)"
        )
    values = data[answer_cols].to_numpy(dtype=float)
    if np.isinf(values).any():
        where = sorted({answer_cols[j] for j in np.nonzero(np.isinf(values))[1]})
        raise InvalidParameterError(f"infinite answers in column(s) {where} passed to {_WHERE}")
    unlabelled = data[keys].isna().any(axis=1)
    if unlabelled.any():
        rows = list(data.index[unlabelled][:10])
        raise InvalidParameterError(
            f"rows {rows} passed to {_WHERE} have no {' or '.join(keys)}; every answer needs "
            "its person and occasion (and item)"
        )
    twice = data.duplicated(keys, keep=False)
    if twice.any():
        ids = sorted(map(str, pd.unique(data.loc[twice, id_col])))
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        what = "occasion" if format == "wide" else "item at an occasion"
        raise InvalidParameterError(
            f"{_WHERE}: {len(ids)} person(s) answer an {what} more than once (id {shown}); "
            "answers are never averaged. Remove or rename the duplicates"
        )
    if format == "wide":
        frame = data[[id_col, wave_col, *items]].melt(
            id_vars=[id_col, wave_col], var_name="__item", value_name="__value"
        )
        item_labels = items
    else:
        frame = data[[id_col, wave_col, item_col, value_col]].set_axis(
            [id_col, wave_col, "__item", "__value"], axis=1
        )
        item_labels = list(pd.unique(frame["__item"]))
    n_rows_people = data[id_col].nunique()
    n_missing = int(frame["__value"].isna().sum())
    frame = frame.loc[frame["__value"].notna()]
    person, people = pd.factorize(frame[id_col], sort=True)
    occasion, occasions = pd.factorize(frame[wave_col], sort=True)
    item, answered_items = pd.factorize(frame["__item"], sort=False)
    long = pd.DataFrame(
        {
            "person": person,
            "occasion": occasion,
            "item": item,
            "value": frame["__value"].to_numpy(dtype=float),
        }
    )
    notes = []
    silent = n_rows_people - len(people)
    if silent:
        notes.append(f"{silent} person(s) with no answer at all are not counted")
    unanswered = [str(i) for i in item_labels if i not in set(answered_items)]
    if unanswered:
        notes.append(f"item(s) never answered, not counted: {', '.join(unanswered)}")
    if n_missing:
        notes.append(f"{n_missing} missing answer(s) left out")
    meta = {
        "n_missing": n_missing,
        "n_persons_without_answers": int(silent),
        "items": [str(i) for i in answered_items],
        "occasions": [_builtin(o) for o in occasions],
        "notes": notes,
    }
    for name, count in (
        ("persons", len(people)),
        ("occasions", len(occasions)),
        ("items", len(answered_items)),
    ):
        if count < 2:
            raise InvalidParameterError(
                f"{_WHERE} needs answers from at least two {name}; got {count}. The "
                "components of persons, occasions and items are not identified otherwise"
            )
    repeated = long.groupby("person")["occasion"].nunique()
    if not (repeated >= 2).any():
        raise InvalidParameterError(
            f"{_WHERE} needs at least one person answering at two or more occasions; every "
            "person here answered at one only, so change within a person is not identified"
        )
    return long, meta


def _builtin(value: Any) -> Any:
    item = getattr(value, "item", None)
    return item() if callable(item) else value


_START_FLOOR = 1e-2
"""The least starting relative scale of a crossed component: a component whose filled-in
ANOVA estimate is smaller (or negative) starts off the boundary, where a scale's gradient
vanishes."""


def _start_theta(components: dict[str, float] | None) -> np.ndarray | None:
    """Return the crossed fit's starting ``theta`` (formula order) from ANOVA components."""
    if components is None:
        return None
    residual = components["residual"]
    if not (np.isfinite(residual) and residual > 0):
        return None
    ratios = [components[name] / residual for name in CROSSED_COMPONENTS[:-1]]
    return np.sqrt(np.maximum(ratios, _START_FLOOR**2))


def _reml_components(
    long: pd.DataFrame,
    formula: str,
    groups: dict[str, str],
    design: str,
    notes: list[str],
    *,
    start: np.ndarray | None = None,
) -> dict[str, float]:
    """REML components of one design; its fit's problems become notes and one warning each.

    ``start``: the fit's starting ``theta`` (None: lme4's).
    """
    from models.lmm import LinearMixedModel

    frame = long.assign(
        person=long["person"].map("p{}".format),
        occasion=long["occasion"].map("t{}".format),
        item=long["item"].map("i{}".format),
    )
    model = LinearMixedModel(formula)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(frame, start=start)
    for message in caught:  # the fit's own wording names generated columns; ours below
        if not issubclass(message.category, SingularFitWarning | ConvergenceWarning):
            warnings.warn(message.message, message.category, stacklevel=3)
    table = model.random_
    found = {groups[g]: float(v) for g, v in zip(table["group"], table["variance"], strict=True)}
    values = {name: found[name] for name in groups.values()}
    if not model.converged_:
        text = (
            f"the REML fit of the {design} components did not converge "
            f"({model.convergence_message_}); its components are not trustworthy"
        )
        notes.append(text)
        warnings.warn(f"{_WHERE}: {text}", ConvergenceWarning, stacklevel=3)
    zero = [
        name for name, v in values.items() if name != "residual" and v <= 1e-10 * _scale(values)
    ]
    if model.singular_ and zero:
        text = (
            f"{design} component(s) estimated at zero by REML (a boundary fit): {', '.join(zero)}"
        )
        notes.append(text)
        warnings.warn(f"{_WHERE}: {text}", SingularFitWarning, stacklevel=3)
    return values


def _scale(values: dict[str, float]) -> float:
    return max(sum(abs(v) for v in values.values()), 1e-300)


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den != 0 and np.isfinite(den) else float("nan")


def _coefficients(
    crossed: dict[str, float], nested: dict[str, float], n_p: int, n_t: int, n_i: int
) -> dict[str, float]:
    """Return the six coefficients of psych from the two sets of components."""
    del n_p  # the coefficients depend on occasions and items only
    s = crossed["person"] + crossed["person_x_item"] / n_i
    e = crossed["residual"]
    pxt, t = crossed["person_x_occasion"], crossed["occasion"]
    vid, vt, vres = nested["person"], nested["occasion_in_person"], nested["residual"]
    return {
        "RkF": _ratio(s, s + e / (n_t * n_i)),
        "R1R": _ratio(s, s + t + pxt + e / n_i),
        "RkR": _ratio(s, s + t / n_t + pxt / n_t + e / (n_t * n_i)),
        "Rc": _ratio(pxt, pxt + e / n_i),
        "RkRn": _ratio(vid, vid + vt / n_t + vres / (n_t * n_i)),
        "Rcn": _ratio(vt, vt + vres / n_i),
    }


def _component_rows(design: str, values: dict[str, float], *, flag: bool) -> list[dict[str, Any]]:
    total = sum(values.values())
    return [
        {
            "design": design,
            "component": name,
            "variance": value,
            "percent": _ratio(value, total),
            "negative": bool(flag and value < 0),
        }
        for name, value in values.items()
    ]
