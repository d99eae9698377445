"""Questionnaire answers of the simulated participants: items, scores, the Qualtrics export."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from longitudinal.simulate.parameters import (
    _ALPHABET,
    _INSTRUMENTS,
    _ITEM_LOCATION_SD,
    _LATENT,
    _LATENT_CORR,
    _MAX_SESSIONS,
    _MIN_SESSIONS,
    _PAPER_PEOPLE,
    _PAPER_SESSIONS,
    _POST_BLOCKS,
    _QUALTRICS_META,
    _SD_STATE_CHANGE,
    _SD_STATE_OCCASION,
    _SD_STATE_PERSON,
    _STATE_WAVE_MEANS,
    _STATES,
    _TRAITS,
    _WAVE_TIME,
    WAVES,
    _Scale,
)
from surveys import SurveysWarning, load_instrument, score


def _num(x: float) -> float:
    """Round to 12 significant digits for a stable JSON text."""
    return float(f"{float(x):.12g}")


def _fmt(values: np.ndarray, decimals: int) -> list[str]:
    return [f"{v:.{decimals}f}" for v in values]


def _rounded(values: np.ndarray, decimals: int) -> np.ndarray:
    """Round as written: return the float of the decimal text."""
    return np.array([float(s) for s in _fmt(values, decimals)])


def _latent_correlation() -> np.ndarray:
    idx = {name: i for i, name in enumerate(_LATENT)}
    corr = np.eye(len(_LATENT))
    for (a, b), r in _LATENT_CORR.items():
        corr[idx[a], idx[b]] = corr[idx[b], idx[a]] = r
    return corr


def _item_params(scale: _Scale, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    k = len(scale.items)
    low, high = scale.loadings
    loadings = rng.uniform(low, high, size=k)
    base = ndtri(np.cumsum(scale.probs)[:-1])
    shift = rng.normal(0.0, _ITEM_LOCATION_SD, size=k) if k > 1 else np.zeros(1)
    thresholds = base[None, :] + shift[:, None]
    return loadings, thresholds


def _responses(
    eta: np.ndarray,
    scale: _Scale,
    loadings: np.ndarray,
    thresholds: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draw raw responses (reverse items written reversed), shape (n, items)."""
    noise = rng.standard_normal((eta.size, loadings.size))
    ystar = eta[:, None] * loadings[None, :] + noise * np.sqrt(1.0 - loadings**2)[None, :]
    keyed = scale.response_min + (ystar[:, :, None] > thresholds[None, :, :]).sum(axis=2)
    raw = keyed.astype(float)
    rev = scale.reversed_mask
    raw[:, rev] = scale.response_min + scale.response_max - raw[:, rev]
    return raw


def _score(items: pd.DataFrame, scale: _Scale) -> np.ndarray:
    """Score one scale of a simulated wave with :func:`surveys.score` (rows in input order)."""
    frame = items.loc[:, ["participant_id", *load_instrument(scale.instrument).items]]
    with warnings.catch_warnings():
        # only the scores are used here; reliability diagnostics (a one-item scale, a Heywood
        # case in a small sample) are the report's business, not the generator's
        warnings.simplefilter("ignore", SurveysWarning)
        result = score(frame, scale.instrument, id_col="participant_id")
    table = result.scores[result.scores["scale"] == scale.scale].set_index("id")
    return table["score"].reindex(items["participant_id"]).to_numpy(dtype=float)


def _expected_score(
    scale: _Scale, loadings: np.ndarray, thresholds: np.ndarray, mean: float, var: float
) -> float:
    """Return the population mean of the observed score for a N(mean, var) latent value."""
    sd = np.sqrt(loadings**2 * var + 1.0 - loadings**2)
    per_item = scale.response_min + ndtr((loadings[:, None] * mean - thresholds) / sd[:, None]).sum(
        axis=1
    )
    total = per_item.mean() if scale.scoring == "mean" else per_item.sum()
    return float(total * scale.multiplier)


def _sample_sd(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1))


def _rescale(raw: np.ndarray, target: dict[str, float]) -> np.ndarray:
    z = (raw - raw.mean()) / _sample_sd(raw)
    return np.clip(target["mean"] + target["sd"] * z, target["min"], target["max"])


def _allocate_sessions(n: int, rng: np.random.Generator) -> np.ndarray:
    total = round(n * _PAPER_SESSIONS / _PAPER_PEOPLE)
    counts = np.full(n, _MIN_SESSIONS)
    extra = max(total - counts.sum(), 0)
    weight = rng.gamma(0.35, 1.0, size=n) + 1e-9
    for _ in range(extra):
        open_ = counts < _MAX_SESSIONS
        w = np.where(open_, weight, 0.0)
        if w.sum() <= 0 or not open_.any():
            break
        counts[rng.choice(n, p=w / w.sum())] += 1
    return counts


