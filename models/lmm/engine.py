"""The LMM fitting and refit engine: the one module that reaches into mixedlm's internals.

:class:`models.lmm.LinearMixedModel` fits through mixedlm, and the power simulations of
:mod:`models.power` refit one template many times; both go through this module, which states
what they may use:

* **Fitting with mixedlm**: :func:`engine_input` (the design as a mixedlm formula over generated
  names), :func:`control`, :func:`fit`, :func:`refit`, :func:`refit_ml`, :class:`EngineFailure`,
  and the readers of a mixedlm result (:func:`level_order`, :func:`block_effects`,
  :func:`conditional_variances`, :func:`deviance_components`).
* **The gradient refit of one response**: :class:`GradientRefit`, the gradient stage of
  :func:`refit` on mixedlm's native deviance without building a result, for a caller that
  needs only ``theta``, ``beta``, ``sigma`` and the deviance components.
* **The analytic refit**: :class:`ProfiledDeviance` (the profiled deviance with its exact
  gradient and Hessian, :mod:`models.lmm._analytic`), :func:`newton` and :func:`off_boundary`
  (:mod:`models.lmm._newton`), :func:`dense_enough`, :func:`lower_entries`,
  :data:`SINGULAR_TOL`; and lmerTest's Satterthwaite df (:func:`varpar_covariance`,
  :func:`satterthwaite_df`, :mod:`models.lmm._satterthwaite`).
* **Threads**: :func:`one_blas_thread`, one BLAS thread while mixedlm works.
* **The memo**: :func:`fit` starts a fit of byte-identical input at the optimum of the recent
  fit that had it (:data:`MEMO_FITS`).

mixedlm's private names (``_rounding_tolerance``, ``_RustMatrixCache``, ``_build_theta_bounds``,
``_LMMGradientObjective``, an evaluator's ``_evaluate_core``) are touched here and nowhere else
in the package (``tests/test_private_imports.py`` holds every other module to that), so a
mixedlm release that moves them breaks this module alone. The module imports NumPy only;
pandas and mixedlm are imported where they are used, so a power worker that refits
analytically never loads them.

The user's formula never reaches mixedlm. :func:`models.formula.build_design` has already
evaluated it (after the allow-list check of :func:`models.formula.parse_formula`) into numeric
matrices; this module hands mixedlm a frame holding only those columns, under generated names
(``y``, ``x0, x1, ...``, ``z0, z1, ...``, ``g0, g1, ...``), and a formula rebuilt from those
names, e.g. ``y ~ 0 + x0 + x1 + (0 + z0 + z1 | g0)``. Every random block of the design (one per
``||`` part and per ``/`` level) becomes one correlated mixedlm term with its own grouping column,
so the covariance parameters come back in the design's block order.
"""

from __future__ import annotations

import collections
import contextlib
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from models._threads import one_blas_thread as _one_blas_thread
from models.lmm._analytic import SINGULAR_TOL, ProfiledDeviance, dense_enough, lower_entries
from models.lmm._newton import newton, off_boundary
from models.lmm._satterthwaite import satterthwaite_df, varpar_covariance

if TYPE_CHECKING:
    import pandas as pd

    from models.formula import Design

__all__ = [
    "BOUNDARY_OPTIMIZER",
    "GRADIENT_TOL",
    "MEMO_FITS",
    "OPTIMIZERS",
    "SETTLED_THETA",
    "SINGULAR_TOL",
    "Control",
    "EngineFailure",
    "EngineInput",
    "GradientRefit",
    "ProfiledDeviance",
    "ResponseFit",
    "block_effects",
    "conditional_variances",
    "control",
    "dense_enough",
    "deviance_components",
    "diagonal_positions",
    "engine_input",
    "fit",
    "gradient_options",
    "level_order",
    "lower_entries",
    "newton",
    "off_boundary",
    "one_blas_thread",
    "refit",
    "refit_ml",
    "relative_factors",
    "satterthwaite_df",
    "settled",
    "varpar_covariance",
]

