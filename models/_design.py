"""Evaluating a parsed formula on data: the model matrices of :func:`models.formula.build_design`.

Plain numeric columns are read directly (:class:`_PlainSpec`); factors, interactions and
transforms go to formulaic; group codes are built once per grouping factor. The result types
(:class:`Design`, :class:`RandomBlock`) are defined here and re-exported by :mod:`models.formula`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from models._errors import FormulaError, InvalidParameterError
from models._spec import (
    _ENCODED,
    FormulaSpec,
    RandomTerm,
    _decode,
    _encode,
    _split_top,
    _unquote,
    decode_message,
)
from models._spec import _QUOTED as _QUOTED_NAME


@dataclass(frozen=True, eq=False)
class RandomBlock:
    """Random-effects design of one block (one term, or one part of a ``||`` term).

    Attributes
    ----------
    group : str
        Grouping factor name (``"g1:g2"`` for an interaction of factors).
    terms : tuple of str
        Column names of ``Z`` as formulaic names them (``"Intercept"``, ``"Days"``, ...).
    Z : numpy.ndarray
        ``n x p`` random-effects model matrix (one column per entry of ``terms``).
    codes : numpy.ndarray
        Integer group index (0-based position in ``levels``) of every row; ``-1`` marks a
        level not seen when the design was built (only in :meth:`Design.transform`).
    levels : pandas.Index
        Group labels. A single factor keeps its own values (sorted, or the categorical order);
        a combination of factors uses strings ``"a:b"``.
    factors : tuple of str
        Data columns defining the groups.
    expr : str
        Random-effects right-hand side of the originating term.
    correlated : bool
        ``False`` when the block comes from a ``||`` term.
    """

    group: str
    terms: tuple[str, ...]
    Z: np.ndarray
    codes: np.ndarray
    levels: pd.Index
    factors: tuple[str, ...]
    expr: str
    correlated: bool
    _model_spec: Any = field(default=None, repr=False)
    _columns: tuple[int, ...] = field(default=(), repr=False)

    @property
    def n_levels(self) -> int:
        """Number of groups (levels of the grouping factor)."""
        return len(self.levels)


@dataclass(frozen=True, eq=False)
class Design:
    """Response, fixed-effects and random-effects design matrices of a mixed model.

    Attributes
    ----------
    spec : FormulaSpec
        The parsed formula.
    y : numpy.ndarray
        Response (float), one value per row used; all NaN when the design was built for new
        data without a response column.
    X : pandas.DataFrame
        Fixed-effects model matrix (float), columns named by formulaic (``Intercept``,
        ``Days``, ``age:Sex[T.Male]``), indexed like ``rows``.
    random : list of RandomBlock
        One block per random term after ``||`` expansion and ``/`` nesting, in formula order.
    rows : pandas.Index
        Index labels of the data rows used.
    n_dropped : int
        Rows left out because a variable the model uses was missing.
    """

    spec: FormulaSpec
    y: np.ndarray
    X: pd.DataFrame
    random: list[RandomBlock]
    rows: pd.Index
    n_dropped: int
    _fixed_spec: Any = field(default=None, repr=False)

    @property
    def n_obs(self) -> int:
        """Number of rows used."""
        return len(self.rows)

    def transform(self, data: pd.DataFrame, *, random: bool = True) -> Design:
        """Build the same design (same coding, same group levels) for other rows.

        Parameters
        ----------
        data : pandas.DataFrame
            New data with the predictor columns (the response column is optional).
        random : bool, default True
            Also build the random-effects blocks (needs the grouping columns).

        Returns
        -------
        Design
            Rows with a missing predictor are left out (see ``rows``); group levels not seen
            in the original data get code ``-1``; ``y`` is NaN when the response is absent.

        Raises
        ------
        FormulaError
            When a needed column is missing or cannot be encoded as before.
        """
        return _transform(self, data, random=random)


def _required_variables(text: str) -> set[str]:
    return set(_required_variables_of(text))


@functools.lru_cache(maxsize=512)
def _required_variables_of(text: str) -> frozenset[str]:
    """Return the data columns an expression reads (names in backticks without them).

    formulaic's own ``required_variables`` leaves out the argument of a stateful transform
    (``poly(x, 2)``, ``bs``, ``center``, ``scale``), so the names are read from each factor's
    code here, with no function known: every call is a callable, every other name a column.
    """
    from formulaic import Formula
    from formulaic.transforms import TRANSFORMS as FORMULAIC_TRANSFORMS
    from formulaic.utils.variables import get_required_variables

    names: set[str] = set()
    for term in Formula(_encode(text)):
        for factor in term.factors:
            method = factor.eval_method.value
            if method == "lookup":
                names.add(str(factor.expr))
            elif method == "python":
                for v in get_required_variables(str(factor.expr), {}):
                    root = str(v).split(".", 1)[0]
                    if any(role.value == "value" for role in v.roles) and not (
                        root in FORMULAIC_TRANSFORMS or root in _CONTEXT
                    ):
                        names.add(root)
    return frozenset(
        bytes.fromhex(m.group(1)).decode("utf-8") if (m := _ENCODED.fullmatch(n)) else n
        for n in names
    )


def _response_variables(spec: FormulaSpec, columns: pd.Index) -> set[str]:
    if spec.response_is_column or spec.response in columns:
        return {spec.response}
    return _required_variables(spec.response)


def _sorted_levels(values: pd.Series) -> pd.Index:
    if isinstance(values.dtype, pd.CategoricalDtype):
        return pd.Index(values.cat.remove_unused_categories().cat.categories)
    uniques = pd.unique(values)
    try:
        return pd.Index(np.sort(uniques))
    except TypeError:
        return pd.Index(uniques)


def _group_codes(frame: pd.DataFrame, factors: tuple[str, ...]) -> tuple[np.ndarray, pd.Index]:
    if len(factors) == 1:
        values = frame[factors[0]]
        if values.dtype.kind in "iuf" or pd.api.types.infer_dtype(values) == "string":
            # one pass: sorted levels and the code of each row (as _sorted_levels would sort)
            codes, uniques = pd.factorize(values, sort=True)
            return codes.astype(np.int64), pd.Index(uniques)
        levels = _sorted_levels(values)
        return levels.get_indexer(values).astype(np.int64), levels
    parts = []
    for name in factors:
        lv = _sorted_levels(frame[name])
        parts.append((lv, lv.get_indexer(frame[name]).astype(np.int64)))
    key = np.zeros(len(frame), dtype=np.int64)
    for lv, c in parts:
        key = key * len(lv) + c
    uniq, codes = np.unique(key, return_inverse=True)
    labels = []
    for k in uniq:
        idx = []
        for lv, _ in reversed(parts):
            idx.append(lv[k % len(lv)])
            k //= len(lv)
        labels.append(":".join(str(v) for v in reversed(idx)))
    return codes.astype(np.int64), pd.Index(labels, dtype=object)


def _new_codes(frame: pd.DataFrame, block: RandomBlock) -> np.ndarray:
    if len(block.factors) == 1:
        return block.levels.get_indexer(frame[block.factors[0]]).astype(np.int64)
    labels = frame[list(block.factors)].astype(str).agg(":".join, axis=1)
    return block.levels.get_indexer(labels).astype(np.int64)


def _defined_on(name: str, func: Any, inside: Any, domain: str) -> Any:
    """``func`` that refuses values outside its domain (NumPy would give NaN and a warning)."""

    def checked(x: Any) -> Any:
        values = np.asarray(x, dtype=float)
        outside = ~inside(values) & ~np.isnan(values)
        if outside.any():
            first = int(np.flatnonzero(outside)[0])
            label = x.index[first] if isinstance(x, pd.Series) else first
            label = label.item() if isinstance(label, np.generic) else label
            raise ValueError(
                f"{name}() is defined for {domain} only; {int(outside.sum())} value(s) are not "
                f"(the first in row {label!r}: {float(values[first]):g})"
            )
        return func(x)

    return checked


_CONTEXT = {
    "sqrt": _defined_on("sqrt", np.sqrt, lambda v: v >= 0, "values >= 0"),
    "log": _defined_on("log", np.log, lambda v: v > 0, "positive values"),
    "exp": np.exp,
}

_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class _PlainMatrix:
    """A model matrix of plain numeric columns, shaped like the part of formulaic's we read."""

    def __init__(self, values: np.ndarray, spec: _PlainSpec) -> None:
        self.values = values
        self.columns = list(spec.names)
        self.model_spec = spec
        self.shape = values.shape

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype, copy=False)


