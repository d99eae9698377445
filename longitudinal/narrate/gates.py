"""When an estimate may be read in words: the honesty gates shared by every narrated result.

The report's reading of the empathy effects (:mod:`longitudinal.predict.reading`), its page
(:mod:`longitudinal.report.sections.effects`) and the manuscript's results sentences and table
notes (:mod:`longitudinal.narrate.sentences`, :mod:`longitudinal.manuscript.write`) decide with
these functions, so a direction is never claimed in one place and withheld in the other; a
model that failed its checks is named in one sentence per medium, from one list
(:data:`GATE_SENTENCES`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

SMALL_SAMPLE = 20
"""Up to this many participants (in the model) every inferential paragraph carries a
small-sample caveat: 20 people leave a person-level effect with about 18 residual degrees of
freedom, where a single influential person can move it."""

WIDEST = 400.0
"""An interval wider than this (in rating points) is not a usable estimate."""


def effect_status(ci_low: float, ci_high: float, df: float = float("nan")) -> str:
    """Say how an estimate with this interval may be read.

    Returns ``"unusable"`` when the interval is not finite or absurdly wide (more than
    :data:`WIDEST`) or the Satterthwaite df is below 1, ``"clear"`` when the interval excludes
    zero (a direction may be stated) and ``"includes zero"`` otherwise (no direction).

    Examples
    --------
    >>> from longitudinal.narrate.gates import effect_status
    >>> effect_status(0.03, 0.38), effect_status(-0.2, 0.4), effect_status(-1e3, 1e3)
    ('clear', 'includes zero', 'unusable')
    """
    usable = (
        np.isfinite(ci_low)
        and np.isfinite(ci_high)
        and ci_high - ci_low < WIDEST
        and not (np.isfinite(df) and df < 1)
    )
    if not usable:
        return "unusable"
    return "clear" if (ci_low > 0 or ci_high < 0) else "includes zero"


NOT_CONVERGED = "its fit did not converge"
"""Why a mixed model that did not converge shows no numbers."""


def fit_problem(model: Any) -> str | None:
    """Why a fitted mixed model's estimates must not be read (unconverged, singular), or None."""
    if not model.converged_:
        return NOT_CONVERGED
    if model.singular_:
        return "its fit is singular (a variance estimated at zero or a correlation at ±1)"
    return None


def sampling_problem(bayes: Any) -> str | None:
    """Why a Bayesian model's estimates must not be read (failed diagnostics), or None."""
    if bayes is None:
        return None
    diagnostics = getattr(bayes, "diagnostics_", None) or {}
    if diagnostics.get("passed", True):
        return None
    return "; ".join(diagnostics.get("messages", [])) or "its sampling diagnostics failed"


_REMEDY = re.compile(r" \(.*\)$", re.DOTALL)
"""The usual remedy that :func:`models.bayes.diagnostics.sampling_diagnostics` appends to each
failed check, in parentheses: ``R-hat 1.080 > 1.01 (chains disagree: ...)``. The check itself
(``R-hat 1.080 > 1.01``, ``3 divergent transitions``) has none."""


def sampling_failure(bayes: Any) -> str | None:
    """Which sampling diagnostics a Bayesian model failed, without the remedies, or None.

    :func:`sampling_problem` gives each failed check with its usual remedy ("raise tune= and
    draws=") for the researcher; a manuscript states what failed and no advice.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from longitudinal.narrate.gates import sampling_failure
    >>> from models.bayes.diagnostics import REMEDIES
    >>> bad = SimpleNamespace(diagnostics_={"passed": False, "failures": ["r_hat"],
    ...     "messages": [f"R-hat 1.080 > 1.01 ({REMEDIES['r_hat']})"]})
    >>> sampling_failure(bad)
    'its sampling diagnostics failed (R-hat 1.080 > 1.01)'
    """
    if bayes is None:
        return None
    diagnostics = getattr(bayes, "diagnostics_", None) or {}
    if diagnostics.get("passed", True):
        return None
    failed = [_REMEDY.sub("", str(message)) for message in diagnostics.get("messages", [])]
    return "its sampling diagnostics failed" + (f" ({'; '.join(failed)})" if failed else "")


FAILED = "failed"
"""What a table shows in place of the numbers of a model that failed its checks."""


def model_failures(fitted: Any) -> dict[str, str]:
    """Say which fitted empathy models failed their checks, and why, without advice.

    A model fails when its estimates do not exist as estimates: a mixed model whose fit did
    not converge, a Bayesian model whose sampling diagnostics failed. A singular fit (a
    variance at zero) has valid fixed effects: its numbers are shown, flagged and not
    interpreted (:func:`fit_problem`), as lme4's users read such a fit.

    Parameters
    ----------
    fitted : longitudinal.predict.EmpathyEffects
        The fitted models (``lmm``, ``clmm``, ``bayes``) and their ``effects`` table.

    Returns
    -------
    dict of str to str
        ``engine`` of the effects table (``lmm``, ``clmm``, ``bayes_ordinal``,
        ``bayes_gaussian``) -> the reason (:func:`fit_problem`, :func:`sampling_failure`),
        for each model that failed; empty when every model passed.
    """
    out: dict[str, str] = {}
    if not fitted.lmm.converged_:
        out["lmm"] = NOT_CONVERGED
    clmm = getattr(fitted, "clmm", None)
    if clmm is not None and not clmm.converged_:
        out["clmm"] = NOT_CONVERGED
    bayes = sampling_failure(fitted.bayes)
    if bayes:
        engines = [str(e) for e in dict.fromkeys(fitted.effects["engine"])]
        for engine in [e for e in engines if e.startswith("bayes")] or ["bayes_ordinal"]:
            out[engine] = bayes
    return out