OPTIMIZERS = {
    "auto": "auto",
    "cobyqa": "COBYQA",
    "powell": "Powell",
    "nelder-mead": "Nelder-Mead",
}
"""Our optimizer names and mixedlm's."""


@dataclass(frozen=True)
class EngineInput:
    """What mixedlm receives: a rebuilt formula and a frame of generated numeric columns."""

    formula: str
    frame: pd.DataFrame
    block_sizes: tuple[int, ...]
    names: dict[str, str]
    dense: tuple[np.ndarray, ...] | None = None

    def translate(self, text: str) -> str:
        """Put the user's names back into a text that speaks of the generated ones."""
        return _GENERATED.sub(lambda m: self.names.get(m.group(0), m.group(0)), text)


_GENERATED = re.compile(r"\b[xzg]\d+\b")


def engine_input(
    design: Design,
    *,
    dense: Sequence[np.ndarray] | None = None,
    fixed: np.ndarray | None = None,
) -> EngineInput:
    """Rebuild the design as a mixedlm formula over generated column names.

    Parameters
    ----------
    design : Design
        Evaluated design of a formula with at least one random-effects block.
    dense : sequence of numpy.ndarray, optional
        ``n x r_i`` columns of more blocks, last, each of whose ``r_i`` effects are
        independent with one common variance (penalized smooths as random effects, as gamm4
        fits them).
    fixed : numpy.ndarray, optional
        ``n x f`` fixed-effect columns appended after the design's.

    Returns
    -------
    EngineInput
        The formula text (generated names only), the frame holding exactly the columns that
        formula uses, and the number of random-effect columns of each block.
    """
    import pandas as pd

    X = design.X.to_numpy(dtype=float)
    extra = 0 if fixed is None else fixed.shape[1]
    if fixed is not None:
        X = np.column_stack([X, fixed])
    columns: dict[str, np.ndarray] = {"y": np.asarray(design.y, dtype=float)}
    legend: dict[str, str] = {}
    fixed_names = []
    for j in range(X.shape[1]):
        columns[f"x{j}"] = X[:, j]
        fixed_names.append(f"x{j}")
        legend[f"x{j}"] = (
            str(design.X.columns[j]) if j < X.shape[1] - extra else f"smooth fixed {j}"
        )
    random = []
    k = 0
    for i, block in enumerate(design.random):
        names = []
        for t in range(block.Z.shape[1]):
            columns[f"z{k}"] = np.asarray(block.Z[:, t], dtype=float)
            names.append(f"z{k}")
            legend[f"z{k}"] = f"{block.terms[t]} | {block.group}"
            k += 1
        columns[f"g{i}"] = np.asarray(block.codes, dtype=np.int64)
        legend[f"g{i}"] = block.group
        random.append(f"(0 + {' + '.join(names)} | g{i})")
    sizes = tuple(b.Z.shape[1] for b in design.random)
    for i, block in enumerate(dense or ()):  # placeholder factors whose indicators they replace
        columns[f"s{i}"] = np.arange(len(design.y), dtype=np.int64) % block.shape[1]
        legend[f"s{i}"] = "smooth"
        random.append(f"(1 | s{i})")
        sizes = (*sizes, 1)
    rhs = " + ".join(["0", *fixed_names, *random])
    return EngineInput(
        formula=f"y ~ {rhs}",
        frame=pd.DataFrame(columns),
        block_sizes=sizes,
        names=legend,
        dense=None if not dense else tuple(np.asarray(b, dtype=float) for b in dense),
    )


GRADIENT_TOL = 1e-7
"""Stop L-BFGS-B when every projected gradient component of the deviance is below this times n.

mixedlm's "auto" asks for 1e-8 * n, which sits at or below the rounding noise of the exact
gradient (measured at the optimum: 1.4e-8 * n on 5,000 InstEval rows, 2.3e-8 * n on a
1,000,000-row random-slope design); L-BFGS-B then spends most of its evaluations in line searches
that cannot lower the deviance (27 of 36 and 25 of 36 in those two fits), after the estimates
have settled to 1e-7.
"""