@dataclass(frozen=True)
class _PlainSpec:
    """An expression of an optional intercept and numeric columns, evaluated without formulaic.

    Most formulas of this package's users are of this kind (``1 + week``, ``trait + week``);
    formulaic gives the same matrix (same column names and order) in about 50 times the time,
    which dominates small fits. Anything else (factors, interactions, transforms, booleans)
    goes to formulaic.
    """

    intercept: bool
    variables: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return (("Intercept",) if self.intercept else ()) + self.variables

    @property
    def term_indices(self) -> dict[str, list[int]]:
        return {name: [i] for i, name in enumerate(self.names)}

    def get_model_matrix(self, frame: pd.DataFrame, na_action: str = "raise") -> _PlainMatrix:
        columns = [np.ones(len(frame))] if self.intercept else []
        for name in self.variables:
            values = frame[name].to_numpy(dtype=float)
            if np.isnan(values).any():
                raise ValueError(f"missing values in {name!r}")
            columns.append(values)
        values = np.column_stack(columns) if columns else np.empty((len(frame), 0))
        return _PlainMatrix(values, self)


def _plain_spec(text: str, frame: pd.DataFrame) -> _PlainSpec | None:
    """Return the expression as a :class:`_PlainSpec`, or None if formulaic must evaluate it."""
    tokens = [t.strip() for t in (_split_top(text, "+") if "`" in text else text.split("+"))]
    intercept = "0" not in tokens
    variables = []
    for token in tokens:
        if token in ("0", "1"):
            continue
        quoted = _QUOTED_NAME.fullmatch(token)
        if quoted:
            variables.append(_unquote(quoted.group(1)))
        elif _PLAIN_NAME.match(token):
            variables.append(token)
        else:
            return None
    if len(set(variables)) != len(variables) or (not intercept and "1" in tokens):
        return None
    for name in variables:
        if name not in frame.columns:
            return None
        if not isinstance(frame.columns.get_loc(name), int):  # a repeated column name
            return None
        if frame[name].dtype.kind not in "iuf":
            return None
    return _PlainSpec(intercept=intercept, variables=tuple(variables))


