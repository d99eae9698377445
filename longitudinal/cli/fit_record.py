"""One JSON record for a mixed model fitted by any engine (the ``longitudinal fit`` output).

Every engine writes the same keys, :data:`COMMON_KEYS`, in that order, with ``None`` where a
key does not apply (``loglik`` for the sampler, ``divergences`` for the likelihood engines,
``thresholds`` for gaussian models); what only one engine has follows them.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal._output import json_safe

__all__ = [
    "COMMON_KEYS",
    "FIXED_KEYS",
    "SMOOTH_KEYS",
    "fit_record",
    "parse_emmeans_spec",
    "post_hoc",
    "summary_text",
]

COMMON_KEYS = (
    "engine",
    "family",
    "formula",
    "n_obs",
    "groups",
    "converged",
    "fixed",
    "random",
    "thresholds",
    "loglik",
    "divergences",
    "r_hat_max",
    "ess_bulk_min",
    "seconds",
)
"""Keys every engine writes, in order."""

FIXED_KEYS = ("term", "estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high")
"""Keys of each row of ``fixed`` (the sampler adds ``r_hat`` and ``ess_bulk``)."""

SMOOTH_KEYS = ("term", "edf", "ref_df", "F", "p_value", "linearity_statistic", "linearity_p_value")
"""Keys of each row of ``smooths`` (a linear model with smooth terms): ``summary(gam)$s.table``,
then the test of the smooth against its straight line (the restricted likelihood-ratio
statistic and its p-value, :meth:`models.lmm.LinearMixedModel.smooth_linearity_test`; None for
an ML fit and for a factor smooth ``s(x, f, bs="fs", xt="cr")``, whose row is mgcv's test of
it as a random effect)."""

LINEARITY_SEED = 1
"""Seed of the simulated null distribution of the linearity tests: a record is reproducible."""


def _rows(frame: pd.DataFrame, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    out = []
    for rec in frame.to_dict(orient="records"):
        out.append({k: (str(rec[k]) if k == "term" else json_safe(rec.get(k))) for k in keys})
    return out


def fit_record(model: Any) -> dict[str, Any]:
    """Build the common record of a fitted linear, ordinal or Bayesian mixed model.

    Parameters
    ----------
    model : fitted model
        One of the package's three mixed models.

    Returns
    -------
    dict
        :data:`COMMON_KEYS` first, then the engine's own keys (``reml, residual_sd, aic,
        bic, singular`` for the linear model, and ``smooths``, one row of
        :data:`SMOOTH_KEYS` per smooth, when its formula has smooth terms; ``link,
        threshold, n_agq, aic, bic, singular`` for the ordinal one; ``link, sampler, draws,
        chains, ess_tail_min, bfmi_min, failures`` for the sampler).
    """
    own = model.to_dict()
    engine = own["engine"]
    if engine == "bayes":
        fixed = model.fixed_effects()
        fixed = fixed.assign(df=None, statistic=None, p_value=None)
        random = [{"group": r["group"], "term": r["term"], "sd": r["sd"]} for r in own["random"]]
        for r in own["correlations"]:
            term1, term2 = str(r["term"]).split(",", 1)
            random.append(
                {"group": r["group"], "term1": term1, "term2": term2, "corr": r["estimate"]}
            )
        record = {
            "engine": "bayes",
            "family": own["family"],
            "formula": own["formula"],
            "n_obs": own["n_obs"],
            "groups": own["groups"],
            "converged": not own["failures"],
            "fixed": _rows(fixed, (*FIXED_KEYS, "r_hat", "ess_bulk")),
            "random": random,
            "thresholds": (
                [
                    {k: r[k] for k in ("term", "estimate", "se", "ci_low", "ci_high")}
                    for r in own["cutpoints"]
                ]
                if own["family"] == "ordinal"
                else None
            ),
            "loglik": None,
            "divergences": own["divergences"],
            "r_hat_max": own["r_hat_max"],
            "ess_bulk_min": own["ess_bulk_min"],
            "seconds": own["seconds"],
        }
        extra = (
            "link", "sampler", "draws", "draws_rule", "chains", "ess_tail_min", "bfmi_min",
            "failures",
        )  # fmt: skip
    elif engine == "clmm":
        record = {
            **{k: own[k] for k in ("engine", "family", "formula", "n_obs", "groups")},
            "converged": own["converged"],
            "fixed": own["fixed"],
            "random": own["random"],
            "thresholds": _rows(
                model.thresholds_, ("term", "estimate", "se", "statistic", "ci_low", "ci_high")
            ),
            "loglik": own["loglik"],
            "divergences": None,
            "r_hat_max": None,
            "ess_bulk_min": None,
            "seconds": own["seconds"],
        }
        extra = ("link", "threshold", "n_agq", "aic", "bic", "singular")
    else:
        record = {
            "engine": "lmm",
            "family": "gaussian",
            **{k: own[k] for k in ("formula", "n_obs", "groups", "converged", "fixed", "random")},
            "thresholds": None,
            "loglik": own["loglik"],
            "divergences": None,
            "r_hat_max": None,
            "ess_bulk_min": None,
            "seconds": own["seconds"],
        }
        extra = ("reml", "reml_criterion", "residual_sd", "aic", "bic", "singular")
    record.update({k: own[k] for k in extra})
    if engine == "lmm" and getattr(model, "smooth_", None) is not None:
        record["smooths"] = _rows(_smooth_rows(model), SMOOTH_KEYS)
    return record


def _smooth_rows(model: Any) -> pd.DataFrame:
    """``smooth_table_`` with each smooth's test of linearity (None: ML fits, factor smooths)."""
    table = model.smooth_table_.copy()
    stats, pvals = [], []
    for i, part in enumerate(model.smooth_.smooths):
        tested = model.reml and not part.is_factor_smooth
        test = model.smooth_linearity_test(i, seed=LINEARITY_SEED) if tested else None
        stats.append(None if test is None else test.statistic)
        pvals.append(None if test is None else test.p_value)
    return table.assign(linearity_statistic=stats, linearity_p_value=pvals)