BOUNDARY_OPTIMIZER = "nloptwrap_BOBYQA"
"""lme4's default optimizer (NLopt's BOBYQA), run from the start when the gradient stage does
not settle a fit; the lower of the two deviances is kept."""

SETTLED_THETA = 1e-3
"""A gradient fit with a diagonal relative scale of a correlated block below this is refitted
by :data:`BOUNDARY_OPTIMIZER` (mixedlm's "auto" looks at 1e-4 of the start)."""


@dataclass(frozen=True)
class Control:
    """How to fit: mixedlm's settings for the chosen optimizer, and the gradient stage.

    ``gradient_first`` (``"auto"`` only): try L-BFGS-B with :data:`GRADIENT_TOL` first.
    """

    settings: Any
    gradient_first: bool
    max_evals: int


def control(*, optimizer: str, max_evals: int, tol: float) -> Control:
    """Fitting controls for mixedlm; its own warnings are off (the adapter issues ours)."""
    from mixedlm.models.control import LmerControl

    method = OPTIMIZERS[optimizer]
    settings = LmerControl(
        optimizer=method,
        maxiter=int(max_evals),
        xtol=float(tol) if method != "auto" else 1e-8,
        check_conv=False,
        check_singular=False,
    )
    return Control(settings=settings, gradient_first=method == "auto", max_evals=int(max_evals))


def gradient_options(n_obs: int, max_evals: int) -> dict[str, float]:
    """L-BFGS-B options of the gradient stage (mixedlm's, with the gradient tolerance above)."""
    return {
        "maxiter": int(max_evals),
        "maxfun": int(max_evals),
        "ftol": 1e-15,
        "gtol": GRADIENT_TOL * n_obs,
    }


def _gradient_settings(ctrl: Control, n_obs: int) -> Any:
    from mixedlm.models.control import LmerControl

    return LmerControl(
        optimizer="L-BFGS-B",
        use_analytic_gradient=True,
        maxiter=ctrl.max_evals,
        optCtrl=gradient_options(n_obs, ctrl.max_evals),
        check_conv=False,
        check_singular=False,
    )


def _boundary_settings(ctrl: Control) -> Any:
    from mixedlm.models.control import LmerControl

    return LmerControl(
        optimizer=BOUNDARY_OPTIMIZER,
        maxiter=ctrl.max_evals,
        check_conv=False,
        check_singular=False,
    )


def settled(result: Any, block_sizes: tuple[int, ...]) -> bool:
    """Whether a gradient-stage fit can stand: converged, finite, and off the boundary.

    Near the boundary the gradient of a scale vanishes by symmetry; mixedlm's boundary probes
    settle a lone scale, but a correlated block can have several boundary optima, so those fits
    are redone from the start by :data:`BOUNDARY_OPTIMIZER` and compared (as mixedlm's "auto"
    does with COBYQA after its L-BFGS-B stage).
    """
    theta = np.asarray(result.theta, dtype=float)
    correlated = np.repeat(np.asarray(block_sizes) > 1, np.asarray(block_sizes))
    diagonal = theta[diagonal_positions(block_sizes)][correlated]
    return (
        bool(result.converged)
        and bool(np.isfinite(float(result.deviance)))
        and bool(np.all(np.isfinite(theta)))
        and bool(np.all(diagonal > SETTLED_THETA))
    )


def diagonal_positions(sizes: tuple[int, ...]) -> np.ndarray:
    """Positions in lme4's column-major ``theta`` of the diagonals of each block's factor."""
    out, offset = [], 0
    for k in sizes:
        position = offset
        for col in range(k):
            out.append(position)
            position += k - col
        offset += k * (k + 1) // 2
    return np.asarray(out, dtype=np.intp)


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """One BLAS thread while mixedlm works.

    mixedlm's sparse factorizations are its own; what it hands to BLAS are many small dense
    products. With a threaded BLAS each call can wake worker threads, which costs far more than
    the arithmetic when the machine is busy (sleepstudy: 2 ms with one thread, 10 to 60 ms with
    OpenBLAS's default on two loaded cores).
    """
    return _one_blas_thread()


