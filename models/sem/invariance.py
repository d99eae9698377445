"""Longitudinal measurement invariance: configural to strict, as lavaan fits them.

:func:`measurement_invariance` fits the ladder of ``semTools::measEq.syntax`` to one scale
measured at two or more waves, for continuous items by ML or MLR (``ID.fac = "std.lv"``:
configural, metric, scalar, strict; :mod:`models.sem._ladder_ml`) or for ordered items by
WLSMV (``ID.cat = "Wu.Estabrook.2016"``: configural, thresholds, metric, scalar, strict;
:mod:`models.sem._ladder_wlsmv`); compares consecutive models, tests the restrictions of a
rejected step one by one (the partial model frees the worst), and reports the latent means and
variances of the later waves under the highest level that holds. :func:`invariance_tables`
writes the two tables of the ``longitudinal reliability --invariance`` output.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from models._errors import InvalidParameterError
from models._version import __version__
from models.sem._blas import one_blas_thread
from models.sem._invariance_input import check_parameters, wide
from models.sem._invariance_result import (
    INVARIANCE_CSV_COLUMNS,
    InvarianceResult,
    invariance_tables,
)
from models.sem._spec import build_spec

__all__ = [
    "INVARIANCE_CSV_COLUMNS",
    "InvarianceResult",
    "invariance_sample_note",
    "invariance_tables",
    "measurement_invariance",
]

FUNC = "measurement_invariance"

SCOPE_NOTES = {
    "ML": (
        "The items are treated as continuous (estimator='WLSMV' treats them as ordered "
        "categories); missing answers are handled by full-information ML (nan_policy='fiml')."
    ),
    "WLSMV": (
        "The items are treated as ordered categories; missing answers are handled by "
        "listwise deletion (nan_policy='omit', lavaan's default) or pairwise "
        "(nan_policy='pairwise'); full-information ML does not exist for this estimator."
    ),
}
"""The scope of each estimator, said after its note (``meta["estimator_note"]``)."""


@one_blas_thread
def measurement_invariance(
    data: pd.DataFrame,
    *,
    items: list[str],
    id_col: str,
    wave_col: str,
    waves: list[Any] | None = None,
    estimator: str = "ML",
    delta_cfi: float = 0.01,
    delta_rmsea: float = 0.015,
    ci_level: float = 0.95,
    nan_policy: str = "raise",
    factor: str = "F",
) -> InvarianceResult:
    """Test longitudinal measurement invariance of one scale (configural to strict).

    For continuous items by ML or MLR, for ordered items by WLSMV.

    Parameters
    ----------
    data : pandas.DataFrame
        Long format: one row per participant and wave, the item answers as numbers.
    items : list of str
        The scale's item columns (the same items at every wave; at least two).
    id_col : str
        The participant column.
    wave_col : str
        The wave column.
    waves : list, optional
        The waves in their order (default: the sorted values of a numeric ``wave_col``;
        needed for text labels).
    estimator : {"ML", "MLR", "WLSMV"}, default "ML"
        Normal-theory ML, or ML with lavaan's MLR corrections (Yuan-Bentler scaled chi-square,
        Huber-White standard errors, Satorra-Bentler 2001 scaled differences) for Likert items
        that are not normal, or lavaan's WLSMV for items whose answers are ordered categories
        (integer codes; thresholds and polychoric correlations, diagonally weighted least
        squares, robust standard errors, the scaled and shifted chi-square, Satorra 2000
        scaled differences), with the thresholds step between configural and metric.
    delta_cfi : float, default 0.01
        A step holds when CFI drops by at most this much (Cheung & Rensvold, 2002) ...
    delta_rmsea : float, default 0.015
        ... and RMSEA rises by at most this much (Chen, 2007); under MLR and WLSMV both
        read the scaled indices.
    ci_level : float, default 0.95
        Level of the Wald intervals of the parameters and latent change.
    nan_policy : {"raise", "omit", "fiml", "pairwise"}, default "raise"
        A participant with a missing answer or wave is refused (``"raise"``), left out and
        counted in ``meta["n_excluded"]`` (``"omit"``: listwise deletion, lavaan's default),
        or kept with every answer they gave: ``"fiml"`` (full-information ML, lavaan's
        ``missing = "ml"``, with ML or MLR) or ``"pairwise"`` (WLSMV only: each threshold
        and polychoric correlation from the answers given, lavaan's ``missing =
        "pairwise"``); participants with no answer at all are left out and counted.
        Full-information ML does not exist for WLSMV, and ``meta["missing"]`` says which
        rule a WLSMV ladder used.
    factor : str, default "F"
        The latent variable's name in the parameter table (``{factor}.{wave}``).

    Returns
    -------
    InvarianceResult
        ``fits`` (the ladder and, when a step is rejected, the partial models), ``parameters``,
        ``latent`` (later waves' latent means and variances under the highest level held),
        ``score_tests``, ``level_held``, ``meta``.

    Warns
    -----
    ConvergenceWarning
        A model did not converge (also said in the summary; its numbers are not to be read).
    SingularFitWarning
        A residual or latent variance estimate is negative (not admissible; listed in
        ``meta["notes"]`` and the summary).

    Raises
    ------
    InvalidParameterError
        A bad parameter; missing columns; non-numeric items; an unknown wave; a repeated
        participant x wave; incomplete participants under ``nan_policy="raise"``; under
        WLSMV an answer that is not an integer code, or a category of an item that nobody
        chose at some wave while others did (named by item, wave and category: collapse
        the categories first).

    See Also
    --------
    invariance_tables : the two CSV tables of ``longitudinal reliability --invariance``.

    Notes
    -----
    The model: one factor per wave with the same items; the residuals of the same item
    correlate across all waves; the factors correlate freely; a mean structure. The ladder is
    identified as ``semTools::measEq.syntax(ID.fac = "std.lv", auto = "all")`` with
    ``longFacNames``: configural (every latent mean 0, variance 1), metric (loadings equal
    across waves; later latent variances free), scalar (+ intercepts equal; later latent
    means free), strict (+ residual variances equal).

    Consecutive models are compared by the likelihood-ratio test (MLR: the Satorra-Bentler
    2001 scaled difference), and by ``delta_cfi = CFI(previous) - CFI(this)`` and
    ``delta_rmsea = RMSEA(this) - RMSEA(previous)`` (MLR: the scaled indices). A step
    "holds" when both changes are within the cut-offs; the first failing step is
    "rejected" and later steps are "not tested". For the rejected step the equality
    constraints it added are score-tested one at a time (``lavTestScore``) and the partial
    model frees the worst (the largest statistic); it is compared with the level below,
    and when it holds the latent change is read from it (partial invariance).

    Under WLSMV (items as ordered categories; ``semTools::measEq.syntax(ID.cat =
    "Wu.Estabrook.2016", parameterization = "theta")``) the ladder is configural (thresholds
    free; intercepts 0, residual variances 1, latent means 0, variances 1), thresholds (each
    item's thresholds equal across waves; the later waves' intercepts and residual variances
    free), metric (+ loadings), scalar (+ intercepts, so 0 at every wave; later latent means
    free) and strict (+ residual variances, so 1). The thresholds, polychoric correlations and
    their asymptotic covariance are computed once and every model is fitted to them;
    consecutive models are compared by lavaan's scaled and shifted difference test (Satorra,
    2000) and by the scaled CFI and RMSEA. At the first rejected step its restrictions are
    score-tested (an equality of thresholds or loadings as ``lavTestScore``; an intercept
    fixed at 0 or a residual variance fixed at 1 by the same test of releasing it), the
    worst is freed and the model refitted, one at a time, until the step holds against the
    level below (``"scalar (partial 2)"``: two freed) or nothing is left that can be freed;
    ``meta["partial_search"]`` and the notes say why the search stopped. A model that did
    not converge has no numbers in ``fits`` and no decision is read from it. Validated
    against lavaan on the same ``sai`` items (two and three waves, 4-point, binary and
    3-point items): scaled chi-square to 1e-3, scaled CFI, TLI, RMSEA, estimates to 1e-4,
    standard errors and difference and score tests to 1e-3, and the partial search itself
    (``tests/models/sem/test_invariance_wlsmv.py``).

    Validated against lavaan 0.6-14 and semTools 0.5-6 (``cfa`` on the syntax of
    ``measEq.syntax``, ``fitMeasures``, ``lavTestLRT``, ``lavTestScore``) on three real data
    sets (psychTools ``sai``: two, three and four waves), ML, MLR and full-information ML with
    either (``missing = "ml"``, the incomplete participants of the same studies): chi-square
    to 1e-3, fit indices (under MLR also the robust CFI, TLI and RMSEA with complete data),
    estimates and standard errors to 1e-4
    (``tests/models/sem/test_invariance.py``).

    With ``nan_policy="fiml"`` the chi-square is twice the log-likelihood difference from the
    saturated model (fitted by EM, then Fisher scoring), the baseline model fits each item's
    available answers, SRMR uses the saturated model's moments and standard errors the
    observed information (MLR: its sandwich with the casewise scores; the scaling factor's h1
    trace from the saturated model's observed information and casewise scores), as lavaan
    does.

    References
    ----------
    Cheung, G. W., & Rensvold, R. B. (2002). Evaluating goodness-of-fit indexes for testing
    measurement invariance. Structural Equation Modeling, 9(2), 233-255.
    Chen, F. F. (2007). Sensitivity of goodness of fit indexes to lack of measurement
    invariance. Structural Equation Modeling, 14(3), 464-504.
    Byrne, B. M., Shavelson, R. J., & Muthen, B. (1989). Testing for the equivalence of
    factor covariance and mean structures: the issue of partial measurement invariance.
    Psychological Bulletin, 105(3), 456-466.
    Satorra, A., & Bentler, P. M. (2001). A scaled difference chi-square test statistic for
    moment structure analysis. Psychometrika, 66(4), 507-514.
    Satorra, A. (2000). Scaled and adjusted restricted tests in multi-sample analysis of
    moment structures. In R. D. H. Heijmans, D. S. G. Pollock, & A. Satorra (Eds.),
    Innovations in multivariate statistical analysis (pp. 233-247). Kluwer.
    Wu, H., & Estabrook, R. (2016). Identification of confirmatory factor analysis models of
    different levels of invariance for ordered categorical outcomes. Psychometrika, 81(4),
    1014-1045.
    Asparouhov, T., & Muthen, B. (2010). Simple second order chi-square correction.
    Technical appendix, Mplus.
    Yuan, K.-H., & Bentler, P. M. (2000). Three likelihood-based methods for mean and
    covariance structure analysis with nonnormal missing data. Sociological Methodology, 30,
    165-200.

    Examples
    --------
    Three items at two waves, simulated invariant, the latent mean rising by 0.3:

    >>> import numpy as np, pandas as pd
    >>> from models.sem import measurement_invariance
    >>> rng = np.random.default_rng(0)
    >>> eta = rng.normal(size=(300, 2)) + [0.0, 0.3]
    >>> y = np.hstack([0.8 * eta[:, [w]] + rng.normal(scale=0.6, size=(300, 3)) for w in (0, 1)])
    >>> data = pd.DataFrame({"id": np.repeat(np.arange(300), 2), "wave": np.tile([1, 2], 300)})
    >>> data[["x0", "x1", "x2"]] = y.reshape(600, 3)
    >>> res = measurement_invariance(data, items=["x0", "x1", "x2"], id_col="id", wave_col="wave")
    >>> res.fits["decision"].tolist()
    ['baseline', 'holds', 'holds', 'holds']
    >>> res.latent[["quantity", "wave", "estimate"]].round(2)
       quantity  wave  estimate
    0      mean     2      0.39
    1  variance     2      0.93
    """
    check_parameters(estimator, nan_policy, ci_level, delta_cfi, delta_rmsea, items)
    items = list(items)
    y, waves, n_excluded, _ = wide(data, items, id_col, wave_col, waves, nan_policy, estimator)
    n, k = y.shape
    if n <= k and nan_policy not in ("fiml", "pairwise"):
        what = "polychoric correlation" if estimator == "WLSMV" else "sample covariance"
        raise InvalidParameterError(
            f"{FUNC}: {n} complete participants for {k} observed variables "
            f"({len(items)} items x {len(waves)} waves); the {what} matrix is singular"
        )
    rule = (
        f"a step holds when CFI drops by at most {delta_cfi} (Cheung & Rensvold, 2002) "
        f"and RMSEA rises by at most {delta_rmsea} (Chen, 2007)"
    )
    if estimator != "ML":
        rule += f"; scaled indices under {estimator}"
    options = {
        "items": items,
        "waves": waves,
        "factor": factor,
        "estimator": estimator,
        "nan_policy": nan_policy,
        "delta_cfi": delta_cfi,
        "delta_rmsea": delta_rmsea,
        "ci_level": ci_level,
        "scope": SCOPE_NOTES["WLSMV" if estimator == "WLSMV" else "ML"],
        "meta": {
            "version": __version__,
            "function": FUNC,
            "estimator": estimator,
            "decision_rule": rule,
            "items": items,
            "waves": waves,
            "id_col": id_col,
            "wave_col": wave_col,
            "n_excluded": n_excluded,
            "nan_policy": nan_policy,
            "delta_cfi": delta_cfi,
            "delta_rmsea": delta_rmsea,
            "ci_level": ci_level,
        },
    }
    if estimator == "WLSMV":
        from models.sem._ladder_wlsmv import wlsmv_ladder

        return wlsmv_ladder(y, options)
    from models.sem._ladder_ml import ml_ladder

    return ml_ladder(y, options)


def invariance_sample_note(
    n: int,
    *,
    n_items: int,
    n_waves: int,
    per_parameter: float = 5.0,
    n_categories: int | list[int] | None = None,
) -> str | None:
    """Return why a sample is too small for the configural model, or None when it is not.

    Parameters
    ----------
    n : int
        Complete participants.
    n_items, n_waves : int
        The scale's items and the waves it was measured at.
    per_parameter : float, default 5.0
        Participants needed per free parameter of the configural model (Bentler & Chou,
        1987: at least 5 under normal theory).
    n_categories : int or list of int, optional
        For the WLSMV ladder: the answer categories of every item (one number) or of each
        item; the configural model then has thresholds in place of intercepts and residual
        variances. None (default): the ML and MLR ladder.

    Returns
    -------
    str or None
        One line for a report ("fewer participants than ..."), or None.

    Raises
    ------
    InvalidParameterError
        ``n``, ``n_items`` or ``n_waves`` is not a positive integer or too small, or
        ``n_categories`` does not give at least two categories per item.

    Notes
    -----
    The configural model of ``p`` items at ``T`` waves has ``3pT`` item parameters
    (loadings, intercepts, residual variances), ``pT(T-1)/2`` residual covariances of the same
    item across waves and ``T(T-1)/2`` factor covariances. Under WLSMV the item parameters
    are ``pT`` loadings and each item's thresholds (categories less one) at every wave.

    References
    ----------
    Bentler, P. M., & Chou, C.-P. (1987). Practical issues in structural modeling.
    Sociological Methods & Research, 16(1), 78-117.

    Examples
    --------
    >>> from models.sem import invariance_sample_note
    >>> print(invariance_sample_note(41, n_items=4, n_waves=3))  # doctest: +NORMALIZE_WHITESPACE
    41 participants with complete answers; the configural model of 4 items x 3 waves has 51
    free parameters and needs at least 255 (5 per parameter; Bentler & Chou, 1987)
    >>> invariance_sample_note(300, n_items=4, n_waves=3) is None
    True
    >>> print(invariance_sample_note(167, n_items=4, n_waves=3, n_categories=4))
    ... # doctest: +NORMALIZE_WHITESPACE
    167 participants with complete answers; the configural model of 4 items x 3 waves has 63
    free parameters and needs at least 315 (5 per parameter; Bentler & Chou, 1987)
    """
    where = "invariance_sample_note"
    for name, value, low in (("n", n, 0), ("n_items", n_items, 2), ("n_waves", n_waves, 2)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise InvalidParameterError(
                f"the `{name}` parameter of {where} must be an integer >= {low}; got {value!r}"
            )
    if isinstance(per_parameter, bool) or not isinstance(per_parameter, int | float):
        raise InvalidParameterError(
            f"the `per_parameter` parameter of {where} must be a positive number; "
            f"got {per_parameter!r}"
        )
    if not per_parameter > 0:
        raise InvalidParameterError(
            f"the `per_parameter` parameter of {where} must be a positive number; "
            f"got {per_parameter!r}"
        )
    if n_categories is None:
        q = build_spec(int(n_items), int(n_waves), "configural").n_params
    else:
        q = _ordinal_parameters(int(n_items), int(n_waves), n_categories, where)
    needed = int(np.ceil(per_parameter * q))
    if n >= needed:
        return None
    return (
        f"{n} participants with complete answers; the configural model of {n_items} items x "
        f"{n_waves} waves has {q} free parameters and needs at least {needed} "
        f"({per_parameter:g} per parameter; Bentler & Chou, 1987)"
    )


def _ordinal_parameters(n_items: int, n_waves: int, n_categories: Any, where: str) -> int:
    """Count the free parameters of the WLSMV configural model."""
    counts = [n_categories] * n_items if np.ndim(n_categories) == 0 else list(n_categories)
    if len(counts) != n_items or any(
        isinstance(c, bool) or not isinstance(c, int | np.integer) or c < 2 for c in counts
    ):
        raise InvalidParameterError(
            f"the `n_categories` parameter of {where} must be an integer >= 2 or one per item "
            f"({n_items}); got {n_categories!r}"
        )
    from models.sem._wlsmv_spec import build_ordinal_spec

    thresholds = tuple(int(c) - 1 for c in counts)
    return build_ordinal_spec(n_items, n_waves, thresholds, "configural").n_params