def _questionnaire_order(items: dict[str, Any]) -> list[str]:
    """Order item ids by instrument (study order) and item number."""

    def key(item: str) -> tuple[int, int]:
        instrument, number = item.rsplit("_", 1)
        return _INSTRUMENTS.index(instrument), int(number)

    return sorted(items, key=key)


def _ids(n: int) -> list[str]:
    width = max(2, len(str(n)))
    return [f"P{i + 1:0{width}d}" for i in range(n)]


def _random_time(rng: np.random.Generator, hours: tuple[int, int]) -> timedelta:
    hour = int(rng.integers(hours[0], hours[1]))
    return timedelta(hours=hour, minutes=int(rng.integers(0, 60)), seconds=int(rng.integers(0, 60)))


def _simulate_surveys(
    rng_latent: np.random.Generator,
    rng_items: np.random.Generator,
    pids: list[str],
    calendar: dict[str, Any],
    missed_mid: set[str],
    skipped_person: str | None,
    skipped_item: str,
) -> tuple[dict[str, pd.DataFrame], dict[str, Any], np.ndarray, dict[str, Any] | None]:
    n = len(pids)
    corr = _latent_correlation()
    latent = rng_latent.standard_normal((n, len(_LATENT))) @ np.linalg.cholesky(corr).T
    lat = {name: latent[:, i] for i, name in enumerate(_LATENT)}
    change = rng_latent.standard_normal((n, len(_STATES)))
    occasion = rng_latent.standard_normal((n, len(_STATES), len(WAVES)))

    params = {scale.key: _item_params(scale, rng_items) for scale in (*_TRAITS, *_STATES)}
    answers: dict[str, dict[str, np.ndarray]] = {wave: {} for wave in WAVES}
    for scale in _TRAITS:
        raw = _responses(lat[scale.latent], scale, *params[scale.key], rng_items)
        answers["pre"].update({item: raw[:, j] for j, item in enumerate(scale.items)})
    for s, scale in enumerate(_STATES):
        for w, wave in enumerate(WAVES):
            eta = (
                _STATE_WAVE_MEANS[scale.key][wave]
                + _SD_STATE_PERSON * lat[scale.latent]
                + _SD_STATE_CHANGE * change[:, s] * _WAVE_TIME[wave]
                + _SD_STATE_OCCASION * occasion[:, s, w]
            )
            raw = _responses(eta, scale, *params[scale.key], rng_items)
            answers[wave].update({item: raw[:, j] for j, item in enumerate(scale.items)})

    surveys: dict[str, pd.DataFrame] = {}
    for wave in WAVES:
        cols: dict[str, Any] = {
            "participant_id": pids,
            "completed_at": [d.isoformat() for d in calendar[wave]],
        }
        cols.update({item: answers[wave][item] for item in _questionnaire_order(answers[wave])})
        frame = pd.DataFrame(cols)
        if wave == "mid" and missed_mid:
            frame = frame[~frame["participant_id"].isin(missed_mid)].reset_index(drop=True)
        surveys[wave] = frame

    skipped = None
    if skipped_person is not None:
        pre = surveys["pre"].copy()
        row = int(np.flatnonzero(pre["participant_id"].to_numpy() == skipped_person)[0])
        pre.loc[row, skipped_item] = np.nan
        surveys["pre"] = pre
        skipped = {
            "participant_id": skipped_person,
            "wave": "pre",
            "item": skipped_item,
            "file": "surveys/pre.csv",
            "row": row + 2,
        }
    return surveys, params, corr, skipped


@dataclass(frozen=True)
class _Observed:
    scores: pd.DataFrame  # participant_id, wave, scale, score
    trait_z: dict[str, np.ndarray]  # per trait key, aligned with the participant ids
    trait_sample: dict[str, dict[str, float]]
    state: dict[str, pd.DataFrame]  # per state key: index participant_id, columns waves
    state_sample: dict[str, dict[str, Any]]


