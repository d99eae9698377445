"""The answers of one scale's items, reverse keyed from the declared range, one row per answer.

:func:`keyed_item_answers` prepares the input of an item-level analysis (the multilevel
reliability of ``models.multilevel_reliability``): it takes wide or long answers, keeps the
scale's items, reverses the reverse-keyed ones as ``response_min + response_max - x`` from the
scale's declared range (never the observed one) and returns them long.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from surveys._errors import InvalidParameterError
from surveys._instrument_types import ScaleKey

__all__ = ["keyed_item_answers"]

_WHERE = "surveys.keyed_item_answers"


def keyed_item_answers(
    data: pd.DataFrame,
    key: ScaleKey,
    *,
    id_col: str,
    wave_col: str,
    format: Literal["wide", "long"] = "wide",
    item_col: str = "item",
    value_col: str = "value",
) -> pd.DataFrame:
    """Return a scale's item answers, reverse keyed from its declared range, one row per answer.

    Parameters
    ----------
    data : pandas.DataFrame
        Answers. ``format="wide"``: one row per person and wave, one column per item (other
        columns are ignored). ``format="long"``: one row per person, wave and item, the item
        in `item_col` and the answer in `value_col` (rows of other items are ignored). Not
        modified.
    key : ScaleKey
        The scale: its items, reverse-keyed items and declared response range.
    id_col, wave_col : str
        The participant and wave columns.
    format : {"wide", "long"}, default "wide"
        The layout of `data`; never guessed.
    item_col, value_col : str, default "item", "value"
        The item and answer columns of long data.

    Returns
    -------
    pandas.DataFrame
        Columns `id_col`, `wave_col`, ``item`` (the key's item ids, in key order within each
        person and wave) and ``value`` (float, reverse keyed; NaN for a missing answer).

    Raises
    ------
    InvalidParameterError
        If `key` is not a ScaleKey, `format` is not allowed, a column or item is missing, an
        answer column is not numeric (nothing is converted), or an answer lies outside the
        declared range (every such answer is listed, with its row label and item).

    See Also
    --------
    surveys.reverse_score : the reversal rule.
    models.multilevel_reliability : what the answers are prepared for.

    Notes
    -----
    psych (``mlr``, ``scoreItems``, ``alpha``) reverses an item from the minimum and maximum
    observed in the data; here the declared range is used, so a reversed answer does not depend
    on which answers happen to occur.

    Examples
    --------
    >>> import pandas as pd
    >>> from surveys import ScaleKey, keyed_item_answers
    >>> key = ScaleKey("calm", ("tense", "relaxed"), ("relaxed",), 1, 4, "mean")
    >>> answers = pd.DataFrame({"id": [1, 1], "wave": [1, 2], "tense": [2, 3],
    ...                         "relaxed": [4, 1]})
    >>> keyed_item_answers(answers, key, id_col="id", wave_col="wave")
       id  wave     item  value
    0   1     1    tense    2.0
    1   1     1  relaxed    1.0
    2   1     2    tense    3.0
    3   1     2  relaxed    4.0
    """
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    if not isinstance(key, ScaleKey):
        raise InvalidParameterError(
            f"the `key` parameter of {_WHERE} must be a ScaleKey (an instrument's "
            f"`scales` entry); got {type(key).__name__}"
        )
    if format not in ("wide", "long"):
        raise InvalidParameterError(
            f"the `format` parameter of {_WHERE} must be 'wide' or 'long'; got {format!r}"
        )
    items = list(key.items)
    if format == "wide":
        needed = [id_col, wave_col, *items]
    else:
        needed = [id_col, wave_col, item_col, value_col]
    missing = [c for c in needed if c not in data.columns]
    if missing:
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} has no column(s) {missing} (scale "
            f"{key.name!r}); its columns are {list(map(str, data.columns))}"
        )
    if (
        format == "wide"
        and data.index.is_unique
        and data.index.is_monotonic_increasing
        and _numeric_items(data, items)
    ):
        long = _row_major(data, id_col, wave_col, items)
        answer_cols = items
    elif format == "wide":
        long = data[[id_col, wave_col, *items]].melt(
            id_vars=[id_col, wave_col], var_name="item", value_name="value", ignore_index=False
        )
        # person and wave first, then items in key order, as the rows were
        order = np.lexsort((long["item"].map(items.index).to_numpy(), long.index.to_numpy()))
        long = long.iloc[order]
        answer_cols = items
    else:
        chosen = data[item_col].isin(items)
        long = data.loc[chosen, [id_col, wave_col, item_col, value_col]].set_axis(
            [id_col, wave_col, "item", "value"], axis=1
        )
        absent = [i for i in items if i not in set(long["item"])]
        if absent:
            raise InvalidParameterError(
                f"the `data` parameter of {_WHERE} has no answers to item(s) {absent} of scale "
                f"{key.name!r} in its {item_col!r} column"
            )
        answer_cols = [value_col]
    text = [
        c
        for c in answer_cols
        if not pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c])
    ]
    if text:
        raise InvalidParameterError(
            f"the answer column(s) {text} passed to {_WHERE} are not numeric; nothing is "
            "converted (surveys.validate_responses lists every text cell)"
        )
    values = long["value"].to_numpy(dtype=float)
    lo, hi = float(key.response_min), float(key.response_max)
    outside = np.isfinite(values) & ((values < lo) | (values > hi)) | np.isinf(values)
    if outside.any():
        listed = [
            f"row {label!r} item {item!r}: {value:g}"
            for label, item, value in zip(
                long.index[outside], long["item"].to_numpy()[outside], values[outside], strict=True
            )
        ]
        shown = "; ".join(listed[:20]) + (
            f"; and {len(listed) - 20} more" if len(listed) > 20 else ""
        )
        raise InvalidParameterError(
            f"{_WHERE}: {len(listed)} answer(s) of scale {key.name!r} lie outside its declared "
            f"range {lo:g}-{hi:g}: {shown}"
        )
    reverse = long["item"].isin(key.reverse).to_numpy()
    values = np.where(reverse, lo + hi - values, values)
    return pd.DataFrame(
        {
            id_col: long[id_col].to_numpy(),
            wave_col: long[wave_col].to_numpy(),
            "item": long["item"].to_numpy(dtype=object),
            "value": values,
        }
    )


def _numeric_items(data: pd.DataFrame, items: list[str]) -> bool:
    return all(
        pd.api.types.is_numeric_dtype(data[c]) and not pd.api.types.is_bool_dtype(data[c])
        for c in items
    )


def _row_major(data: pd.DataFrame, id_col: str, wave_col: str, items: list[str]) -> pd.DataFrame:
    """Melt rows already in index order: each row's items in key order, as the melt does."""
    n, m = len(data), len(items)
    values = np.empty((n, m), dtype="float64")
    for j, item in enumerate(items):
        values[:, j] = data[item].to_numpy(dtype="float64", na_value=np.nan)
    return pd.DataFrame(
        {
            id_col: np.repeat(data[id_col].to_numpy(), m),
            wave_col: np.repeat(data[wave_col].to_numpy(), m),
            "item": np.tile(np.array(items, dtype=object), n),
            "value": values.reshape(-1),
        },
        index=np.repeat(data.index.to_numpy(), m),
    )
