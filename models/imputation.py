"""Multiple imputation of a numeric table by chained equations with predictive mean matching.

:func:`impute_chained` runs statsmodels' :class:`~statsmodels.imputation.mice.MICEData` (each
incomplete column regressed on all others, the coefficients drawn from their approximate
posterior, each missing cell filled with the observed value of one of the ``donors`` cases
whose predictions are nearest: predictive mean matching), one independent seeded chain per
imputation, as ``mice`` runs its m chains. How many imputations: given, or von Hippel's
(2020) two-stage rule (:func:`imputations_needed`): a pilot of 20 imputations estimates the
fraction of missing information of every column's mean, and ``m = 1 + (1/2) (fmi / cv)^2``
with the upper end of the fmi's interval keeps the coefficient of variation of the standard
errors near ``cv``. The m completed tables are analysed one by one and pooled with
:func:`models.pool_imputations`.

Rows nested in clusters (sessions within participants) are imputed by the ``"2l.norm"``
method: each incomplete column from a linear mixed model with a random intercept per cluster
(``models/_two_level.py``), as ``mice``'s ``2l.lmer`` (Jolani 2018).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.results import Result, json_ready
from _empathic_base.words import parameter
from models._checks import check_int, check_seed, check_unit
from models._errors import InvalidParameterError

__all__ = ["PILOT_IMPUTATIONS", "ImputedTables", "impute_chained", "imputations_needed"]

PILOT_IMPUTATIONS = 20
"""Imputations of the pilot stage of von Hippel's rule (his suggestion)."""

_WHERE = "impute_chained"


@dataclass(frozen=True, repr=False)
class ImputedTables(Result):
    """m completed copies of a table.

    Attributes
    ----------
    datasets : list of pandas.DataFrame
        The completed tables, with the index and columns of the input.
    missing : pandas.DataFrame
        ``column, n_missing, share_missing`` of the input.
    m : int
        Imputations.
    m_reason : str
        How ``m`` was chosen.
    fmi_pilot : float
        The largest fraction of missing information of a column mean in the pilot (NaN when
        ``m`` was given).
    seed : int or None
        The seed of the chains.
    burn_in, donors : int
        Cycles per chain; candidate donors of predictive mean matching.
    method : str
        ``"pmm"``, ``"norm"`` or ``"2l.norm"`` (see :func:`impute_chained`).
    cluster : str or None
        The cluster column of ``"2l.norm"``.
    """

    datasets: list[pd.DataFrame]
    missing: pd.DataFrame
    m: int
    m_reason: str
    fmi_pilot: float
    seed: int | None
    burn_in: int
    donors: int
    method: str = "pmm"
    cluster: str | None = None

    def _title(self) -> str:
        return f"ImputedTables(m = {self.m}, {int(self.missing['n_missing'].sum())} cells)"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Missing cells per column", self.missing)]

    def to_dict(self) -> dict[str, Any]:
        """Return how the tables were imputed (not the tables) as JSON-ready data."""
        return json_ready(
            {
                "m": self.m,
                "m_reason": self.m_reason,
                "fmi_pilot": self.fmi_pilot,
                "seed": self.seed,
                "burn_in": self.burn_in,
                "donors": self.donors,
                "method": "chained equations (statsmodels MICEData), " + _METHOD_WORDS[self.method],
                "cluster": self.cluster,
                "missing": self.missing.to_dict(orient="records"),
            }
        )


IMPUTATION_METHODS = ("pmm", "norm", "2l.norm")
"""How :func:`impute_chained` draws a missing cell."""

_METHOD_WORDS = {
    "pmm": "predictive mean matching",
    "norm": "Bayesian linear regression (norm)",
    "2l.norm": "two-level normal model with a random intercept per cluster (2l.norm)",
}