def with_status(frame: Any, failures: dict[str, str]) -> Any:
    """Add a ``status`` column to an effects or variance table: ``ok`` or ``failed: why``.

    The rows of an engine in ``failures`` keep their numbers (full precision, for the record)
    and say that they must not be read; a table shown to a reader shows :data:`FAILED` in
    their place. In a variance table the intercept-only (``unconditional``) LMM is a model of
    its own: it is not failed by the LMM of the effects.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.narrate.gates import with_status
    >>> table = pd.DataFrame({"engine": ["lmm", "bayes_ordinal"], "estimate": [0.2, 0.3]})
    >>> with_status(table, {"bayes_ordinal": "its sampling diagnostics failed"})["status"].tolist()
    ['ok', 'failed: its sampling diagnostics failed']
    """
    out = frame.copy()
    status = out["engine"].map(lambda e: f"{FAILED}: {failures[e]}" if e in failures else "ok")
    if "model" in out.columns:
        status = status.where(out["model"] != "unconditional", "ok")
    out["status"] = status.astype(object)
    return out


def is_failed(status: Any) -> bool:
    """Whether a ``status`` cell (:func:`with_status`) says the model failed its checks."""
    return isinstance(status, str) and status.startswith(FAILED)


def small_sample_caveat(n_participants: int | None, *, what: str = "this estimate is") -> str:
    """Return the caveat every inferential paragraph carries up to :data:`SMALL_SAMPLE` people.

    ``n_participants`` is the number of participants in the fitted model, after listwise deletion.

    Examples
    --------
    >>> from longitudinal.narrate.gates import small_sample_caveat
    >>> small_sample_caveat(20)
    ' With 20 participants this estimate is imprecise and may not replicate.'
    >>> small_sample_caveat(21)
    ''
    """
    if n_participants is None or n_participants > SMALL_SAMPLE:
        return ""
    return f" With {n_participants} participants {what} imprecise and may not replicate."


BAYES_ENGINES = {
    "bayes_ordinal": "Bayesian ordinal model",
    "bayes_gaussian": "Bayesian linear mixed model",
}
"""The Bayesian engines of the effects table and their names in the report: the
cumulative-logit model of an ordinal scale (or of binned ratings), the gaussian model of a
continuous scale (:mod:`longitudinal.study.rating_scale`)."""


def bayes_name(effects: Any) -> str:
    """Name the Bayesian model of an effects table (the ordinal one when there is none).

    >>> import pandas as pd
    >>> bayes_name(pd.DataFrame({"engine": ["lmm", "bayes_gaussian"]}))
    'Bayesian linear mixed model'
    """
    found = [e for e in BAYES_ENGINES if (effects["engine"] == e).any()]
    return BAYES_ENGINES[found[0] if found else "bayes_ordinal"]


GATE_SENTENCES: tuple[tuple[Callable[[Any], str | None], str, str], ...] = (
    (
        lambda fitted: fit_problem(fitted.lmm),
        "The mixed model failed its checks ({why}): none of its estimates is shown.",
        "The linear mixed model failed its checks ({why}): its estimates are not reported.",
    ),
    (
        lambda fitted: fit_problem(fitted.clmm) if fitted.clmm is not None else None,
        "The ordinal mixed model failed its checks ({why}): none of its estimates is shown.",
        "The ordinal mixed model failed its checks ({why}): its estimates are not reported.",
    ),
    (
        lambda fitted: sampling_failure(fitted.bayes),
        "The {bayes} failed its checks ({why}): none of its estimates is read or shown (the "
        "notes say how to fix it).",
        "The {bayes} failed its checks ({why}): its estimates are not reported.",
    ),
)
"""The gates of the fitted empathy models and their sentences, one row per model (the linear
mixed model, the ordinal one, the Bayesian one): why the model's estimates must not be read
(:func:`fit_problem`, :func:`sampling_failure`: what failed, never how to refit), and the
sentence that says so on the report's page and in the manuscript. ``{why}`` is the reason,
``{bayes}`` the Bayesian model's name (:func:`bayes_name`)."""


def gate_sentences(fitted: Any, *, medium: str) -> list[str]:
    """Say which fitted empathy model failed its checks, and why, one sentence each.

    No number of a failed model is given. ``medium`` is ``"page"`` (the report) or
    ``"manuscript"`` (the results text and the table notes); ``fitted`` is a
    :class:`longitudinal.predict.EmpathyEffects` (``lmm``, ``clmm``, ``bayes``, ``effects``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import pandas as pd
    >>> from longitudinal.narrate.gates import gate_sentences
    >>> lmm = SimpleNamespace(converged_=False, singular_=False)
    >>> fitted = SimpleNamespace(lmm=lmm, clmm=None, bayes=None,
    ...     effects=pd.DataFrame({"engine": ["lmm"]}))
    >>> print(*gate_sentences(fitted, medium="manuscript"))
    The linear mixed model failed its checks (its fit did not converge): its estimates are not
    reported.
    """
    column = {"page": 1, "manuscript": 2}[medium]
    out = []
    for row in GATE_SENTENCES:
        why = row[0](fitted)
        if why:
            out.append(row[column].format(why=why, bayes=bayes_name(fitted.effects)))
    return out