class EngineFailure(Exception):
    """mixedlm raised; the message is in the user's names."""


MEMO_FITS = 64
"""How many recent fits' optima :func:`fit` keeps for a later fit of byte-identical input."""

_MEMO: collections.OrderedDict[bytes, np.ndarray] = collections.OrderedDict()


def fit(
    inp: EngineInput, *, reml: bool, ctrl: Control, start: np.ndarray | None = None
) -> tuple[Any, list[str], int]:
    """Fit with ``mixedlm.lmer``; return the result, mixedlm's own warnings and the evaluations.

    With ``"auto"`` the gradient stage runs first with :data:`GRADIENT_TOL`; a fit it leaves
    unconverged or near the boundary is redone by :data:`BOUNDARY_OPTIMIZER` from the same
    start, the lower deviance is kept, and the evaluations of both count. ``start`` is the
    optimizers' first ``theta`` (lme4's ``start``); None: mixedlm's (lme4's) default.

    A fit whose input (formula, every column's bytes, ``reml``, controls and start) equals
    that of one of the last :data:`MEMO_FITS` converged fits starts at its optimum instead, where
    the optimizer stops at once (one evaluation; the estimates are the earlier fit's, bit for
    bit, as mixedlm is deterministic): two analyses of one data set that fit the same model
    (a report's G study of the ratings and the unconditional model of its variance shares)
    pay for it once. Only the optimum is kept, never a fitted result.

    Raises
    ------
    EngineFailure
        When mixedlm raises (a failed factorization, a check it refuses), with its message
        translated to the user's names and the original exception chained.
    """
    key = _memo_key(inp, reml, ctrl, start)
    known = None if key is None else _MEMO.get(key)
    out = _fit(inp, reml=reml, ctrl=ctrl, start=start if known is None else known.copy())
    if key is not None and bool(out[0].converged):
        _MEMO[key] = np.array(out[0].theta, dtype=float)
        _MEMO.move_to_end(key)
        while len(_MEMO) > MEMO_FITS:
            _MEMO.popitem(last=False)
    return out


def _memo_key(
    inp: EngineInput, reml: bool, ctrl: Control, start: np.ndarray | None
) -> bytes | None:
    """Digest of everything a fit depends on; None for a fit that is not kept (smooths)."""
    import dataclasses
    import hashlib

    frame = inp.frame
    if inp.dense is not None:
        return None
    digest = hashlib.sha256()
    settings = dataclasses.asdict(ctrl.settings)
    stages = (GRADIENT_TOL, SETTLED_THETA, BOUNDARY_OPTIMIZER, ctrl.gradient_first)
    text = repr((inp.formula, bool(reml), sorted(settings.items()), stages))
    digest.update(f"{text}{ctrl.max_evals}".encode())
    digest.update(b"-" if start is None else np.asarray(start, dtype=float).tobytes())
    for name in frame.columns:
        column = frame[name].to_numpy()
        digest.update(f"|{name}:{column.dtype.str}:{column.shape[0]}|".encode())
        if column.dtype == object:  # the values, not the addresses of the objects holding them
            import pandas as pd

            column = pd.util.hash_array(column.astype(str))
        digest.update(np.ascontiguousarray(column).tobytes())
    return digest.digest()


