"""``longitudinal fit``: one mixed model, any engine, one JSON record."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from longitudinal._errors import InvalidParameterError
from longitudinal.cli._common import (
    _check_outputs,
    _draws_option,
    _Formatter,
)
from models.limits import (
    BAYES_MAX_CHAINS,
    BAYES_MAX_DRAWS,
    BAYES_MAX_GB,
    BAYES_MAX_SECONDS,
    BAYES_MAX_TUNE,
    FORMULA_MAX_RANDOM_TERMS,
    ORDINAL_MAX_N_AGQ,
)


def _fit_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "fit",
        help="fit a mixed-effects model (linear, ordinal or Bayesian) written in lme4 syntax",
        description=(
            "Fit a mixed model and write its results as JSON. Engines: lmm (linear mixed model, "
            "REML or --ml, Satterthwaite df), clmm (cumulative link mixed model for ordered "
            "ratings, Laplace or --n-agq quadrature, as ordinal::clmm) and bayes (PyMC, "
            "--family ordinal or gaussian). Every engine writes the keys engine, family, "
            "formula, n_obs, groups, converged, fixed (term, estimate, se, df, statistic, "
            "p_value, ci_low, ci_high; bayes adds r_hat, ess_bulk), random (group, term, sd "
            "and correlations), thresholds, loglik, divergences, r_hat_max, ess_bulk_min, "
            "seconds (null where a key does not apply), then its own; a summary is printed. "
            "With --engine lmm, --r2 adds the key r2 (Rights & Sterba, Nakagawa) and "
            "--emmeans SPEC the key emmeans (marginal means and their contrasts), whose tables "
            "go to emmeans.csv and contrasts.csv beside --out; with --engine clmm the same "
            "on the latent scale (Nakagawa's latent R-squared; emmeans' latent means, z "
            "intervals); with --engine bayes, --r2 gives the Bayesian R-squared (Gelman et al. "
            "2019: posterior mean, SD and highest-density interval) and --emmeans SPEC the "
            "posterior marginal means "
            "and their contrasts, computed draw by draw (posterior mean, SD, highest-density "
            "interval, probability above 0; the ordinal family on the latent scale), in the "
            "same key and files. "
            "The lmm formula may hold smooth terms as gamm4 fits them (s(x) thin plate, "
            "s(x, bs='cr', k=6), s(x, by=f) with f a text column and + f in the formula, "
            "s(x, f, bs='fs', xt='cr') a curve per level of f); "
            "their record adds smooths (term, edf, ref_df, F, p_value as summary(gam), and "
            "linearity_statistic, linearity_p_value: the restricted likelihood-ratio test of "
            "the smooth against its straight line, REML fits only, null for bs='fs').\n\n"
            f"Limits, checked before any fit: --n-agq at most {ORDINAL_MAX_N_AGQ}; --draws and "
            f"--tune at most {BAYES_MAX_DRAWS:,} and {BAYES_MAX_TUNE:,} per chain, --chains at "
            f"most {BAYES_MAX_CHAINS}; draws whose storage is estimated over {BAYES_MAX_GB:g} "
            "GB are refused before sampling, and a large fit whose probe estimates more than "
            f"{BAYES_MAX_SECONDS / 3600:.0f} h of sampling is refused, each with the --draws "
            "that fit. A formula may not repeat a random-effects term (the same grouping "
            f"factor with the same terms) nor have more than {FORMULA_MAX_RANDOM_TERMS} of them."
        ),
        epilog=(
            "examples:\n  longitudinal fit sleepstudy.csv "
            "--formula 'Reaction ~ Days + (Days | Subject)' --out fit.json\n"
            "  longitudinal fit ChickWeight.csv "
            "--formula 'weight ~ s(Time) + (1 | Chick)' --out fit.json\n"
            "  longitudinal fit ratings.csv --engine clmm "
            "--formula 'empathy ~ trait + week + (1 + week | pid) + (1 | story)' --out fit.json\n"
            "  longitudinal fit ratings.csv --engine bayes --family ordinal "
            "--seed 1 --formula 'empathy ~ trait + (1 | pid)' --out fit.json\n"
            "  longitudinal fit chicks.csv --formula 'weight ~ Time * Diet + (Time | Chick)' "
            "--r2 --emmeans 'Diet' --contrasts trt.vs.ctrl --out fit.json"
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("data", type=Path, help="CSV file with one row per observation")
    parser.add_argument("--formula", required=True, help="lme4 formula, e.g. 'y ~ x + (1 | g)'")
    parser.add_argument(
        "--engine", choices=["lmm", "clmm", "bayes"], default="lmm", help="model engine (lmm)"
    )
    parser.add_argument(
        "--family",
        choices=["gaussian", "ordinal"],
        help="response family (lmm: gaussian; clmm: ordinal; bayes: ordinal or gaussian)",
    )
    parser.add_argument("--link", choices=["logit", "probit"], help="ordinal link (logit)")
    parser.add_argument("--ml", action="store_true", help="lmm: maximum likelihood, not REML")
    parser.add_argument(
        "--threshold", choices=["flexible", "equidistant"], help="clmm: thresholds (flexible)"
    )
    parser.add_argument(
        "--n-agq",
        type=int,
        help=(
            "clmm: quadrature nodes for one (1 | g) term (1 = Laplace; at most "
            f"{ORDINAL_MAX_N_AGQ})"
        ),
    )
    parser.add_argument(
        "--draws",
        type=_draws_option,
        help=(
            f"bayes: draws per chain (10000), at most {BAYES_MAX_DRAWS:,}; 'auto': up to "
            "10000, stopping at the first 1000 that pass the gate's R-hat and ESS checks"
        ),
    )
    parser.add_argument(
        "--tune",
        type=int,
        help=f"bayes: tuning steps per chain (500), at most {BAYES_MAX_TUNE:,}",
    )
    parser.add_argument("--chains", type=int, help=f"bayes: chains (2), at most {BAYES_MAX_CHAINS}")
    parser.add_argument(
        "--sampler",
        choices=["pymc", "nutpie", "numpyro"],
        help="bayes: NUTS implementation (default nutpie when installed, else pymc)",
    )
    parser.add_argument("--seed", type=int, help="bayes: random seed")
    parser.add_argument(
        "--r2",
        action="store_true",
        help=(
            "lmm: add 'r2' to the record: Rights & Sterba's R-squared (r2mlm's names) and "
            "Nakagawa's marginal and conditional R-squared; clmm: Nakagawa's, latent scale; "
            "bayes: the Bayesian R-squared (Gelman et al. 2019), its posterior mean, SD and "
            "highest-density interval (latent scale for the ordinal family)"
        ),
    )
    parser.add_argument(
        "--emmeans",
        metavar="SPEC",
        help=(
            "lmm, clmm, bayes: estimated marginal means of SPEC ('Diet', 'Diet | Time', "
            "'A + B | C'), added as 'emmeans' to the record and written to emmeans.csv and "
            "contrasts.csv beside it (bayes: posterior means, SDs and HDIs)"
        ),
    )
    parser.add_argument(
        "--contrasts",
        choices=["pairwise", "trt.vs.ctrl", "consec", "poly"],
        help="lmm, clmm, bayes with --emmeans: contrasts of the means (pairwise)",
    )
    parser.add_argument(
        "--adjust",
        choices=["tukey", "dunnettx", "holm", "bonferroni", "none"],
        help=(
            "lmm, clmm with --emmeans: multiplicity adjustment (pairwise: tukey, trt.vs.ctrl: "
            "dunnettx, consec: holm, poly: none); bayes has none: each interval is its own"
        ),
    )
    parser.add_argument("--ci-level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument("--out", required=True, type=Path, help="JSON file to write")
    return parser


if TYPE_CHECKING:  # loaded when the command runs, after its arguments are parsed
    import pandas as pd

_ENGINE_OPTIONS = {
    "lmm": {"ml", "r2", "emmeans", "contrasts", "adjust"},
    "clmm": {"link", "threshold", "n_agq", "r2", "emmeans", "contrasts", "adjust"},
    "bayes": {"link", "draws", "tune", "chains", "sampler", "seed", "r2", "emmeans", "contrasts"},
}
_ALL_ENGINE_OPTIONS = set().union(*_ENGINE_OPTIONS.values())


def _fit_model(args: argparse.Namespace, data: pd.DataFrame) -> Any:
    """Check that every option given belongs to the engine, then fit."""
    engine = args.engine
    given = {name for name in _ALL_ENGINE_OPTIONS if getattr(args, name) not in (None, False)}
    stray = sorted(given - _ENGINE_OPTIONS[engine])
    if stray:
        flags = ", ".join("--" + s.replace("_", "-") for s in stray)
        raise InvalidParameterError(
            f"{flags} do(es) not apply to --engine {engine}; its options are "
            + (", ".join("--" + s.replace("_", "-") for s in sorted(_ENGINE_OPTIONS[engine])))
        )
    family = args.family or ("gaussian" if engine == "lmm" else "ordinal")
    if engine == "lmm" and family != "gaussian":
        raise InvalidParameterError(
            "--engine lmm fits a gaussian model; for ordinal ratings use --engine clmm "
            "(or --engine bayes --family ordinal)"
        )
    if engine == "clmm" and family != "ordinal":
        raise InvalidParameterError(
            "--engine clmm fits ordinal models; for a gaussian one use --engine lmm"
        )
    if engine == "bayes" and family == "gaussian" and args.link is not None:
        raise InvalidParameterError("--link applies to --family ordinal only")
    if family == "ordinal":
        _refuse_continuous_outcome(args.formula, data, engine=engine)
    if engine == "lmm":
        from models.lmm import LinearMixedModel

        return LinearMixedModel(args.formula, reml=not args.ml, ci_level=args.ci_level).fit(data)
    if engine == "clmm":
        from models.ordinal import OrdinalMixedModel

        return OrdinalMixedModel(
            args.formula,
            link=args.link or "logit",
            threshold=args.threshold or "flexible",
            n_agq=1 if args.n_agq is None else args.n_agq,
            ci_level=args.ci_level,
        ).fit(data)
    from models.bayes import BayesianMixedModel

    options = {
        k: getattr(args, k)
        for k in ("draws", "tune", "chains", "sampler", "seed")
        if getattr(args, k) is not None
    }
    model = BayesianMixedModel(
        args.formula,
        family=family,
        link=args.link or "logit",
        ci_level=args.ci_level,
        progressbar=False,
        **options,
    )
    with _announced_at_once():
        return model.fit(data)


@contextlib.contextmanager
def _announced_at_once() -> Iterator[None]:
    """Print the expected sampling time when it is announced, not with the closing warnings.

    The command records warnings and prints them after the fit; the estimate of a long run
    (:class:`models.bayes.estimate.LongSamplingWarning`) is printed on stderr as it is issued,
    before the sampling it speaks of. Every other warning goes on to the record.
    """
    from models.bayes.estimate import LongSamplingWarning

    recorded = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001
        if issubclass(category, LongSamplingWarning):
            print(f"note: {message}", file=sys.stderr, flush=True)
        else:
            recorded(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


def _refuse_continuous_outcome(formula: str, data: pd.DataFrame, *, engine: str) -> None:
    """Refuse an ordinal model of an outcome with more than 11 distinct values.

    The kind of scale chooses the model (:mod:`longitudinal.study.rating_scale`): a cumulative
    model estimates one threshold between every two neighbouring values, so a 0-100 slider
    would be fitted as up to 100 ordered categories. An outcome the formula does not name as
    a plain column is left to the model's own checks.
    """
    import pandas as pd

    from longitudinal.study.rating_scale import MAX_ORDINAL_POINTS

    outcome = formula.split("~", 1)[0].strip()
    if outcome not in data.columns:
        return
    values = pd.to_numeric(data[outcome], errors="coerce").dropna().unique()
    if len(values) <= MAX_ORDINAL_POINTS:
        return
    how = "--engine clmm" if engine == "clmm" else "--engine bayes --family ordinal"
    raise InvalidParameterError(
        f"{how} fits ordered categories, but {outcome} has {len(values)} distinct values "
        f"(from {values.min():g} to {values.max():g}): a scale of more than "
        f"{MAX_ORDINAL_POINTS} points is continuous, and a cumulative model would estimate "
        f"{len(values) - 1} thresholds. Fit it with --engine lmm (or --engine bayes --family "
        "gaussian), or bin it into at most 11 ordered categories first"
    )


def _read_model_data(path: Path) -> pd.DataFrame:
    """Read a model's data table; an unreadable or empty file is bad input."""
    import pandas as pd

    try:
        data = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InvalidParameterError(f"cannot read {path} as a CSV table: {err}") from err
    if data.empty:
        raise InvalidParameterError(f"{path} has no data rows")
    return data


