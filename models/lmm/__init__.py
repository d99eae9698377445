"""Linear mixed models in lme4 syntax, fitted by mixedlm, with Satterthwaite or Kenward-Roger df.

:class:`LinearMixedModel` (``model``) is the estimator; beside it are its predictions and ICC
(``_predict``), summaries and JSON (``_summary``), the likelihood-ratio test (``_lrt``), the
lmerTest and pbkrtest degrees of freedom (``_satterthwaite``, ``_kenward_roger``) and the mixedlm
engine glue (``_mixedlm``).
"""

from models.lmm._lrt import LikelihoodRatioTest
from models.lmm._summary import DICT_KEYS, MixedModelSummary
from models.lmm.model import LinearMixedModel, lrt

__all__ = ["DICT_KEYS", "LikelihoodRatioTest", "LinearMixedModel", "MixedModelSummary", "lrt"]