def imputations_needed(
    fmi: float, *, m_pilot: int, cv: float = 0.05, ci_level: float = 0.95
) -> int:
    """Return von Hippel's (2020) number of imputations for a pilot's fraction of missing info.

    Parameters
    ----------
    fmi : float
        The fraction of missing information estimated from the pilot, in (0, 1).
    m_pilot : int
        Imputations of the pilot.
    cv : float, default 0.05
        The coefficient of variation of the standard error to reach.
    ci_level : float, default 0.95
        Level of the interval whose upper end is used: ``logit(fmi) +- z sqrt(2 / m_pilot)``.

    Returns
    -------
    int
        ``ceil(1 + (1/2) (fmi_upper / cv)^2)``.

    Examples
    --------
    >>> from models.imputation import imputations_needed
    >>> imputations_needed(0.3, m_pilot=20)
    41
    """
    if not (isinstance(fmi, numbers.Real) and 0 < fmi < 1):
        raise InvalidParameterError(
            f"{parameter('fmi', 'imputations_needed')} must be in (0, 1); got {fmi!r}"
        )
    check_int(m_pilot, name="m_pilot", where="imputations_needed", minimum=2)
    check_unit(cv, name="cv", where="imputations_needed")
    level = check_unit(ci_level, name="ci_level", where="imputations_needed")
    z = special.ndtri(0.5 + level / 2)
    upper = special.expit(special.logit(fmi) + z * math.sqrt(2 / m_pilot))
    return math.ceil(1 + 0.5 * (upper / cv) ** 2)