def parse_emmeans_spec(spec: str) -> tuple[list[str], list[str]]:
    """Split ``"A + B | C"`` (or ``"~ A | C"``) into the predictors of the means and of ``by``.

    Raises
    ------
    InvalidParameterError
        For an empty part or more than one ``|``.
    """
    parts = spec.strip().removeprefix("~").split("|")
    names = [[n.strip() for n in re.split(r"[+*,]", part)] for part in parts]
    if len(parts) > 2 or any(not n for group in names for n in group):
        raise InvalidParameterError(
            "--emmeans takes predictor names joined by '+', optionally '| by-predictors', "
            f"e.g. 'Diet' or 'Diet | Time'; got {spec!r}"
        )
    return names[0], (names[1] if len(names) == 2 else [])


def post_hoc(
    model: Any,
    *,
    r2: bool,
    emmeans: str | None,
    method: str,
    adjust: str | None,
    ci_level: float,
) -> tuple[dict[str, Any], list[pd.DataFrame]]:
    """Return the record's ``r2`` and ``emmeans`` entries of a fitted mixed model.

    Returns
    -------
    tuple
        The keys to add (``r2``: ``MixedR2.to_dict()``; ``emmeans``: ``specs, by, ddf,
        means, contrasts`` with ``contrasts`` holding ``method, adjust, rows``; a Bayesian
        model's has ``ddf`` and ``adjust`` null and adds ``mode`` and ``interval``) and the
        frames of emmeans.csv and contrasts.csv (none without ``emmeans``).
    """
    extra: dict[str, Any] = {}
    frames: list[pd.DataFrame] = []
    if r2:
        extra["r2"] = json_safe(model.r2().to_dict())
    if emmeans:
        specs, by = parse_emmeans_spec(emmeans)
        means = model.emmeans(specs, by=by or None, ci_level=ci_level)
        bayes = not hasattr(means, "ddf")  # posterior means: draw by draw, no adjustment
        con = (
            means.contrasts(method=method)
            if bayes
            else means.contrasts(method=method, adjust=adjust)
        )
        frames = [means.to_frame(), con.to_frame()]
        extra["emmeans"] = {
            "specs": specs,
            "by": by,
            "ddf": None if bayes else means.ddf,
            **({"mode": means.mode, "interval": "hdi"} if bayes else {}),
            "means": json_safe(frames[0].to_dict(orient="records")),
            "contrasts": {
                "method": con.method,
                "adjust": None if bayes else con.adjust,
                "rows": json_safe(frames[1].to_dict(orient="records")),
            },
        }
    return extra, frames


def _num(value: Any, decimals: int) -> str:
    return "n/a" if value is None else f"{value:.{decimals}f}"


def summary_text(model: Any, record: dict[str, Any]) -> str:
    """Write the terminal summary: the model's own text, or the sampler's tables."""
    if record["engine"] != "bayes":
        text = model.summary().text
        rows = [r for r in record.get("smooths", []) if r["linearity_statistic"] is not None]
        if not rows:
            return text
        lines = [
            "Curved or straight (restricted likelihood ratio of each smooth's variance, exact",
            "null distribution by simulation; a small p-value: the data show a curve):",
            f"{'':<16}{'RLRT':>10}{'p-value':>10}",
        ]
        for r in rows:
            lines.append(
                f"{r['term']:<16}{r['linearity_statistic']:>10.4f}{r['linearity_p_value']:>10.4f}"
            )
        return text + "\n\n" + "\n".join(lines)
    number = lambda v: f"{v:.4f}"  # noqa: E731
    fixed = model.fixed_effects().drop(columns=["ess_tail"])
    lines = [
        f"Bayesian {record['family']} mixed model ({record['link']} link): {record['formula']}",
        f"n = {record['n_obs']}; groups: "
        + ", ".join(f"{g} {k}" for g, k in record["groups"].items()),
        f"{record['chains']} chains x {record['draws']} draws"
        + (" (--draws auto: the first that passed)" if record.get("draws_rule") == "auto" else "")
        + f" ({record['sampler']}); "
        f"divergences {record['divergences']}, max R-hat {_num(record['r_hat_max'], 3)}, "
        f"min bulk ESS {_num(record['ess_bulk_min'], 0)}",
        "diagnostics passed"
        if record["converged"]
        else "diagnostics FAILED: " + "; ".join(record["failures"]),
        "",
        "Fixed effects (posterior mean, sd, highest-density interval):",
        fixed.to_string(index=False, float_format=number),
        "",
        "Variance components:",
        model.random_effects()
        .drop(columns=["ess_tail"])
        .to_string(index=False, float_format=number),
    ]
    if record["thresholds"]:
        lines += [
            "",
            "Thresholds:",
            model.cutpoints()
            .drop(columns=["ess_tail"])
            .to_string(index=False, float_format=number),
        ]
    return "\n".join(lines)
