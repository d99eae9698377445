"""Comparing models of the ordinal ladder: the scaled difference test and score tests.

:func:`wlsmv_difference` is lavaan's ``lavTestLRT(m0, m1)`` for WLSMV fits (its default
``method = "satorra.2000"`` with ``scaled.shifted = TRUE`` and ``A.method = "delta"``):
with ``J1``, ``J0`` the Jacobians of the less and the more restricted model at their
estimates, the restrictions are the rows ``A`` spanning the left null space of
``H = J1^+ J0``; with ``P = J1'WJ1`` and
``U = W J1 P^-1 A' (A P^-1 A')^+ A P^-1 J1' W``, ``m = df0 - df1``,
``a = sqrt(m / tr((U Gamma)^2))`` and ``b = m - a tr(U Gamma)``, the statistic is
``a (T0 - T1) + b`` on ``m`` degrees of freedom (``T`` the standard statistics).

:func:`wlsmv_score_tests` is lavaan's ``lavTestScore`` (the ordinary score test, which lavaan
gives for a robust fit as well): in the parameterisation where every entry held equal has its
own parameter, with the gradient ``g = -J'W r``, the information ``I = J'WJ`` and ``C`` the
rows of the equality constraints, releasing constraint ``r`` gives
``(N - 1)^2 / N  g' [I, C_r'; C_r, 0]^+_11 g`` on one degree of freedom (``C_r``: ``C`` without
row ``r``; lavaan's gradient carries the factor ``(N - 1) / N``). The total test is
``(N - 1)^2 / N  g' I^+ g`` on as many degrees of freedom as constraints.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from models._errors import InvalidParameterError
from models.sem._blas import one_blas_thread
from models.sem._wlsmv import WLSMVFit
from models.sem._wlsmv_spec import OrdinalModel, entry_label, factor_names

__all__ = ["WLSMVDifference", "WLSMVScoreTests", "wlsmv_difference", "wlsmv_score_tests"]


@dataclass(frozen=True)
class WLSMVDifference:
    """The scaled and shifted difference test between two nested WLSMV fits.

    Attributes
    ----------
    chisq_diff : float
        lavaan's ``Chisq diff``.
    df_diff : int
    p_value : float
    a, b : float
        The scaling and the shift applied to the difference of the standard statistics.
    """

    chisq_diff: float
    df_diff: int
    p_value: float
    a: float
    b: float


@one_blas_thread
def wlsmv_difference(m0: WLSMVFit, m1: WLSMVFit) -> WLSMVDifference:
    """Return the scaled difference test of the nested models ``m0`` and ``m1``.

    Parameters
    ----------
    m0, m1 : WLSMVFit
        Two fits to the same sample statistics, one nested in the other (in either order:
        the one with more degrees of freedom is the restricted one, as in ``lavTestLRT``).

    Returns
    -------
    WLSMVDifference
    """
    for name, fit in (("m0", m0), ("m1", m1)):
        if not isinstance(fit, WLSMVFit):
            raise InvalidParameterError(
                f"the `{name}` parameter of wlsmv_difference must be a WLSMVFit; "
                f"got {type(fit).__name__}"
            )
    if m0.residual.shape != m1.residual.shape or m0.n != m1.n:
        raise InvalidParameterError(
            "wlsmv_difference compares two fits to the same sample statistics; the two fits "
            "have different statistics or sample sizes"
        )
    if m0.df < m1.df:
        m0, m1 = m1, m0
    m = m0.df - m1.df
    if m == 0:
        return WLSMVDifference(m0.chisq - m1.chisq, 0, np.nan, np.nan, np.nan)
    j1, j0, w, gamma = m1.jacobian, m0.jacobian, m1.weight, m1.gamma
    h = np.linalg.pinv(j1) @ j0
    u_svd, sing, _ = np.linalg.svd(h)
    rank = int(np.sum(sing > sing[0] * max(h.shape) * np.finfo(float).eps)) if sing.size else 0
    a_mat = u_svd[:, rank:].T  # the restrictions: the left null space of H
    wj = w[:, None] * j1
    p_inv = np.linalg.inv(j1.T @ wj)
    apa = a_mat @ p_inv @ a_mat.T
    middle = p_inv @ a_mat.T @ np.linalg.pinv(apa) @ a_mat @ p_inv
    u_gamma = wj @ middle @ wj.T @ gamma
    trace = float(np.trace(u_gamma))
    trace2 = float(np.sum(u_gamma * u_gamma.T))
    a = float(np.sqrt(m / trace2))
    b = m - a * trace
    stat = (m0.chisq - m1.chisq) * a + b
    return WLSMVDifference(stat, m, float(special.chdtrc(m, stat)), a, b)


@dataclass(frozen=True)
class WLSMVScoreTests:
    """Score tests of the equality constraints of one WLSMV fit.

    Attributes
    ----------
    univariate : pandas.DataFrame
        One row per constraint, largest statistic first: ``lhs, op, rhs`` (the later wave's
        entry), ``first_lhs, first_op, first_rhs`` (the first wave's entry it is held equal
        to), ``statistic`` (lavaan's ``X2``), ``df`` (1) and ``p_value``.
    statistic, df, p_value : float
        The total test of every constraint at once (lavaan's ``$test``).
    """

    univariate: pd.DataFrame
    statistic: float
    df: int
    p_value: float


@one_blas_thread
def wlsmv_score_tests(fit: WLSMVFit, names: list) -> WLSMVScoreTests:
    """Return the score tests of the equality constraints of ``fit``.

    Parameters
    ----------
    fit : WLSMVFit
    names : list of str
        The variable names, wave by wave (the ``names`` of the sample statistics).

    Returns
    -------
    WLSMVScoreTests
    """
    if not isinstance(fit, WLSMVFit):
        raise InvalidParameterError(
            f"the `fit` parameter of wlsmv_score_tests must be a WLSMVFit; got {type(fit).__name__}"
        )
    spec = fit.spec
    columns = ["lhs", "op", "rhs", "first_lhs", "first_op", "first_rhs", "statistic", "df"]
    if not spec.constraints:
        return WLSMVScoreTests(pd.DataFrame(columns=[*columns, "p_value"]), np.nan, 0, np.nan)
    # every free entry its own parameter, at the constrained estimates
    order = list(spec.entries)
    position = {entry: index for index, entry in enumerate(order)}
    full = dataclasses.replace(spec, entries=position, n_params=len(order), constraints=[])
    shared = np.array([spec.entries[entry] for entry in order])
    implied = OrdinalModel(full).implied(fit.estimates[shared])
    wj = fit.weight[:, None] * implied.jacobian
    grad = -wj.T @ fit.residual
    info = implied.jacobian.T @ wj
    # lavaan's score statistic is (N - 1)^2 / N times the quadratic form in this gradient
    factor = (fit.n - 1) ** 2 / fit.n
    # the reduced parameterisation: full = basis @ reduced
    basis = np.zeros((len(order), spec.n_params))
    basis[np.arange(len(order)), shared] = 1.0
    factors = factor_names(names, spec.n_items, spec.n_waves)
    rows = []
    for later, first in spec.constraints:
        # release one constraint: the later entry leaves its group for a parameter of its own
        k_r = np.hstack([basis, np.zeros((len(order), 1))])
        k_r[position[later], shared[position[later]]] = 0.0
        k_r[position[later], -1] = 1.0
        g_r = k_r.T @ grad
        stat = factor * float(g_r @ np.linalg.pinv(k_r.T @ info @ k_r) @ g_r)
        rows.append(
            (
                *entry_label(later, names, factors, spec.n_items),
                *entry_label(first, names, factors, spec.n_items),
                stat,
                1,
            )
        )
    table = pd.DataFrame(rows, columns=columns)
    table["p_value"] = special.chdtrc(1, table["statistic"])
    table = table.sort_values("statistic", ascending=False, kind="stable").reset_index(drop=True)
    total = factor * float(grad @ np.linalg.pinv(info) @ grad)
    n_con = len(spec.constraints)
    return WLSMVScoreTests(table, total, n_con, float(special.chdtrc(n_con, total)))