def _observed_scores(surveys: dict[str, pd.DataFrame], pids: list[str]) -> _Observed:
    rows = []
    trait_z, trait_sample = {}, {}
    for scale in _TRAITS:
        sc = _score(surveys["pre"], scale)
        trait_sample[scale.key] = {"mean": float(sc.mean()), "sd": _sample_sd(sc)}
        trait_z[scale.key] = (sc - sc.mean()) / _sample_sd(sc)
        rows.append((pids, "pre", scale.key, sc))
    state, state_sample = {}, {}
    for scale in _STATES:
        table = pd.DataFrame(
            np.nan, index=pd.Index(pids, name="participant_id"), columns=list(WAVES)
        )
        for wave in WAVES:
            sc = _score(surveys[wave], scale)
            ids = surveys[wave]["participant_id"].to_numpy()
            table.loc[ids, wave] = sc
            rows.append((ids, wave, scale.key, sc))
        state[scale.key] = table
        state_sample[scale.key] = {
            "wave_mean": {w: float(table[w].mean()) for w in WAVES},
            "wave_sd": {w: float(table[w].std(ddof=1)) for w in WAVES},
            "sd_pre": float(table["pre"].std(ddof=1)),
        }
    scores = pd.concat(
        [
            pd.DataFrame({"participant_id": ids, "wave": wave, "scale": key, "score": sc})
            for ids, wave, key, sc in rows
        ],
        ignore_index=True,
    )
    order = {
        "participant_id": {p: i for i, p in enumerate(pids)},
        "wave": {w: i for i, w in enumerate(WAVES)},
        "scale": {s.key: i for i, s in enumerate((*_TRAITS, *_STATES))},
    }
    sort_key = pd.DataFrame({col: scores[col].map(rank) for col, rank in order.items()})
    scores = scores.iloc[sort_key.sort_values(list(order), kind="stable").index]
    return _Observed(
        scores=scores.reset_index(drop=True),
        trait_z=trait_z,
        trait_sample=trait_sample,
        state=state,
        state_sample=state_sample,
    )


def _qualtrics_export(
    rng: np.random.Generator, post: pd.DataFrame, post_dates: list[date], defects: bool
) -> tuple[pd.DataFrame, list[int]]:
    """Build the Qualtrics data rows (strings) and list the file lines of preview rows."""
    items = [item for scale in _STATES for item in scale.items]
    columns = [name for name, _, _ in _QUALTRICS_META]
    columns += [_qualtrics_column(item) for item in items] + ["participant_id"]
    answers = post.loc[:, items].to_dict("records")
    rows = [
        _qualtrics_row(rng, post_dates[i], str(pid), answers[i], preview=False)
        for i, pid in enumerate(post["participant_id"])
    ]
    rows.sort(key=lambda row: (row["RecordedDate"], row["participant_id"]))
    preview_lines: list[int] = []
    if defects:
        day = min(post_dates) - timedelta(days=int(rng.integers(2, 6)))
        fake = {
            item: float(rng.integers(1, 6)) - (1.0 if item.startswith("who5") else 0.0)
            for item in items
        }
        rows.insert(0, _qualtrics_row(rng, day, "", fake, preview=True))
        preview_lines = [4]
    return pd.DataFrame(rows, columns=columns), preview_lines


def _qualtrics_column(item: str) -> str:
    instrument, number = item.rsplit("_", 1)
    return f"Q{_POST_BLOCKS[instrument]}_{number}"


def _qualtrics_row(
    rng: np.random.Generator,
    day: date,
    pid: str,
    answers: dict[str, float],
    *,
    preview: bool,
) -> dict[str, str]:
    seconds = int(rng.integers(150, 901))
    end = datetime.combine(day, datetime.min.time()) + _random_time(rng, (9, 23))
    start = end - timedelta(seconds=seconds)
    response_id = "R_" + "".join(_ALPHABET[rng.integers(0, len(_ALPHABET), size=15)])
    net = ("192.0.2", "198.51.100", "203.0.113")[int(rng.integers(0, 3))]
    ip = f"{net}.{int(rng.integers(1, 255))}"
    stamp = "%Y-%m-%d %H:%M:%S"
    row = {
        "StartDate": start.strftime(stamp),
        "EndDate": end.strftime(stamp),
        "Status": "Survey Preview" if preview else "IP Address",
        "IPAddress": "" if preview else ip,
        "Progress": "100",
        "Duration (in seconds)": str(seconds),
        "Finished": "True",
        "RecordedDate": end.strftime(stamp),
        "ResponseId": response_id,
        "DistributionChannel": "preview" if preview else "anonymous",
        "UserLanguage": "EN",
    }
    for item, value in answers.items():
        row[_qualtrics_column(item)] = "" if np.isnan(value) else str(int(value))
    row["participant_id"] = pid
    return row


def _scale_fields(scale: _Scale) -> dict[str, Any]:
    return {
        "instrument": scale.instrument,
        "latent": scale.latent,
        "items": list(scale.items),
        "reverse": list(scale.reverse_items),
        "response_min": scale.response_min,
        "response_max": scale.response_max,
        "scoring": scale.scoring,
        "multiplier": scale.multiplier,
    }
