"""A smooth term ``s(x)`` in the cumulative link mixed model, as a penalised random effect.

The smooth is built as gamm4 builds it for the linear mixed model
(:func:`models.lmm._smooth.construct_smooth`: mgcv's basis, sum-to-zero constraint, scaled
penalty, ``smooth2random`` split): its null-space column (the linear trend) joins the fixed
effects, its ``k - 2`` penalised columns become one random-effect block of one level whose
covariance is ``sigma_s^2 I`` (one parameter, the engine's *scaled* block of
:class:`models.ordinal._laplace.Structure`). The Laplace likelihood is then maximised over the
thresholds, the fixed effects, the other random effects' factors and ``sigma_s`` together: the
smoothing parameter ``1 / sigma_s^2`` by maximum (Laplace) likelihood, where
``mgcv::gam(..., family = ocat)`` uses its Laplace approximate REML.

The curve's pointwise intervals use the joint covariance of the thresholds, fixed effects and
random effects at the conditional modes (the inverse of the negative Hessian of the penalised
log-likelihood ``sum_i l_i - u'u / 2`` in all of them, the variance parameters held at their
estimates), the Bayesian covariance mgcv and gamm4 report as ``Vp``; the effective degrees of
freedom are the trace of ``Vp`` times the unpenalised information over the smooth's
coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from models._errors import FormulaError, InvalidParameterError
from models.lmm import Smooth, SmoothTerm, construct_smooth, smooth_column

__all__ = ["OrdinalSmooth", "smooth_design", "smooth_result"]

_WHERE = "OrdinalMixedModel"


@dataclass(frozen=True)
class OrdinalSmooth:
    """The fitted smooth of an ordinal mixed model (latent scale).

    Attributes
    ----------
    label : str
        ``s(x)`` as mgcv writes it.
    smooth : Smooth
        Basis, constraint and penalty (:class:`models.lmm._smooth.Smooth`).
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
    smooth: Smooth
    variance: float
    sd: float
    edf: float
    coef: np.ndarray
    cov: np.ndarray

    def curve(self, x: np.ndarray, *, level: float = 0.95) -> pd.DataFrame:
        """Return the smooth at ``x`` on the latent scale with pointwise intervals.

        The curve sums to zero over the rows of the fit (mgcv's constraint; the thresholds hold
        the level). Returns ``x, fit, se, lower, upper`` with ``fit -+ z se``, ``z`` the normal
        quantile of ``level``.
        """
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or not np.all(np.isfinite(x)):
            raise InvalidParameterError(
                f"the `x` of {_WHERE}.smooth_.curve must be a 1-d array of finite numbers"
            )
        if not (isinstance(level, (int, float)) and 0.0 < float(level) < 1.0):
            raise InvalidParameterError(
                f"the `level` of {_WHERE}.smooth_.curve must be in (0, 1); got {level!r}"
            )
        B = self.smooth.basis(x)
        fit = B @ self.coef
        se = np.sqrt(np.clip(np.einsum("ij,ij->i", B @ self.cov, B), 0.0, None))
        z = float(special.ndtri(0.5 + float(level) / 2.0))
        return pd.DataFrame(
            {"x": x, "fit": fit, "se": se, "lower": fit - z * se, "upper": fit + z * se}
        )


def check_terms(terms: tuple[SmoothTerm, ...], formula: str) -> SmoothTerm:
    """Return the one smooth term an ordinal model accepts, or raise naming what is not."""
    odd = bool(terms) and (terms[0].by is not None or terms[0].factor is not None)
    if len(terms) != 1 or odd:
        raise FormulaError(
            f"{_WHERE}: {formula!r} holds {len(terms)} smooth term(s)"
            + (" with a by factor" if terms and terms[0].by is not None else "")
            + (" with a factor smooth" if terms and terms[0].factor is not None else "")
            + "; the ordinal mixed model takes one smooth s(x) (thin plate or bs='cr') "
            "without by"
        )
    return terms[0]


def smooth_design(design, used: pd.DataFrame, term: SmoothTerm):
    """Construct the smooth on the design's rows: its fixed column and its random block.

    Returns the smooth, the design with the null-space column appended to ``X`` (named as
    gamm4 names it, ``Xs(x)Fx1``) and the block ``(label, codes, 1, Z)`` of its penalised part.
    """
    from dataclasses import replace

    x = used.loc[design.rows, term.column].to_numpy(dtype=float)
    smooth_column(pd.DataFrame({term.column: x}), term)
    smooth, Xs = construct_smooth(x, term)
    Xr = Xs @ smooth.UD
    X = design.X.copy()
    X[f"X{term.label}Fx1"] = Xr[:, smooth.rank]
    block = (term.label, np.zeros(len(x), dtype=np.int64), 1, Xr[:, : smooth.rank])
    return smooth, replace(design, X=X), block


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


def smooth_result(
    pr, md, psi: np.ndarray, term: SmoothTerm, smooth: Smooth, block: int, sd: float
) -> OrdinalSmooth:
    """Return the fitted smooth at ``psi``: coefficients, Bayesian covariance and edf.

    ``block`` is the smooth's random block in the engine's structure, ``sd`` its ``sigma_s``;
    the null-space column is the last fixed effect.
    """
    st = pr.st
    info, pos = joint_information(pr, md)
    na, p = pr.n_alpha, pr.p
    Vp = np.linalg.inv(info)
    u = np.concatenate([md.uF, md.uR])
    s0 = st.slot_start[block]
    cols = pos[0, s0 : s0 + smooth.rank]  # one level: every row holds the same positions
    idx = np.r_[na + p + cols, na + p - 1]  # penalised part, then the null-space column
    scale = np.r_[np.full(smooth.rank, sd), 1.0]
    coef_r = np.r_[sd * u[cols], psi[na + p - 1]]
    cov_r = Vp[np.ix_(idx, idx)] * np.outer(scale, scale)
    unpen = info.copy()
    unpen[na + p :, na + p :] -= np.eye(u.size)
    edf = float(np.trace((Vp @ unpen)[np.ix_(idx, idx)]))
    cov = smooth.UD @ cov_r @ smooth.UD.T
    return OrdinalSmooth(
        label=term.label,
        smooth=smooth,
        variance=sd**2,
        sd=sd,
        edf=edf,
        coef=smooth.UD @ coef_r,
        cov=(cov + cov.T) / 2.0,
    )