def _fit(args: argparse.Namespace) -> int:
    from longitudinal._output import atomic_write_files, refuse_overlap, write_json
    from longitudinal.cli.fit_record import fit_record, post_hoc, summary_text

    tables = _table_paths(args)
    _check_outputs({"--out": args.out, **{f"the {p.name} beside --out": p for p in tables}})
    for path in [args.out, *tables]:
        refuse_overlap(Path(path), [Path(args.data)], option="--out")
    if (args.contrasts or args.adjust) and not args.emmeans:
        raise InvalidParameterError("--contrasts and --adjust apply with --emmeans SPEC only")
    data = _read_model_data(args.data)
    model = _fit_model(args, data)
    result = fit_record(model)
    extra, frames = post_hoc(
        model,
        r2=args.r2,
        emmeans=args.emmeans,
        method=args.contrasts or "pairwise",
        adjust=args.adjust,
        ci_level=args.ci_level,
    )
    result.update(extra)

    write = functools.partial(write_json, result, sort_keys=False, allow_nan=False)
    outputs = {args.out: write}
    for path, frame in zip(tables, frames, strict=True):
        outputs[path] = functools.partial(_write_table, frame)
    atomic_write_files(outputs)
    print(summary_text(model, result))
    print()
    print(f"wrote {args.out} ({result['n_obs']} observations, converged: {result['converged']})")
    return 0


def _table_paths(args: argparse.Namespace) -> list[Path]:
    """Return the emmeans.csv and contrasts.csv written beside --out with --emmeans."""
    if not args.emmeans:
        return []
    folder = Path(args.out).parent
    return [folder / "emmeans.csv", folder / "contrasts.csv"]


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    from longitudinal._output import write_csv

    write_csv(frame, path)