def _with_encoded(frame: pd.DataFrame, code: str) -> pd.DataFrame:
    """``frame`` with a column under the encoded name of each quoted name ``code`` uses."""
    encoded = {m.group(0): m.group(1) for m in _ENCODED.finditer(code)}
    if not encoded:
        return frame
    extra = {
        key: frame[bytes.fromhex(hexed).decode("utf-8")]
        for key, hexed in encoded.items()
        if bytes.fromhex(hexed).decode("utf-8") in frame.columns
    }
    return frame.assign(**extra)


def _matrix(spec_or_text: Any, frame: pd.DataFrame, what: str, formula: str) -> Any:
    from formulaic import ModelSpec, model_matrix

    if isinstance(spec_or_text, str):
        spec_or_text = _plain_spec(spec_or_text, frame) or _encode(spec_or_text)
    try:
        if isinstance(spec_or_text, _PlainSpec):
            mm = spec_or_text.get_model_matrix(frame, na_action="raise")
        elif isinstance(spec_or_text, ModelSpec):
            data = _with_encoded(frame, str(spec_or_text.formula))
            mm = spec_or_text.get_model_matrix(data, na_action="raise")
        else:
            data = _with_encoded(frame, spec_or_text)
            mm = model_matrix(spec_or_text, data, na_action="raise", context=_CONTEXT)
    except Exception as err:  # formulaic raises many error types while materialising
        raise FormulaError(
            f"build_design: could not evaluate the {what} of {formula!r} on the data: "
            f"{decode_message(err)}"
        ) from err
    return mm