def _fit(
    inp: EngineInput, *, reml: bool, ctrl: Control, start: np.ndarray | None
) -> tuple[Any, list[str], int]:
    """:func:`fit` without the memo."""
    from mixedlm.models.lmer_fit import lmer  # loads mixedlm's numerical stack first

    def run(settings: Any) -> tuple[Any, list[str]]:
        first = {} if start is None else {"start": np.array(start, dtype=float)}  # a fresh copy
        if inp.dense is not None:
            return _run(inp, lambda: _dense_model(inp, reml, settings).fit(**first))
        return _run(
            inp, lambda: lmer(inp.formula, inp.frame, REML=bool(reml), control=settings, **first)
        )

    if not ctrl.gradient_first:
        result, messages = run(ctrl.settings)
        return result, messages, int(result.function_evals)
    return _two_stages(
        inp,
        lambda: run(_gradient_settings(ctrl, len(inp.frame))),
        lambda: run(_boundary_settings(ctrl)),
    )


def _dense_model(inp: EngineInput, reml: bool, settings: Any) -> Any:
    """Build a mixedlm model whose last blocks' indicator columns are replaced by ``inp.dense``.

    gamm4 does the same to lme4's ``Zt`` (a factor with one level per column, then the columns).
    """
    from dataclasses import replace

    from mixedlm.models.lmer_fit import LmerMod
    from scipy import sparse

    model = LmerMod(inp.formula, inp.frame, REML=bool(reml), control=settings)
    matrices = model.matrices
    structures = list(matrices.random_structures)
    n_dense = len(inp.dense)
    start = int(matrices.Z.shape[1]) - sum(b.shape[1] for b in inp.dense)
    blocks = [matrices.Z.tocsc()[:, :start]]
    for i, block in enumerate(inp.dense):
        position = len(structures) - n_dense + i
        holder = structures[position]
        r = block.shape[1]
        if holder.grouping_factor != f"s{i}" or holder.n_levels != r or holder.n_terms != 1:
            raise RuntimeError("a smooth's placeholder block is not where it was put")
        order = np.empty(r, dtype=np.intp)
        for label, at in holder.level_map.items():
            order[at] = int(label)
        blocks.append(sparse.csc_matrix(block[:, order]))
        structures[position] = replace(holder, level_indices=None)
    Z = sparse.hstack(blocks, format="csc")
    model.matrices = replace(matrices, Z=Z, random_structures=structures)
    return model


def refit(
    inp: EngineInput, result: Any, y: np.ndarray, *, max_evals: int
) -> tuple[Any, list[str], int]:
    """Refit a mixedlm result to a new response, reusing its design matrices."""
    y = np.asarray(y, dtype=float)
    return _refit(inp, lambda **kw: result.refit(y, **kw), max_evals)


def refit_ml(inp: EngineInput, result: Any, *, max_evals: int) -> tuple[Any, list[str], int]:
    """Refit a mixedlm REML result by maximum likelihood, reusing its design matrices."""
    return _refit(inp, result.refitML, max_evals)


def _refit(inp: EngineInput, call: Any, max_evals: int) -> tuple[Any, list[str], int]:
    """Gradient stage from the previous estimates, then BOBYQA if it is not settled."""
    options = gradient_options(len(inp.frame), max_evals)
    maxiter = options.pop("maxiter")
    return _two_stages(
        inp,
        lambda: _run(
            inp,
            lambda: call(
                method="L-BFGS-B", use_analytic_gradient=True, maxiter=maxiter, options=options
            ),
        ),
        lambda: _run(inp, lambda: call(method=BOUNDARY_OPTIMIZER, maxiter=maxiter)),
    )


def _two_stages(inp: EngineInput, gradient: Any, fallback: Any) -> tuple[Any, list[str], int]:
    """Run the gradient stage, then the fallback when it fails or is not :func:`settled`.

    Of two fits the fallback's is kept unless the gradient stage's converged to a deviance
    lower beyond rounding (mixedlm's rule for its own "auto", with its tolerance).
    """
    from mixedlm.estimation.optimizers import _rounding_tolerance

    try:
        first, first_messages = gradient()
    except EngineFailure:
        first = None
    if first is not None and settled(first, inp.block_sizes):
        return first, first_messages, int(first.function_evals)
    spent = 0 if first is None else int(first.function_evals)
    result, messages = fallback()
    evals = spent + int(result.function_evals)
    if first is not None and bool(first.converged) and np.isfinite(float(first.deviance)):
        other = float(result.deviance)
        if float(first.deviance) < other - _rounding_tolerance(other):
            return first, first_messages, evals
    return result, messages, evals


