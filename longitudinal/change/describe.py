"""Descriptives of a scale per wave."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._checks import check_unit
from longitudinal.change._panel import _panel
from longitudinal.change.results import DESCRIBE_COLUMNS


def describe_waves(
    data: pd.DataFrame,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Describe the outcome at each wave.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    id_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column (the scale score).
    waves : sequence of hashable
        The wave labels in time order, e.g. ``["pre", "mid", "post"]``.
    ci_level : float, default 0.95
        Level of the t-based confidence interval of each wave mean.

    Returns
    -------
    pandas.DataFrame
        One row per wave with the columns ``wave``, ``n`` (subjects observed), ``n_missing``
        (subjects in ``data`` without a value at this wave), ``mean``, ``sd`` (n - 1
        denominator), ``se``, ``ci_low``, ``ci_high``, ``median``, ``min``, ``max``. Statistics
        that need more observations than there are are NaN.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Duplicated subject x wave rows, wave labels outside ``waves``, missing ids or infinite
        outcomes (all listed in ``failure_cases``).

    See Also
    --------
    change_analysis : runs every part of the change analysis.

    Notes
    -----
    The interval is ``mean +/- t(1 - (1 - ci_level) / 2, n - 1) * sd / sqrt(n)``, as
    ``stats::t.test`` computes it for one sample.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import describe_waves
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 3, 3], "wave": ["pre", "post"] * 3,
    ...                    "score": [2.0, 3.0, 3.0, 3.5, 4.0, 4.5]})
    >>> describe_waves(df, id_col="id", wave_col="wave", outcome_col="score",
    ...                waves=["pre", "post"])[["wave", "n", "mean", "sd"]]
       wave  n      mean        sd
    0   pre  3  3.000000  1.000000
    1  post  3  3.666667  0.763763
    """
    func = "describe_waves"
    level = check_unit(ci_level, name="ci_level", where=func)
    panel = _panel(
        data,
        id_col=id_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    rows = []
    for wave in panel.waves:
        x = panel.wide[wave].dropna().to_numpy()
        n = x.size
        mean = float(x.mean()) if n else math.nan
        sd = float(x.std(ddof=1)) if n > 1 else math.nan
        se = sd / math.sqrt(n) if n > 1 else math.nan
        half = stats.t.ppf(0.5 + level / 2, n - 1) * se if n > 1 else math.nan
        rows.append(
            {
                "wave": wave,
                "n": n,
                "n_missing": int(len(panel.wide) - n),
                "mean": mean,
                "sd": sd,
                "se": se,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "median": float(np.median(x)) if n else math.nan,
                "min": float(x.min()) if n else math.nan,
                "max": float(x.max()) if n else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=DESCRIBE_COLUMNS)