def _split_blocks(term: RandomTerm, mm: Any) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    names = tuple(_decode(str(c)) for c in mm.columns)
    if term.correlated:
        return [(names, tuple(range(len(names))))]
    blocks = []
    for indices in mm.model_spec.term_indices.values():
        idx = tuple(int(i) for i in indices)
        if idx:
            blocks.append((tuple(names[i] for i in idx), idx))
    return blocks


def _refuse_invisible(data: pd.DataFrame, needed: set[str], factors: set[str]) -> None:
    """Refuse invisible characters in the names of the formula's columns and in its group ids.

    A column ``x`` followed by a zero-width space would be reported as missing, and two ids
    that differ only by one would be two groups; both are named instead.
    """
    from _empathic_base.invisible import INVISIBLE, invisible_problems

    problems = [
        p
        for p in invisible_problems(data, id_cols=sorted(factors))
        if p["value"] is not None or INVISIBLE.sub("", str(p["column"])) in needed
    ]
    if problems:
        shown = "; ".join(
            f"column {p['column']!r}"
            + ("" if p["value"] is None else f", value {p['value']!r}")
            + f": {p['reason']}"
            for p in problems[:10]
        )
        more = f"; ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise InvalidParameterError(
            "build_design: column names or grouping ids of the data hold invisible characters "
            f"({len(problems)}): {shown}{more}"
        )


def _used_columns(
    data: pd.DataFrame, needed: set[str], *, where: str, formula: str
) -> tuple[pd.DataFrame, np.ndarray]:
    """Return the columns the formula uses (in the data's order) and which rows are complete."""
    missing = sorted(v for v in needed if v not in data.columns)
    if missing:
        raise FormulaError(
            f"{where}: the data lack the column(s) {missing} used by the formula {formula!r}"
        )
    ordered = [c for c in data.columns if c in needed]
    if not data.columns.is_unique:
        frame = data.loc[:, ordered]
        return frame, frame.notna().all(axis=1).to_numpy()
    # column by column: 3x faster than .loc and notna().all(axis=1) on small data
    columns = {c: data[c] for c in ordered}
    keep = np.ones(len(data), dtype=bool)
    for values in columns.values():
        keep &= ~pd.isna(values.to_numpy())
    if not columns:  # an intercept-only model: every row, no column
        return pd.DataFrame(index=data.index), keep
    return pd.DataFrame(columns, copy=False), keep


def _clean_frame(frame: pd.DataFrame) -> pd.DataFrame:
    categorical = [c for c, t in frame.dtypes.items() if isinstance(t, pd.CategoricalDtype)]
    if not categorical:
        return frame
    out = frame.copy()
    for name in categorical:
        out[name] = out[name].cat.remove_unused_categories()
    return out


def _response(spec: FormulaSpec, frame: pd.DataFrame) -> np.ndarray:
    if spec.response_is_column or spec.response in frame.columns:
        col = frame[spec.response]
        if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
            raise FormulaError(
                f"build_design: the response column {spec.response!r} must be numeric; "
                f"got dtype {col.dtype}"
            )
        return col.to_numpy(dtype=float)
    mm = _matrix(f"0 + {spec.response}", frame, "response", spec.formula)
    if mm.shape[1] != 1:
        raise FormulaError(
            f"build_design: the response {spec.response!r} of {spec.formula!r} must evaluate "
            f"to one numeric column; got {mm.shape[1]} columns"
        )
    return np.asarray(mm, dtype=float)[:, 0]