def impute_chained(
    data: pd.DataFrame,
    *,
    m: int | None = None,
    seed: int | None = None,
    burn_in: int = 10,
    donors: int = 5,
    method: str = "pmm",
    cluster: str | None = None,
) -> ImputedTables:
    """Impute the missing cells of a numeric table m times by chained equations.

    Parameters
    ----------
    data : pandas.DataFrame
        Numeric columns (at least two), one row per unit (a participant's scores at every
        wave, say); every column has at least ``donors`` observed values. With ``cluster``,
        one row per unit within a cluster (a session within a participant) and the cluster
        column besides, of any type and complete.
    m : int, optional
        Imputations (at least 2). None: von Hippel's two-stage rule on the column means
        (:func:`imputations_needed`, ``cv = 0.05``), at least :data:`PILOT_IMPUTATIONS`.
    seed : int, optional
        Seed of the chains (chain ``i`` draws from the ``i``-th child of the seed): the same
        seed gives the same tables.
    burn_in : int, default 10
        Cycles through the incomplete columns per chain; each imputation is a chain's last.
        ``2l.norm`` with a single incomplete column runs one cycle (the others being
        complete, every cycle would draw from the same model).
    donors : int, default 5
        Observed cases whose predictions are nearest, one of which gives each imputed value
        (``mice``'s default 5; statsmodels' ``k_pmm``).
    method : {"pmm", "norm", "2l.norm"}, default "pmm"
        How a missing cell is drawn from its column's regression on the others: ``pmm``,
        predictive mean matching (an observed value of a donor, so imputations stay on the
        scale; ``mice``'s default); ``norm``, Bayesian linear regression (Rubin 1987, p. 167;
        ``mice``'s ``norm``): sigma drawn from its scaled inverse chi-square posterior, the
        coefficients from their normal posterior given it, the cell from the fitted normal.
        PMM cannot impute beyond the observed values, so when those who dropped out lie at
        the edge of the observed range it pulls their imputations inwards (in
        benchmarks/sim_imputation_coverage.py, 500 panels with 37% dropout driven by the
        first wave: PMM's 95% intervals cover 92.0% and its change is 0.039 too small;
        ``norm`` covers 95%). ``2l.norm``, for rows nested in the clusters of ``cluster``: a
        linear mixed model of the column on the others and on their cluster means (the
        columns that vary within clusters; Enders, Mistler & Keller 2016), with a random
        intercept per cluster and one residual variance, as ``mice``'s ``2l.lmer`` (Jolani
        2018; ``mice``'s own ``2l.norm`` lets the residual variance differ by cluster). At
        each step its parameters are drawn from their posterior given the observed cells
        (flat prior on the fixed effects, ``1 / sigma2`` on the residual variance, the
        uniform shrinkage prior on the variance ratio): the variance ratio from its marginal
        posterior on a grid, the residual variance from its scaled inverse chi-square, the
        fixed effects from their normal posterior, each cluster's random intercept from its
        conditional posterior given its observed cells; each missing cell from the normal
        around its prediction. A single-level method ignores the clusters and so shrinks
        the differences between them: in benchmarks/sim_two_level_imputation.py (500
        studies of 50 participants, a third of the ratings missing at random given an
        auxiliary measure) the between-participant variance of the completed data is 101%
        of the study's own before deletion with ``2l.norm`` and 80% with ``norm``, and the
        95% intervals of the pooled slope and mean cover 95.6% and 95.4%.
    cluster : str, optional
        The column of ``data`` naming each row's cluster; required by ``2l.norm`` and only
        used by it. It is never imputed, and a column constant within every cluster (a
        person-level score) cannot be imputed here: impute it in the one-row-per-cluster
        table.

    Returns
    -------
    ImputedTables
        ``datasets``, the m completed tables (the cluster column in its place).

    Notes
    -----
    ``2l.norm`` fills the missing cells of a two-level table, for instance the ratings or
    the behaviour of some sessions. The linear mixed model of those ratings already uses
    every observed rating, and under missingness at random given its own predictors it is
    unbiased without imputation: imputing the ratings themselves adds something only when
    the imputation model holds auxiliary columns that the analysis leaves out (a measure
    that predicts both the rating and whether it is missing).
    """
    seed = check_seed(seed, where=_WHERE)
    burn_in = check_int(burn_in, name="burn_in", where=_WHERE, minimum=1)
    donors = check_int(donors, name="donors", where=_WHERE, minimum=1)
    if method not in IMPUTATION_METHODS:
        raise InvalidParameterError(
            f"{parameter('method', _WHERE)} must be one of {', '.join(IMPUTATION_METHODS)}; "
            f"got {method!r}"
        )
    codes, data_cols = _check_cluster(data, cluster, method)
    frame = _check_table(data[data_cols] if codes is not None else data, donors, method)
    if codes is not None:
        _check_row_level(frame, codes)
    if m is not None:
        m = check_int(m, name="m", where=_WHERE, minimum=2)
    seeds = np.random.SeedSequence(seed)
    inner = frame.set_axis([f"c{i}" for i in range(frame.shape[1])], axis=1)

    def chains(k: int) -> list[pd.DataFrame]:
        return [_chain(inner, child, burn_in, donors, method, codes) for child in seeds.spawn(k)]

    fmi_pilot = math.nan
    if m is None:
        tables = chains(PILOT_IMPUTATIONS)
        fmi_pilot = _largest_fmi(tables)
        needed = imputations_needed(fmi_pilot, m_pilot=PILOT_IMPUTATIONS) if fmi_pilot > 0 else 2
        m = max(PILOT_IMPUTATIONS, needed)
        tables += chains(m - PILOT_IMPUTATIONS)
        reason = (
            f"von Hippel's (2020) two-stage rule: the largest fraction of missing information "
            f"of a column mean in {PILOT_IMPUTATIONS} pilot imputations is {fmi_pilot:.3f}, "
            f"which needs {needed} imputations for a 5% coefficient of variation of the "
            f"standard errors; {m} made (at least the pilot's)"
        )
    else:
        tables = chains(m)
        reason = "given"
    # MICEData numbers the rows from 0: the input's index and columns are put back
    datasets = [t.set_axis(frame.columns, axis=1).set_axis(frame.index, axis=0) for t in tables]
    if codes is not None:
        for table in datasets:
            table[cluster] = data[cluster]
        datasets = [t[list(data.columns)] for t in datasets]
    n_missing = frame.isna().sum()
    missing = pd.DataFrame(
        {
            "column": [str(c) for c in frame.columns],
            "n_missing": n_missing.to_numpy(dtype="int64"),
            "share_missing": (n_missing / len(frame)).to_numpy(dtype=float),
        }
    )
    return ImputedTables(
        datasets=datasets,
        missing=missing,
        m=m,
        m_reason=reason,
        fmi_pilot=fmi_pilot,
        seed=seed,
        burn_in=burn_in,
        donors=donors,
        method=method,
        cluster=cluster,
    )