def _run(inp: EngineInput, call: Any) -> tuple[Any, list[str]]:
    from mixedlm.models.checks import ModelCheckError

    failures = (ModelCheckError, ValueError, RuntimeError, ArithmeticError, np.linalg.LinAlgError)
    with warnings.catch_warnings(record=True) as caught, one_blas_thread():
        warnings.simplefilter("always")
        try:
            result = call()
        except failures as err:
            raise EngineFailure(inp.translate(f"{type(err).__name__}: {err}")) from err
    return result, [inp.translate(t) for t in _texts(caught)]


def _texts(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        str(w.message)
        for w in caught
        if not issubclass(w.category, DeprecationWarning | PendingDeprecationWarning)
    ]


def level_order(result: Any, block: int, n_levels: int) -> np.ndarray:
    """Position in mixedlm's coefficient vector of each of our group codes ``0..n_levels-1``."""
    level_map = result.matrices.random_structures[block].level_map
    return np.array([level_map[c] for c in range(n_levels)], dtype=np.intp)


def block_effects(result: Any, sizes: tuple[int, ...], orders: list[np.ndarray]) -> list:
    """Conditional modes per block as ``(n_levels, n_terms)`` arrays in our level order."""
    u = np.asarray(result.u, dtype=float)
    out, offset = [], 0
    for size, order in zip(sizes, orders, strict=True):
        n_levels = len(order)
        b = u[offset : offset + n_levels * size].reshape(n_levels, size)
        out.append(b[order])
        offset += n_levels * size
    return out


def conditional_variances(result: Any, sizes: tuple[int, ...], orders: list[np.ndarray]) -> list:
    """Conditional variances per block as ``(n_levels, n_terms)`` arrays in our level order."""
    ranef = result.ranef(condVar=True)
    out = []
    for i, (size, order) in enumerate(zip(sizes, orders, strict=True)):
        group = ranef.condVar[f"g{i}"]
        cv = np.column_stack([np.asarray(group[f"z{sum(sizes[:i]) + t}"]) for t in range(size)])
        out.append(cv[order])
    return out


def deviance_components(result: Any) -> Any:
    """``theta -> [log|L|^2, r^2, log|R_X|^2, (R_X' R_X)^-1 flattened]`` from mixedlm's evaluator.

    These are the pieces of the unprofiled deviance in ``(theta, sigma)`` that lmerTest's
    Satterthwaite computation differentiates (:mod:`models.lmm._satterthwaite`).
    """
    from mixedlm.estimation.reml import LMMOptimizer

    evaluator = LMMOptimizer(result.matrices, REML=bool(result.REML))
    p = int(result.matrices.n_fixed)

    def components(theta: np.ndarray) -> np.ndarray:
        core = evaluator._evaluate_core(np.asarray(theta, dtype=float))
        if core is None:
            return np.full(3 + p * p, np.nan)
        info = np.asarray(core.fixed_information, dtype=float)
        try:
            cinv = np.linalg.inv((info + info.T) / 2.0)
        except np.linalg.LinAlgError:
            return np.full(3 + p * p, np.nan)
        return np.concatenate([[core.ldL2, core.pwrss, core.ldRX2], cinv.ravel()])

    return components


def relative_factors(model: Any) -> list[np.ndarray]:
    """Return the relative covariance factor ``T`` of each random block of a fitted model.

    Lower triangular, ``T T'`` the block's covariance over the residual variance (lme4's
    ``Lambda`` block), in the design's block order.
    """
    return list(model._Ts)


