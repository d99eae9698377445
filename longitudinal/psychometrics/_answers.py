"""The keyed item answers of a loaded study's scale, as the psychometric analyses read them."""

from __future__ import annotations

from typing import Any

import pandas as pd


def study_answers(study: Any, instrument: Any) -> Any:
    """Return ``keyed(key)``, the keyed answers of a scale of ``instrument`` in the study.

    Long, as :func:`surveys.keyed_item_answers` gives them: ``__id, __wave, item, value``.
    """
    answers = study.item_answers
    mine = answers.loc[answers["instrument"] == instrument.name]

    def keyed(key: Any) -> pd.DataFrame:
        rows = mine.loc[mine["scale"] == key.name]
        return pd.DataFrame(
            {
                "__id": rows[study.config.id_col].to_numpy(dtype=object),
                "__wave": rows["wave"].to_numpy(dtype=object),
                "item": rows["item"].to_numpy(dtype=object),
                "value": rows["answer"].to_numpy(dtype="float64"),
            }
        )

    return keyed