def _check_cluster(data: Any, cluster: Any, method: str) -> tuple[np.ndarray | None, list]:
    """Return the cluster codes (None without a cluster) and the other columns."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"{parameter('data', _WHERE)} must be a pandas DataFrame; got {type(data).__name__}"
        )
    if method != "2l.norm":
        if cluster is not None:
            raise InvalidParameterError(
                f"{parameter('cluster', _WHERE)} is used only by method '2l.norm'; got "
                f"method {method!r} with cluster {cluster!r}: leave cluster out or ask for "
                "'2l.norm'"
            )
        return None, list(data.columns)
    if cluster is None or cluster not in data.columns:
        raise InvalidParameterError(
            f"{parameter('cluster', _WHERE)} must name a column of data for method "
            f"'2l.norm'; got {cluster!r}"
        )
    if data[cluster].isna().any():
        raise InvalidParameterError(
            f"the cluster column {cluster!r} of {parameter('data', _WHERE)} has "
            f"{int(data[cluster].isna().sum())} missing values: every row needs its cluster"
        )
    codes, levels = pd.factorize(data[cluster], sort=True)
    if len(levels) < 3:
        raise InvalidParameterError(
            f"the cluster column {cluster!r} of {parameter('data', _WHERE)} has "
            f"{len(levels)} clusters; a random intercept needs at least 3"
        )
    return codes.astype(np.intp), [c for c in data.columns if c != cluster]


def _check_table(data: pd.DataFrame, donors: Any, method: str) -> pd.DataFrame:
    """Return ``data`` as floats, refusing what chained equations cannot impute."""
    text = [c for c in data.columns if not pd.api.types.is_numeric_dtype(data[c])]
    if text or data.shape[1] < 2:
        raise InvalidParameterError(
            f"{parameter('data', _WHERE)} must have two or more numeric columns"
            + (" besides the cluster" if method == "2l.norm" else "")
            + (f"; not numeric: {text}" if text else f"; got {data.shape[1]}")
        )
    frame = data.astype(float)
    if np.isinf(frame.to_numpy()).any():
        raise InvalidParameterError(f"{parameter('data', _WHERE)} holds infinite values")
    empty = frame.index[frame.isna().all(axis=1)]
    if len(empty):
        raise InvalidParameterError(
            f"{len(empty)} rows of {parameter('data', _WHERE)} have every column missing "
            f"(first: {list(empty[:5])}): nothing to impute them from; leave them out"
        )
    few = frame.notna().sum()
    need = donors if isinstance(donors, int) else 1
    thin = [str(c) for c in frame.columns if few[c] < max(need, 2)]
    if thin:
        raise InvalidParameterError(
            f"columns {thin} of {parameter('data', _WHERE)} have fewer than {max(need, 2)} "
            "observed values: nothing to match an imputation to"
        )
    incomplete = [c for c in frame.columns if frame[c].isna().any()]
    # 2l.norm regresses on the others and on their cluster means
    width = frame.shape[1] + 1 if method != "2l.norm" else 2 * frame.shape[1]
    short = [str(c) for c in incomplete if few[c] < width + 1]
    if short:
        raise InvalidParameterError(
            f"columns {short} of {parameter('data', _WHERE)} have fewer observed values than "
            f"the {width + 1} their regression on the other {frame.shape[1] - 1} "
            "columns needs (an intercept, the predictors and two residual df): impute fewer "
            "columns together"
        )
    if method == "2l.norm":
        flat = [str(c) for c in frame.columns if frame[c].nunique() < 2]
        if flat:
            raise InvalidParameterError(
                f"columns {flat} of {parameter('data', _WHERE)} have one observed value: "
                "a constant says nothing about the others; leave it out"
            )
    return frame


def _check_row_level(frame: pd.DataFrame, codes: np.ndarray) -> None:
    """Refuse an incomplete column that is constant within every cluster (a cluster score)."""
    flat = []
    for column in frame.columns:
        values = frame[column]
        if not values.isna().any():
            continue
        by = values.groupby(codes)
        if (by.count() > 1).any() and not ((by.max() - by.min()) > 0).any():
            flat.append(str(column))
    if flat:
        raise InvalidParameterError(
            f"columns {flat} of {parameter('data', _WHERE)} are constant within every "
            "cluster: a cluster-level score is imputed in the table with one row per cluster, "
            "not by '2l.norm'"
        )


def _chain(
    frame: pd.DataFrame,
    seed: np.random.SeedSequence,
    burn_in: int,
    donors: int,
    method: str,
    codes: np.ndarray | None = None,
):
    """Return one completed table: one seeded chain of ``burn_in`` cycles."""
    chain = _main_effects_class()(frame, k_pmm=donors, rng=np.random.default_rng(seed))
    chain.method = method
    chain.codes = codes
    incomplete = int(frame.isna().any().sum())
    if incomplete:
        # 2l.norm fits each update to the observed cells: with one incomplete column a later
        # cycle would only draw again from the same model
        chain.update_all(1 if method == "2l.norm" and incomplete == 1 else burn_in)
    return chain.data.copy()


def _largest_fmi(tables: list[pd.DataFrame]) -> float:
    """Return the largest fraction of missing information of a column mean over ``tables``."""
    from models.pooling import pool_imputations

    n = len(tables[0])
    pairs = []
    for t in tables:
        means = t.mean()
        cov = pd.DataFrame(
            np.diag(t.var(ddof=1).to_numpy() / n), index=means.index, columns=means.index
        )
        pairs.append((means, cov))
    fmi = pool_imputations(pairs, df="barnard-rubin", dfcom=n - 1).to_frame()["fmi"]
    return float(np.nanmax(fmi.to_numpy())) if fmi.notna().any() else 0.0


def _cluster_means(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Return the columns of ``values`` that vary within clusters, as their cluster means."""
    counts = np.bincount(codes).astype(float)
    means = np.column_stack(
        [np.bincount(codes, weights=v) / np.maximum(counts, 1.0) for v in values.T]
    )[codes]
    varies = ~np.all(np.isclose(values, means, rtol=0.0, atol=1e-12), axis=0)
    return means[:, varies]


