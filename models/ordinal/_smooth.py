"""Smooth terms ``s(x)`` in the cumulative link mixed model, as penalised random effects.

Each smooth is built as gamm4 builds it for the linear mixed model
(:func:`models.lmm.smooth_parts`: mgcv's basis, sum-to-zero constraint, scaled penalty,
``smooth2random`` split; a smooth ``by`` a factor is one smooth per level, its columns the
smooth's times the level's indicator): its null-space column (the linear trend) joins the fixed
effects, its ``k - 2`` penalised columns become one random-effect block of one level whose
covariance is ``sigma_s^2 I`` (one parameter, a *scaled* block of
:class:`models.ordinal._laplace.Structure`). Every smooth, and every level of a ``by`` factor,
has its own block and so its own variance, as mgcv gives each its own smoothing parameter. The
Laplace likelihood is then maximised over the thresholds, the fixed effects, the other random
effects' factors and every ``sigma_s`` together: the smoothing parameters ``1 / sigma_s^2`` by
maximum (Laplace) likelihood, where ``mgcv::gam(..., family = ocat)`` uses its Laplace
approximate REML.

The curves' pointwise intervals use the joint covariance of the thresholds, fixed effects and
random effects at the conditional modes (the inverse of the negative Hessian of the penalised
log-likelihood ``sum_i l_i - u'u / 2`` in all of them, the variance parameters held at their
estimates), the Bayesian covariance mgcv and gamm4 report as ``Vp``; the effective degrees of
freedom of a smooth are the trace of ``Vp`` times the unpenalised information over its
coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from models._errors import FormulaError, InvalidParameterError
from models.lmm import (
    SmoothPart,
    SmoothTerm,
    by_column,
    check_by_main_effect,
    pick_smooth,
    smooth_column,
    smooth_parts,
)

__all__ = [
    "OrdinalSmooth",
    "OrdinalSmoothFit",
    "check_terms",
    "smooth_design",
    "smooth_results",
    "smooth_rows",
]

_WHERE = "OrdinalMixedModel"


@dataclass(frozen=True)
class OrdinalSmooth:
    """One fitted smooth of an ordinal mixed model, or one level of a ``by`` smooth.

    Attributes
    ----------
    label : str
        mgcv's label: ``s(x)``, or ``s(x):fLEVEL`` for the level of a ``by`` factor ``f``.
    smooth : Smooth
        Basis, constraint and penalty (:class:`models.lmm.Smooth`).
    level : object or None
        The ``by`` factor's level this smooth belongs to (None without ``by``).
    variance : float
        ``sigma_s^2``, the variance of its penalised coefficients (``1 / sp`` in mgcv's terms,
        the latent scale's own scale being fixed by the link).
    sd : float
        ``sigma_s``.
    edf : float
        Effective degrees of freedom (its null-space column included, as mgcv counts).
    coef : numpy.ndarray
        Its ``k - 1`` constrained coefficients (mgcv's ``coef`` of the smooth): the null-space
        estimate and the conditional modes of the penalised part.
    cov : numpy.ndarray
        Their Bayesian covariance (the smooth's block of ``Vp``).
    """

    label: str
    smooth: Any
    level: Any
    variance: float
    sd: float
    edf: float
    coef: np.ndarray
    cov: np.ndarray

    @property
    def by(self) -> str | None:
        """The ``by`` factor's column, or None."""
        return self.smooth.term.by

    def design(self, x: np.ndarray, by: np.ndarray | None = None) -> np.ndarray:
        """Its model-matrix columns at ``x`` (zero on rows outside its ``by`` level)."""
        B = self.smooth.basis(x)
        if self.by is None:
            return B
        return B * (np.asarray(by, dtype=object) == self.level)[:, None]


@dataclass(frozen=True)
class OrdinalSmoothFit:
    """The fitted smooths of an ordinal mixed model (latent scale), in formula order.

    Attributes
    ----------
    smooths : tuple of OrdinalSmooth
        One per smooth term, one per level for a smooth ``by`` a factor.
    """

    smooths: tuple[OrdinalSmooth, ...]

    @property
    def labels(self) -> list[str]:
        """The smooths' labels, in order."""
        return [s.label for s in self.smooths]

    def component(self, term: str | int | None = None) -> OrdinalSmooth:
        """Return the smooth named by its label (``"s(x)"``) or position (None: the only one)."""
        return pick_smooth(self.smooths, term, where=f"{_WHERE}.smooth_: ")

    def curve(
        self, x: np.ndarray, *, term: str | int | None = None, level: float = 0.95
    ) -> pd.DataFrame:
        """Return one smooth at ``x`` on the latent scale with pointwise intervals.

        The curve is mgcv's centred smooth (``predict(type = "terms")``): it sums to zero over
        the rows of the fit, a ``by`` level's smooth as if every row were of that level (the
        thresholds and the level's main effect hold the levels). ``term`` names the smooth by
        its label or position (may be left out when there is one). Returns ``x, fit, se,
        lower, upper`` with ``fit -+ z se``, ``z`` the normal quantile of ``level``.
        """
        part = self.component(term)
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or not np.all(np.isfinite(x)):
            raise InvalidParameterError(
                f"the `x` of {_WHERE}.smooth_.curve must be a 1-d array of finite numbers"
            )
        if not (isinstance(level, (int, float)) and 0.0 < float(level) < 1.0):
            raise InvalidParameterError(
                f"the `level` of {_WHERE}.smooth_.curve must be in (0, 1); got {level!r}"
            )
        B = part.smooth.basis(x)
        fit = B @ part.coef
        se = np.sqrt(np.clip(np.einsum("ij,ij->i", B @ part.cov, B), 0.0, None))
        z = float(special.ndtri(0.5 + float(level) / 2.0))
        return pd.DataFrame(
            {"x": x, "fit": fit, "se": se, "lower": fit - z * se, "upper": fit + z * se}
        )

    def linear_predictor(self, frame: pd.DataFrame) -> np.ndarray:
        """Return the smooths' sum on the rows of ``frame`` (their columns complete).

        A ``by`` value not among the levels of the fit is refused: it has no smooth.
        """
        eta = np.zeros(len(frame))
        for by in dict.fromkeys(s.by for s in self.smooths if s.by is not None):
            known = [s.level for s in self.smooths if s.by == by]
            unseen = ~frame[by].isin(known).to_numpy()
            if unseen.any():
                raise InvalidParameterError(
                    f"{_WHERE}.predict: the by= factor {by!r} has values not in the fit "
                    f"({list(pd.unique(frame[by][unseen]))[:5]}); its levels are {known}"
                )
        for s in self.smooths:
            x = frame[s.smooth.term.column].to_numpy(dtype=float)
            by = None if s.by is None else frame[s.by].to_numpy(dtype=object)
            eta += s.design(x, by) @ s.coef
        return eta


def check_terms(terms: tuple[SmoothTerm, ...], formula: str, data: pd.DataFrame) -> list[str]:
    """Check the smooth terms an ordinal model takes; return the columns they read.

    Any number of ``s(x)`` (thin plate or ``bs="cr"``), each possibly ``by`` a factor; a
    factor smooth (``bs="fs"``) is refused.
    """
    for term in terms:
        if term.factor is not None:
            raise FormulaError(
                f"{_WHERE}: {term.text!r} in {formula!r} is a factor smooth; the ordinal mixed "
                "model takes smooths s(x) (thin plate or bs='cr'), each possibly by= a factor, "
                "beside its random effects"
            )
        smooth_column(data, term)
        if term.by is not None:
            by_column(data, term)
    return list(dict.fromkeys([t.column for t in terms] + [t.by for t in terms if t.by]))


def smooth_rows(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Return the rows of ``data`` whose smooth columns and ``by`` factors are present."""
    return data[data[columns].notna().all(axis=1)]


def smooth_design(design, used: pd.DataFrame, terms: tuple[SmoothTerm, ...], formula: str):
    """Construct the smooths on the design's rows: their fixed columns and random blocks.

    A ``by`` factor's main effect must be in the fixed part (``formula`` names the model).
    Returns the parts (one per smooth, one per level of a ``by`` smooth), the design with each
    part's null-space column appended to ``X`` (named as gamm4 names it, ``Xs(x)Fx1``) and the
    blocks ``(label, codes, 1, Z)`` of their penalised parts, in the same order.
    """
    for term in terms:
        if term.by is not None:
            check_by_main_effect(term, design.spec.fixed, formula)
    parts: list[SmoothPart] = smooth_parts(design, used, terms)
    X = design.X.copy()
    blocks = []
    for part in parts:
        XU = part.X @ part.smooth.UD
        rank = part.smooth.rank
        X[f"X{part.label}Fx1"] = XU[:, rank]
        blocks.append((part.label, np.zeros(len(XU), dtype=np.int64), 1, XU[:, :rank]))
    return parts, replace(design, X=X), blocks


def _threshold_maps(pr) -> tuple[np.ndarray, np.ndarray]:
    """``d theta_upper / d alpha`` and ``d theta_lower / d alpha`` per observation."""
    J1 = pr.J - 1
    C = np.column_stack([np.ones(J1), np.arange(J1)]) if pr.equidistant else np.eye(J1)
    up = np.zeros((len(pr.y), pr.n_alpha))
    lo = np.zeros((len(pr.y), pr.n_alpha))
    up[pr.has_up] = C[pr.y[pr.has_up]]
    lo[pr.has_lo] = C[pr.y[pr.has_lo] - 1]
    return up, lo


def joint_information(pr, md) -> tuple[np.ndarray, np.ndarray]:
    """Negative Hessian of ``sum_i l_i - u'u / 2`` in ``(alpha, beta, u)`` at the modes.

    Returns it and the positions (in ``u``) of each observation's coefficients, ``n x m``.
    """
    st, d = pr.st, md.derivs
    q = st.qF + st.r
    pos = np.hstack([st.pos_F, st.qF + st.pos_R]) if st.mR else st.pos_F
    A = np.zeros((st.n, q))
    np.add.at(A, (np.arange(st.n)[:, None], pos), md.a)
    M = np.hstack([pr.X, A])
    up, lo = _threshold_maps(pr)
    # second derivatives of l_i in the two thresholds, from those obs_derivs keeps
    l_ab = -d.w + d.d1_up + d.d1_lo
    l_aa = -d.d1_up - l_ab
    l_bb = -d.d1_lo - l_ab
    H_aa = (
        up.T @ (l_aa[:, None] * up)
        + up.T @ (l_ab[:, None] * lo)
        + lo.T @ (l_ab[:, None] * up)
        + lo.T @ (l_bb[:, None] * lo)
    )
    H_am = up.T @ (d.d1_up[:, None] * M) + lo.T @ (d.d1_lo[:, None] * M)
    H_mm = -M.T @ (d.w[:, None] * M)
    na, p = pr.n_alpha, pr.p
    H = np.block([[H_aa, H_am], [H_am.T, H_mm]])
    H[na + p :, na + p :] -= np.eye(q)
    return -H, pos


def smooth_results(
    pr, md, psi: np.ndarray, parts: list[SmoothPart], Ts: list[np.ndarray], first_block: int
) -> OrdinalSmoothFit:
    """Return the fitted smooths at ``psi``: coefficients, Bayesian covariance and edf.

    ``parts[j]``'s penalised part is the engine's random block ``first_block + j`` (``Ts`` its
    factors ``sigma_s I``); the null-space columns are the last ``len(parts)`` fixed effects.
    """
    st = pr.st
    info, pos = joint_information(pr, md)
    na, p = pr.n_alpha, pr.p
    Vp = np.linalg.inv(info)
    u = np.concatenate([md.uF, md.uR])
    unpen = info.copy()
    unpen[na + p :, na + p :] -= np.eye(u.size)
    VU = Vp @ unpen
    out = []
    for j, part in enumerate(parts):
        smooth, block = part.smooth, first_block + j
        sd = float(Ts[block][0, 0])
        s0 = st.slot_start[block]
        cols = pos[0, s0 : s0 + smooth.rank]  # one level: every row holds the same positions
        null = na + p - len(parts) + j
        idx = np.r_[na + p + cols, null]  # penalised part, then the null-space column
        scale = np.r_[np.full(smooth.rank, sd), 1.0]
        coef_r = np.r_[sd * u[cols], psi[null]]
        cov_r = Vp[np.ix_(idx, idx)] * np.outer(scale, scale)
        cov = smooth.UD @ cov_r @ smooth.UD.T
        out.append(
            OrdinalSmooth(
                label=part.label,
                smooth=smooth,
                level=part.level,
                variance=sd**2,
                sd=sd,
                edf=float(np.trace(VU[np.ix_(idx, idx)])),
                coef=smooth.UD @ coef_r,
                cov=(cov + cov.T) / 2.0,
            )
        )
    return OrdinalSmoothFit(tuple(out))