def _build_design(spec: FormulaSpec, data: pd.DataFrame) -> Design:
    """Evaluate the formula on the data (:func:`models.formula.build_design`)."""
    if not isinstance(spec, FormulaSpec):
        raise InvalidParameterError(
            "the `spec` parameter of build_design must be a FormulaSpec (from parse_formula); "
            f"got {type(spec).__name__}"
        )
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of build_design must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    needed = _response_variables(spec, data.columns)
    needed |= _required_variables(spec.fixed)
    for term in spec.random:
        needed |= _required_variables(term.expr)
        needed |= set(term.factors)
    _refuse_invisible(data, needed, {f for term in spec.random for f in term.factors})
    frame, keep = _used_columns(data, needed, where="build_design", formula=spec.formula)
    frame = _clean_frame(frame if keep.all() else frame.loc[keep])
    n_dropped = int((~keep).sum())
    if len(frame) == 0:
        raise FormulaError(
            f"build_design: no row of the data has every variable of {spec.formula!r} present"
        )
    y = _response(spec, frame)
    if not np.all(np.isfinite(y)):
        raise FormulaError(f"build_design: the response of {spec.formula!r} has non-finite values")
    fixed_mm = _matrix(spec.fixed, frame, "fixed part", spec.formula)
    X = pd.DataFrame(
        np.asarray(fixed_mm, dtype=float),
        columns=[_decode(str(c)) for c in fixed_mm.columns],
        index=frame.index,
    )
    blocks: list[RandomBlock] = []
    for term in spec.random:
        mm = _matrix(term.expr, frame, f"random-effects expression {term.expr!r}", spec.formula)
        Zfull = np.asarray(mm, dtype=float)
        codes, levels = _group_codes(frame, term.factors)
        for names, idx in _split_blocks(term, mm):
            blocks.append(
                RandomBlock(
                    group=term.group,
                    terms=names,
                    Z=np.ascontiguousarray(Zfull[:, list(idx)]),
                    codes=codes,
                    levels=levels,
                    factors=term.factors,
                    expr=term.expr,
                    correlated=term.correlated,
                    _model_spec=mm.model_spec,
                    _columns=idx,
                )
            )
    return Design(
        spec=spec,
        y=y,
        X=X,
        random=blocks,
        rows=frame.index,
        n_dropped=n_dropped,
        _fixed_spec=fixed_mm.model_spec,
    )


def _transform(design: Design, data: pd.DataFrame, *, random: bool) -> Design:
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of Design.transform must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    spec = design.spec
    needed = set(_required_variables(spec.fixed))
    if random:
        for block in design.random:
            needed |= _required_variables(block.expr) | set(block.factors)
    frame, keep = _used_columns(data, needed, where="Design.transform", formula=spec.formula)
    frame = frame.loc[keep]
    resp_vars = _response_variables(spec, data.columns)
    if resp_vars <= set(data.columns):
        full = data.loc[keep]
        y = np.full(len(frame), np.nan)
        ok = full[list(resp_vars)].notna().all(axis=1).to_numpy()
        if ok.any():
            y[ok] = _response(spec, full.loc[ok])
    else:
        y = np.full(len(frame), np.nan)
    fixed_mm = _matrix(design._fixed_spec, frame, "fixed part", spec.formula)
    X = pd.DataFrame(np.asarray(fixed_mm, dtype=float), columns=design.X.columns, index=frame.index)
    blocks: list[RandomBlock] = []
    if random:
        cache: dict[int, np.ndarray] = {}
        for block in design.random:
            key = id(block._model_spec)
            if key not in cache:
                mm = _matrix(
                    block._model_spec,
                    frame,
                    f"random-effects expression {block.expr!r}",
                    spec.formula,
                )
                cache[key] = np.asarray(mm, dtype=float)
            Z = np.ascontiguousarray(cache[key][:, list(block._columns)])
            blocks.append(
                RandomBlock(
                    group=block.group,
                    terms=block.terms,
                    Z=Z,
                    codes=_new_codes(frame, block),
                    levels=block.levels,
                    factors=block.factors,
                    expr=block.expr,
                    correlated=block.correlated,
                    _model_spec=block._model_spec,
                    _columns=block._columns,
                )
            )
    return Design(
        spec=spec,
        y=y,
        X=X,
        random=blocks,
        rows=frame.index,
        n_dropped=int((~keep).sum()),
        _fixed_spec=design._fixed_spec,
    )