@functools.cache
def _main_effects_class() -> Any:
    """Return the MICEData subclass (statsmodels imported on first use)."""
    from statsmodels.imputation.mice import MICEData

    from models._two_level import draw_missing

    class MainEffects(MICEData):
        """MICEData with its default model (every other column, linear) built by NumPy.

        The same regressions as MICEData's default formulas, without building the design
        through a formula at every update (the bulk of the time on small tables); for
        ``2l.norm`` the others' cluster means are added.
        """

        def _design(self, vname: str) -> tuple[np.ndarray, np.ndarray]:
            values = self.data.to_numpy(dtype=float)
            j = list(self.data.columns).index(vname)
            others = np.delete(values, j, axis=1)
            parts = [np.ones(len(values)), others]
            if getattr(self, "method", "pmm") == "2l.norm":
                parts.append(_cluster_means(others, self.codes))
            return values[:, j], np.column_stack(parts)

        def get_fitting_data(self, vname):  # noqa: D102 (MICEData's contract)
            y, x = self._design(vname)
            ix = self.ix_obs[vname]
            return y[ix].copy(), x[ix].copy(), {}, {}

        def get_split_data(self, vname):  # noqa: D102 (MICEData's contract)
            y, x = self._design(vname)
            ixo, ixm = self.ix_obs[vname], self.ix_miss[vname]
            return y[ixo].copy(), x[ixo].copy(), x[ixm].copy(), {}, {}

        def update(self, vname):  # noqa: D102 (MICEData's contract)
            method = getattr(self, "method", "pmm")
            if method == "pmm":
                super().update(vname)
                return
            y, x, x_miss, _, _ = self.get_split_data(vname)
            if method == "2l.norm":
                ixo, ixm = self.ix_obs[vname], self.ix_miss[vname]
                values = draw_missing(
                    y,
                    x,
                    self.codes[ixo],
                    x_miss,
                    self.codes[ixm],
                    n_groups=int(self.codes.max()) + 1,
                    rng=self.rng,
                )
                self._store_changes(vname, values)
                return
            # MICEData imputes by PMM only: the Bayesian normal draw is written here
            beta, _, _, _ = np.linalg.lstsq(x, y, rcond=None)
            df = len(y) - x.shape[1]
            rss = float(np.sum((y - x @ beta) ** 2))
            sigma = math.sqrt(rss / self.rng.chisquare(df))
            q, r = np.linalg.qr(x)
            draw = beta + sigma * np.linalg.solve(r, self.rng.standard_normal(len(beta)))
            values = x_miss @ draw + sigma * self.rng.standard_normal(len(x_miss))
            self._store_changes(vname, values)

    return MainEffects