@dataclass(frozen=True)
class ResponseFit:
    """What :meth:`GradientRefit.fit` gives back for one response.

    ``information`` is the fixed effects' ``X'V^-1 X`` (``p x p``, before ``sigma^2``);
    ``components`` maps a ``theta`` to the deviance components of :func:`deviance_components`
    for this response.
    """

    theta: np.ndarray
    beta: np.ndarray
    sigma: float
    information: np.ndarray
    components: Callable[[np.ndarray], np.ndarray]


class GradientRefit:
    """The gradient stage of :func:`refit` for many responses, without building a result.

    The covariance parameters are optimized as the refit's gradient stage does it (mixedlm's
    L-BFGS-B on the native deviance and gradient, from the template's parameters, with
    :func:`gradient_options`, the same bounds and boundary probes). :meth:`fit` returns None
    where the refit would go on to its BOBYQA stage (no convergence, a non-finite step, a
    variance scale of a correlated block at or below :data:`SETTLED_THETA`), so a caller that
    then refits in full gets the numbers of :func:`refit` in every case. The caller holds
    :func:`one_blas_thread` around :meth:`fit` and what it computes from the result.

    Parameters
    ----------
    template : LinearMixedModel
        The fitted model whose design matrices, start and settings are reused.
    """

    def __init__(self, template: Any) -> None:
        from mixedlm.estimation.reml import _build_theta_bounds, _RustMatrixCache

        matrices = template.engine_result_.matrices
        self.native = _RustMatrixCache.from_matrices(matrices).design
        self.reml = bool(template.reml)
        self.start = np.asarray(template.theta_, dtype=float)
        self.bounds = _build_theta_bounds(matrices.random_structures, len(self.start))
        self.n, self.p = template.design_.X.shape
        self.options = gradient_options(self.n, int(template.max_evals))
        sizes = np.asarray(template._input.block_sizes)
        self.diagonal = diagonal_positions(template._input.block_sizes)
        self.correlated = np.repeat(sizes > 1, sizes)

    def fit(self, y: np.ndarray) -> ResponseFit | None:
        """Refit to response ``y``; None when the full refit is needed."""
        from mixedlm.estimation.optimizers import run_optimizer
        from mixedlm.estimation.reml import _LMMGradientObjective

        response = self.native.with_response(np.ascontiguousarray(y, dtype=float))
        reml = self.reml

        failed = []  # a non-finite step or value: leave this response to the full refit

        def evaluate(theta: np.ndarray) -> tuple[float, np.ndarray]:
            if np.all(np.isfinite(theta)):
                value, derivative = response.deviance_with_gradient(theta, reml)
                if np.isfinite(value) and np.all(np.isfinite(derivative)):
                    return value, derivative
            failed.append(theta)
            return np.inf, np.zeros_like(theta)

        objective = _LMMGradientObjective(evaluate)
        fit = run_optimizer(
            objective,
            self.start,
            method="L-BFGS-B",
            bounds=self.bounds,
            options=self.options,
            jac=objective.gradient,
            restart_edge=True,
        )
        if (
            failed
            or not fit.success
            or not np.isfinite(fit.fun)
            or np.any(fit.x[self.diagonal][self.correlated] <= SETTLED_THETA)
        ):
            return None
        theta = np.ascontiguousarray(fit.x, dtype=float)
        native = response.evaluate(theta, reml)
        if native is None:
            return None
        p = self.p

        def components(th: np.ndarray) -> np.ndarray:
            core = response.evaluate(np.asarray(th, dtype=float), reml)
            if core is None:
                return np.full(3 + p * p, np.nan)
            info = np.asarray(core[9], dtype=float).reshape(p, p)
            try:
                cinv = np.linalg.inv((info + info.T) / 2.0)
            except np.linalg.LinAlgError:
                return np.full(3 + p * p, np.nan)
            return np.concatenate([[core[4], core[8], core[5]], cinv.ravel()])

        return ResponseFit(
            theta=theta,
            beta=np.asarray(native[1], dtype=float),
            sigma=float(native[2]),
            information=np.asarray(native[9], dtype=float).reshape(p, p),
            components=components,
        )
