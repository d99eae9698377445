"""Predictions and intraclass correlations of a fitted :class:`models.lmm.LinearMixedModel`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from models._errors import (
    InvalidParameterError,
)
from models.formula import RE_FORM_NONE
from models.lmm._smooth_summary import smooth_predict


class _Predictions:
    """predict() and icc() of a fitted linear mixed model."""

    def predict(
        self,
        data: pd.DataFrame | None = None,
        *,
        re_form: str | None = None,
        allow_new_levels: bool = True,
    ) -> pd.Series:
        """Predicted means, with or without the random effects.

        Parameters
        ----------
        data : pandas.DataFrame, optional
            New rows; default the rows used in the fit.
        re_form : {None, "~0", "NA"}, default None
            ``None`` includes every random effect (conditional prediction, lme4's default);
            ``"~0"`` or ``"NA"`` gives the population-level prediction ``X beta``.
        allow_new_levels : bool, default True
            A level not seen in the fit contributes a random effect of 0 (the population
            mean); ``False`` raises instead.

        Returns
        -------
        pandas.Series
            Indexed like ``data``; NaN where a predictor is missing.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            For an unknown ``re_form``, or new levels with ``allow_new_levels=False``.
        FormulaError
            When ``data`` lacks a needed column.

        Notes
        -----
        Matches ``predict.merMod(newdata, re.form, allow.new.levels = TRUE)`` of lme4. For a
        model with a smooth term the prediction is the parametric part plus the smooths at the
        new values, as ``predict(fit$gam, newdata)`` of gamm4; a factor smooth
        ``s(x, f, bs="fs", xt="cr")`` adds each row's curve of its level of ``f`` (nothing for
        a level not seen in the fit, where gamm4 gives NA) unless ``re_form`` is ``"~0"`` or
        ``"NA"``, which leaves factor smooths out (``predict(fit$gam, exclude=...)``). The
        other random effects of such a model are not added yet.
        """
        self._check_fitted("predict")
        if getattr(self, "smooth_", None) is not None:
            if re_form is not None and re_form not in RE_FORM_NONE:
                raise InvalidParameterError(
                    "the `re_form` parameter of LinearMixedModel.predict must be None or one of "
                    f"{list(RE_FORM_NONE)}; got {re_form!r}"
                )
            return smooth_predict(
                self, data, population=re_form is not None, allow_new_levels=allow_new_levels
            )
        if re_form is not None and re_form not in RE_FORM_NONE:
            raise InvalidParameterError(
                "the `re_form` parameter of LinearMixedModel.predict must be None (all random "
                f"effects) or one of {list(RE_FORM_NONE)} (none); got {re_form!r}"
            )
        with_random = re_form is None
        if data is None:
            if with_random:
                return self.fitted_.rename("predicted")
            X = self.design_.X.to_numpy()
            return pd.Series(X @ self.beta_.to_numpy(), index=self.design_.rows, name="predicted")
        new = self.design_.transform(data, random=with_random)
        eta = new.X.to_numpy() @ self.beta_.to_numpy()
        if with_random:
            for block, b in zip(new.random, self._b_terms, strict=True):
                unseen = block.codes < 0
                if unseen.any() and not allow_new_levels:
                    labels = sorted(
                        {
                            str(v)
                            for v in data.loc[new.rows[unseen], list(block.factors)]
                            .astype(str)
                            .agg(":".join, axis=1)
                        }
                    )
                    raise InvalidParameterError(
                        "LinearMixedModel.predict: levels not seen in the fit for "
                        f"{block.group!r}: {labels}; pass allow_new_levels=True to predict them "
                        "at the population mean"
                    )
                contrib = np.einsum("ij,ij->i", block.Z, b[np.where(unseen, 0, block.codes)])
                eta = eta + np.where(unseen, 0.0, contrib)
        out = pd.Series(np.nan, index=data.index, name="predicted")
        out.loc[new.rows] = eta
        return out

    def icc(self) -> pd.DataFrame:
        """Intraclass correlations of a random-intercept model.

        Returns
        -------
        pandas.DataFrame
            One row per grouping factor: ``group, variance, icc`` with
            ``icc = variance / (sum of random-intercept variances + residual variance)``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            When a random-effects term has a slope (the ICC then depends on the covariates).

        Notes
        -----
        For one grouping factor this is the usual ``tau^2 / (tau^2 + sigma^2)``, the
        correlation of two observations in the same group.
        """
        self._check_no_smooth("icc")
        slopes = [b.group for b in self.design_.random if b.terms != ("Intercept",)]
        if slopes:
            raise InvalidParameterError(
                "LinearMixedModel.icc is defined for random-intercept models only; the terms "
                f"for {sorted(set(slopes))} have slopes or no intercept"
            )
        rand = self.random_[self.random_["group"] != "Residual"]
        total = float(rand["variance"].sum() + self.sigma_**2)
        return pd.DataFrame(
            {
                "group": rand["group"].to_numpy(),
                "variance": rand["variance"].to_numpy(dtype=float),
                "icc": rand["variance"].to_numpy(dtype=float) / total,
            }
        )
