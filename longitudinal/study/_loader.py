"""The loading pass of :func:`longitudinal.load_study`: every file checked against the others.

One object, because every check adds to the same failure list and exclusion log and the later
checks read what the earlier ones found (known participants, sessions, survey dates).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal.study.config import (
    CONFIG_FILE,
    Failures,
    StudyConfig,
    SurveySpec,
    _is_missing,
    _relative,
    instrument_is_path,
)
from longitudinal.study.tables import (
    _RATING_REQUIRED,
    _SESSION_REQUIRED,
    EXCLUSION_COLUMNS,
    _duplicate_reason,
    _floats,
    _member,
    _numeric_column,
    _Table,
    _time_problem,
    _times,
    read_table,
)
from surveys import InputValidationError, SurveysError

ITEM_ANSWER_COLUMNS = ["id", "wave", "instrument", "scale", "item", "answer"]
"""Columns of :attr:`longitudinal.Study.item_answers` (``id`` is the study's id column)."""


class _Loader:
    """One loading pass: collects failures over every file, then gives the Study's fields."""

    def __init__(self, root: Path, config: StudyConfig) -> None:
        self.root = root
        self.cfg = config
        self.failures = Failures()
        self.exclusions: list[dict[str, Any]] = []
        self.inputs: list[str] = [CONFIG_FILE]
        self.meta: dict[str, Any] = {"files": {}}
        self.features: list[str] = []
        self.numeric_columns: list[str] = []
        self.missing_rating: list[int] = []

    # -- helpers -----------------------------------------------------------------------------

    def exclude(self, file: str, row: int, reason: str, scope: str = "study") -> None:
        self.exclusions.append({"file": file, "row": int(row), "reason": reason, "scope": scope})

    def run(self) -> dict[str, Any]:
        """Check every file; return the fields of :class:`longitudinal.study.loaded.Study`."""
        cfg = self.cfg
        instruments = self.load_instruments()
        participants = self.read_participants()
        known = None if participants is None else set(participants.data[cfg.id_col])
        sessions = self.read_sessions(known)
        ratings = self.read_ratings(known, sessions)
        surveys = self.read_surveys(instruments, known)
        self.failures.raise_if_any(f"the study directory {str(self.root)!r} is not usable")
        assert participants is not None and sessions is not None and ratings is not None

        survey_dates = self.survey_dates(surveys)
        sessions_df, ratings_df = self.apply_exclusions(sessions, ratings, survey_dates)
        scored = self.score(surveys, instruments)
        item_answers = self.item_answers(surveys, instruments, scored["scores"])
        participants_df = self.convert_participants(participants)
        for _, export, _ in surveys:
            for rec in export.responses.excluded.itertuples(index=False):
                self.exclude(_relative(rec.file, self.root), rec.row, str(rec.reason))
        exclusions = pd.DataFrame(self.exclusions, columns=EXCLUSION_COLUMNS)
        exclusions["row"] = exclusions["row"].astype("int64")
        order = {f: i for i, f in enumerate(self.inputs)}
        exclusions = exclusions.assign(_o=exclusions["file"].map(order).fillna(len(order)))
        exclusions = exclusions.sort_values(["_o", "row"], kind="mergesort").drop(columns="_o")
        exclusions = exclusions.reset_index(drop=True)

        self.meta["scoring"] = {"min_valid": cfg.min_valid, "prorate": cfg.prorate}
        return dict(
            root=self.root,
            config=cfg,
            participants=participants_df,
            sessions=sessions_df,
            ratings=ratings_df,
            survey_dates=survey_dates,
            scores=scored["scores"],
            reliability=scored["reliability"],
            item_stats=scored["item_stats"],
            missing=scored["missing"],
            item_answers=item_answers,
            exclusions=exclusions,
            instruments={inst.name: inst for inst in instruments.values()},
            instrument_names={entry: inst.name for entry, inst in instruments.items()},
            inputs=tuple(self.inputs),
            session_features=tuple(self.features),
            meta=self.meta,
            numeric_session_columns=tuple(self.numeric_columns),
        )

    # -- instruments ---------------------------------------------------------------------------

    def load_instruments(self) -> dict[str, Any]:
        from surveys.instruments import load_instrument

        out: dict[str, Any] = {}
        for i, spec in enumerate(self.cfg.surveys, start=1):
            for name in spec.instruments:
                if name in out:
                    continue
                target: str | Path = name
                if instrument_is_path(name):
                    target = self.root / name
                    self.inputs.append(name)
                try:
                    out[name] = load_instrument(target)
                except (SurveysError, OSError) as err:
                    self.failures.add(
                        CONFIG_FILE, str(err), column=f"surveys[{i}].instruments", value=name
                    )
        return out

    # -- participants --------------------------------------------------------------------------

    def read_participants(self) -> _Table | None:
        cfg = self.cfg
        rel = cfg.participants_file
        self.inputs.append(rel)
        table = read_table(
            self.root, rel, self.failures, required=[cfg.id_col], section="participants"
        )
        if table is None:
            return None
        ids = table.data[cfg.id_col]
        for idx in ids.index[ids == ""]:
            self.failures.add(rel, "missing participant id", row=table.rows[idx], column=cfg.id_col)
        dup = ids[(ids != "") & ids.duplicated(keep=False)]
        for value, group in dup.groupby(dup, sort=False):
            reasons = _duplicate_reason(table.rows[group.index], "participant id")
            for idx in group.index:
                self.failures.add(
                    rel, reasons[idx], row=table.rows[idx], column=cfg.id_col, value=value
                )
        self.meta["files"][rel] = {"rows": len(table.data)}
        return table

    def convert_participants(self, table: _Table) -> pd.DataFrame:
        data = table.data.copy()
        for col in data.columns:
            if col == self.cfg.id_col:
                continue
            numeric = _numeric_column(data[col])
            if numeric is not None and data[col].ne("").any():
                data[col] = numeric
            else:
                data[col] = data[col].replace("", np.nan)
        return data.reset_index(drop=True)

    # -- sessions ------------------------------------------------------------------------------

    def read_sessions(self, known: set[str] | None) -> _Table | None:
        cfg = self.cfg
        rel = cfg.sessions_file
        self.inputs.append(rel)
        id_col = cfg.id_col
        table = read_table(
            self.root,
            rel,
            self.failures,
            required=[id_col, *_SESSION_REQUIRED],
            names=cfg.column_names,
            section="sessions",
        )
        if table is None:
            return None
        data, rows = table.data, table.rows
        self.check_ids(table, id_col, known, what="participant")
        sid = data["session_id"]
        for idx in sid.index[sid == ""]:
            self.failures.add(rel, "missing session id", row=rows[idx], column="session_id")
        dup = sid[(sid != "") & sid.duplicated(keep=False)]
        for value, group in dup.groupby(dup, sort=False):
            reasons = _duplicate_reason(rows[group.index], "session id")
            for idx in group.index:
                self.failures.add(
                    rel, reasons[idx], row=rows[idx], column="session_id", value=value
                )
        started = _times(data["started_at"])
        for idx in started.index[started.isna()]:
            value = data.at[idx, "started_at"]
            reason = _time_problem(value)
            if value == "":
                reason = "missing session start time"
            self.failures.add(rel, reason, row=rows[idx], column="started_at", value=value or None)
        converted = data.copy()
        converted["started_at"] = started
        for col in data.columns:
            if col in (id_col, *_SESSION_REQUIRED):
                continue
            numeric = _numeric_column(data[col])
            if numeric is not None:
                if data[col].ne("").any():
                    converted[col] = numeric
                    self.features.append(col)
                else:
                    converted[col] = np.nan
                continue
            _, finite, empty = _floats(data[col])
            if finite.any():
                # a numeric feature column with stray text: report the cells
                cells = data[col].to_numpy(dtype=object)
                for idx in np.flatnonzero(~finite & ~empty):
                    v = cells[idx]
                    self.failures.add(
                        rel,
                        "not a finite number in a numeric feature column"
                        if v.strip().lower().lstrip("+-") in ("inf", "infinity", "nan")
                        else "non-numeric value in a numeric feature column",
                        row=rows.iloc[idx],
                        column=col,
                        value=v,
                    )
            else:
                converted[col] = data[col].replace("", np.nan)
        self.numeric_columns = list(self.features)
        if cfg.session_features is not None:
            self.features = self.chosen_features(rel, data, cfg.session_features)
        self.meta["files"][rel] = {"rows": len(data)}
        return _Table(rel, converted, rows)

    def chosen_features(self, rel: str, data: pd.DataFrame, listed: Sequence[str]) -> list[str]:
        """Check the ``[roles] session_features`` of study.toml: numeric columns of sessions.csv."""
        for name in listed:
            if name not in data.columns:
                self.failures.add(
                    CONFIG_FILE,
                    f"roles.session_features names a column that {rel} does not have; its "
                    f"numeric columns are: {', '.join(self.features) or 'none'}",
                    column="roles.session_features",
                    value=name,
                )
            elif name not in self.features:
                self.failures.add(
                    CONFIG_FILE,
                    f"roles.session_features names a column of {rel} that is not numeric",
                    column="roles.session_features",
                    value=name,
                )
        return [name for name in listed if name in self.features]

    def check_ids(self, table: _Table, id_col: str, known: set[str] | None, *, what: str) -> None:
        ids = table.data[id_col].to_numpy(dtype=object)
        missing = ids == ""
        unknown = ~missing & ~_member(ids, known)
        rows = table.rows.to_numpy()
        for k in np.flatnonzero(missing | unknown):
            if missing[k]:
                self.failures.add(table.file, f"missing {what} id", row=rows[k], column=id_col)
            else:
                self.failures.add(
                    table.file,
                    f"unknown participant (not in {self.cfg.participants_file})",
                    row=rows[k],
                    column=id_col,
                    value=ids[k],
                )

    # -- ratings -------------------------------------------------------------------------------

    def read_ratings(self, known: set[str] | None, sessions: _Table | None) -> _Table | None:
        cfg = self.cfg
        spec = cfg.ratings
        rel = spec.file
        self.inputs.append(rel)
        id_col = cfg.id_col
        required = [id_col, *_RATING_REQUIRED, spec.column]
        table = read_table(
            self.root,
            rel,
            self.failures,
            required=required,
            names=cfg.column_names,
            section="ratings",
        )
        if table is None:
            return None
        if table.data.empty:
            self.failures.add(
                rel,
                "the file has a header but no ratings; the analyses need the ratings of the "
                "stories",
                row=1,
            )
            return None
        data, rows = table.data, table.rows
        self.check_ids(table, id_col, known, what="participant")
        converted = data.copy()
        sid = data["session_id"].to_numpy(dtype=object)
        pid = data[id_col].to_numpy(dtype=object)
        row_of = rows.to_numpy()
        no_session = sid == ""
        unknown_session = np.zeros(len(data), dtype=bool)
        other_owner = np.zeros(len(data), dtype=bool)
        if sessions is not None:
            # the first participant listed for each session owns it
            first = ~sessions.data["session_id"].duplicated(keep="first").to_numpy()
            owner = pd.Series(
                sessions.data[id_col].to_numpy(dtype=object)[first],
                index=sessions.data["session_id"].to_numpy(dtype=object)[first],
            )
            owned = owner.reindex(sid).to_numpy(dtype=object)
            unknown_session = ~no_session & ~_member(sid, set(owner.index))
            other_owner = (
                ~no_session & ~unknown_session & (pid != "") & (pid != owned) & _member(pid, known)
            )
        no_story = data["story_id"].to_numpy(dtype=object) == ""
        raw = data[spec.column].to_numpy(dtype=object)
        number, finite, empty = _floats(data[spec.column])
        lo, hi = spec.scale_min, spec.scale_max
        inside = finite & (number >= lo) & (number <= hi)
        self.missing_rating = np.flatnonzero(empty).tolist()
        value = np.where(inside, number, np.nan)
        pos_raw = data["position"].to_numpy(dtype=object)
        pos, pos_ok, _ = _floats(data["position"])
        pos_ok &= pos >= 1
        pos_ok[pos_ok] = pos[pos_ok] == np.floor(pos[pos_ok])
        position = np.zeros(len(data), dtype="int64")
        if pos_ok.any():
            position[pos_ok] = np.array([int(x) for x in pos[pos_ok]], dtype="int64")
        bad_rating = ~empty & ~inside
        flagged = no_session | unknown_session | other_owner | no_story | bad_rating | ~pos_ok
        for k in np.flatnonzero(flagged):
            row = int(row_of[k])
            if no_session[k]:
                self.failures.add(rel, "missing session id", row=row, column="session_id")
            elif unknown_session[k]:
                self.failures.add(
                    rel,
                    f"rating for an unknown session (not in {cfg.sessions_file})",
                    row=row,
                    column="session_id",
                    value=sid[k],
                )
            elif other_owner[k]:
                self.failures.add(
                    rel,
                    f"the session belongs to another participant in {cfg.sessions_file}",
                    row=row,
                    column=id_col,
                    value=pid[k],
                )
            if no_story[k]:
                self.failures.add(rel, "missing story id", row=row, column="story_id")
            if bad_rating[k] and not finite[k]:
                self.failures.add(
                    rel, "non-numeric rating", row=row, column=spec.column, value=raw[k]
                )
            elif bad_rating[k]:
                self.failures.add(
                    rel,
                    f"rating outside the declared scale {lo:g}-{hi:g}",
                    row=row,
                    column=spec.column,
                    value=raw[k],
                )
            if not pos_ok[k]:
                self.failures.add(
                    rel,
                    "position must be a whole number 1, 2, 3, ...",
                    row=row,
                    column="position",
                    value=pos_raw[k] or None,
                )
        keyed = pd.DataFrame({"s": data["session_id"].to_numpy(), "p": position})
        valid = (keyed["s"] != "") & (keyed["p"] > 0)
        dup = keyed[valid & keyed.duplicated(keep=False)]
        for _, group in dup.groupby(["s", "p"], sort=False):
            reasons = _duplicate_reason(
                rows.iloc[group.index], "rating for this session and position"
            )
            for k in group.index:
                self.failures.add(
                    rel,
                    reasons[k],
                    row=int(rows.iloc[k]),
                    column="position",
                    value=str(position[k]),
                )
        converted[spec.column] = value
        converted["position"] = position
        for col in data.columns:
            if col in required:
                continue
            numeric = _numeric_column(data[col])
            if numeric is not None and data[col].ne("").any():
                converted[col] = numeric
            else:
                converted[col] = data[col].replace("", np.nan)
        self.meta["files"][rel] = {"rows": len(data)}
        return _Table(rel, converted, rows)

    # -- surveys -------------------------------------------------------------------------------

    def read_surveys(self, instruments: dict[str, Any], known: set[str] | None) -> list:
        """Read every export; returns [(spec, responses, survey_rows DataFrame)]."""
        from surveys.pipeline import check_export

        cfg = self.cfg
        out = []
        for spec in cfg.surveys:
            rel = spec.file
            self.inputs.append(rel)
            path = self.root / rel
            item_map = None
            if spec.item_map is not None:
                self.inputs.append(spec.item_map)
                item_map = self.root / spec.item_map
                if not item_map.is_file():
                    self.failures.add(spec.item_map, "item map file not found")
                    continue
            if not path.is_file():
                self.failures.add(rel, "file not found")
                continue
            # unknown instruments are already reported; check the items of the known ones
            insts = [instruments[n] for n in spec.instruments if n in instruments]
            try:
                export = check_export(
                    path,
                    insts,
                    id_col=spec.id_col,
                    wave_col=spec.wave_col,
                    wave=spec.wave,
                    errors="collect",
                    format=spec.format,
                    item_map=item_map,
                    missing_codes=spec.missing_codes,
                    sheet=spec.sheet,
                    flagged="exclude",
                )
            except InputValidationError as err:
                self.failures.extend(err.failure_cases, root=self.root)
                continue
            except ImportError as err:
                self.failures.add(rel, f"cannot read this format here: {err}")
                continue
            self.failures.extend(export.failures, root=self.root)
            responses = export.responses
            rows = self.check_survey_rows(spec, responses, known)
            self.meta["files"][rel] = {
                "rows": int(responses.meta.get("n_rows_read", len(responses.data))),
                "excluded": len(responses.excluded),
            }
            out.append((spec, export, rows))
        self.check_duplicate_surveys(out)
        return out

    def check_survey_rows(self, spec: SurveySpec, responses, known: set[str] | None):
        cfg = self.cfg
        rel = spec.file
        data = responses.data
        rows = responses.row_numbers
        if spec.date_col not in data.columns:
            self.failures.add(
                rel,
                "missing the completion-date column named by date_col in study.toml",
                row=1,
                column=spec.date_col,
            )
            dates = pd.Series(pd.NaT, index=data.index)
        else:
            dates = _times(data[spec.date_col])
            for idx in dates.index[dates.isna()]:
                raw = data.at[idx, spec.date_col]
                missing = _is_missing(raw) or str(raw).strip() == ""
                self.failures.add(
                    rel,
                    "missing completion date" if missing else _time_problem(raw),
                    row=int(rows[idx]),
                    column=spec.date_col,
                    value=None if missing else raw,
                )
        ids = data[spec.id_col]
        row_of = rows.loc[data.index].to_numpy()
        cells = ids.to_numpy(dtype=object)
        for k in np.flatnonzero(~_member(cells, known)):
            value = cells[k]
            if _is_missing(value) or value == "":
                continue  # reported by validate_responses
            self.failures.add(
                rel,
                f"unknown participant (not in {cfg.participants_file})",
                row=int(row_of[k]),
                column=spec.id_col,
                value=value,
            )
        if spec.wave_col is not None:
            waves = data[spec.wave_col]
            cells = waves.to_numpy(dtype=object)
            for k in np.flatnonzero(~_member(cells, cfg.waves)):
                self.failures.add(
                    rel,
                    f"unknown wave; study.toml declares {list(cfg.waves)}",
                    row=int(row_of[k]),
                    column=spec.wave_col,
                    value=cells[k],
                )
            wave = waves
        else:
            wave = pd.Series(spec.wave, index=data.index)
        return pd.DataFrame(
            {
                "id": ids.astype(object),
                "wave": wave.astype(object),
                "completed_at": dates,
                "row": rows.astype("int64"),
            }
        )

    def check_duplicate_surveys(self, surveys: list) -> None:
        """Reject a participant x wave x instrument found in two files.

        Duplicates within one file are reported by ``validate_responses``.
        """
        seen: dict[tuple[str, str, str], tuple[str, int]] = {}
        for spec, _, rows in surveys:
            pairs = rows.drop_duplicates(subset=["id", "wave"])
            for inst in spec.instruments:
                for rec in pairs.itertuples(index=False):
                    key = (rec.id, rec.wave, inst)
                    if key in seen and seen[key][0] != spec.file:
                        first_file, first_row = seen[key]
                        self.failures.add(
                            spec.file,
                            f"duplicate participant x wave survey for {inst} (also in "
                            f"{first_file} row {first_row})",
                            row=int(rec.row),
                            column=spec.id_col,
                            value=rec.id,
                        )
                    else:
                        seen.setdefault(key, (spec.file, int(rec.row)))

    def survey_dates(self, surveys: list) -> pd.DataFrame:
        cfg = self.cfg
        parts = [rows for _, _, rows in surveys]
        if parts:
            allrows = pd.concat(parts, ignore_index=True)
        else:
            allrows = pd.DataFrame(columns=["id", "wave", "completed_at"])
        dates = allrows.groupby(["id", "wave"], sort=False)["completed_at"].max().reset_index()
        dates = dates.rename(columns={"id": cfg.id_col})
        dates["completed_at"] = pd.to_datetime(dates["completed_at"])
        order = {w: i for i, w in enumerate(cfg.waves)}
        dates = dates.assign(_o=dates["wave"].map(order)).sort_values(
            [cfg.id_col, "_o"], kind="mergesort"
        )
        return dates.drop(columns="_o").reset_index(drop=True)

    # -- exclusions ----------------------------------------------------------------------------

    def apply_exclusions(self, sessions: _Table, ratings: _Table, survey_dates: pd.DataFrame):
        cfg = self.cfg
        id_col = cfg.id_col
        first_wave = cfg.waves[0]
        # each participant's first-wave survey, else the earliest (ties: the earlier wave)
        dates = survey_dates[[id_col, "wave", "completed_at"]]
        at_first = dates.loc[dates["wave"] == first_wave].drop_duplicates(id_col)
        earliest = dates.sort_values([id_col, "completed_at"], kind="stable")
        earliest = earliest.drop_duplicates(id_col)
        earliest = earliest.loc[~earliest[id_col].isin(at_first[id_col])]
        start = pd.concat(
            [
                pd.DataFrame(
                    {
                        "at": at_first["completed_at"].to_numpy(),
                        "label": f"{first_wave} survey",
                    },
                    index=at_first[id_col].to_numpy(dtype=object),
                ),
                pd.DataFrame(
                    {
                        "at": earliest["completed_at"].to_numpy(),
                        "label": [
                            f"earliest survey ({w}; {first_wave} is missing)"
                            for w in earliest["wave"]
                        ],
                    },
                    index=earliest[id_col].to_numpy(dtype=object),
                ),
            ]
        )
        s = sessions.data
        first = start.reindex(s[id_col].to_numpy(dtype=object))
        before = pd.to_datetime(first["at"]).to_numpy(dtype="datetime64[ns]")
        keep_s = ~(s["started_at"].to_numpy(dtype="datetime64[ns]") < before)
        session_rows = sessions.rows.to_numpy()
        labels = first["label"].to_numpy(dtype=object)
        for k in np.flatnonzero(~keep_s):
            self.exclude(
                sessions.file,
                int(session_rows[k]),
                f"session started before the participant's {labels[k]}; excluded with its ratings",
            )
        session_ids = s["session_id"].to_numpy(dtype=object)
        dropped_sessions = set(session_ids[~keep_s])
        r = ratings.data
        rating_rows = ratings.rows.to_numpy()
        dropped = _member(r["session_id"].to_numpy(dtype=object), dropped_sessions)
        empty = np.zeros(len(r), dtype=bool)
        empty[self.missing_rating] = True
        keep_r = ~dropped & ~empty
        for k in np.flatnonzero(~keep_r):
            if dropped[k]:
                self.exclude(
                    ratings.file,
                    int(rating_rows[k]),
                    f"rating of an excluded session (the session in {sessions.file} started "
                    "before the participant's first survey)",
                )
            else:
                self.exclude(ratings.file, int(rating_rows[k]), f"empty {cfg.rating_col} rating")
        kept_ratings = r.loc[keep_r].reset_index(drop=True)
        rated = set(kept_ratings["session_id"])
        for k in np.flatnonzero(keep_s & ~_member(session_ids, rated)):
            self.exclude(
                sessions.file,
                int(session_rows[k]),
                "no ratings: session kept in the session frame, absent from the story frame",
                scope="story_frame",
            )
        kept_sessions = s.loc[keep_s].reset_index(drop=True)
        kept_sessions["started_at"] = pd.to_datetime(kept_sessions["started_at"])
        kept_ratings[cfg.rating_col] = kept_ratings[cfg.rating_col].astype("float64")
        kept_ratings["position"] = kept_ratings["position"].astype("int64")
        self.meta["files"][sessions.file]["kept"] = int(keep_s.sum())
        self.meta["files"][ratings.file]["kept"] = int(keep_r.sum())
        return kept_sessions, kept_ratings

    # -- scoring -------------------------------------------------------------------------------

    def score(self, surveys: list, instruments: dict[str, Any]) -> dict[str, pd.DataFrame]:
        from surveys.pipeline import score_export
        from surveys.scoring import SCORE_COLUMNS

        cfg = self.cfg
        # a trait is scored at the first wave only (keyed by the loaded instrument's name)
        traits = [instruments[n].name for n in cfg.traits if n in instruments]
        only_waves = {name: [cfg.waves[0]] for name in traits}
        keys = ("scores", "reliability", "item_stats", "missing")
        parts: dict[str, list[pd.DataFrame]] = {key: [] for key in keys}
        notes: list[str] = []
        for spec, export, _ in surveys:
            scored = score_export(
                export,
                min_valid=cfg.min_valid,
                prorate=cfg.prorate,
                only_waves=only_waves,
                name=spec.file,
            )
            notes += scored.notes
            for key in keys:
                parts[key].append(getattr(scored, key).rename(columns={"id": cfg.id_col}))
        out: dict[str, pd.DataFrame] = {}
        for key, tables in parts.items():
            tables = [t for t in tables if not t.empty]
            out[key] = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
        scores = out["scores"]
        if scores.empty:
            scores = pd.DataFrame(columns=[cfg.id_col if c == "id" else c for c in SCORE_COLUMNS])
        scores[cfg.id_col] = scores[cfg.id_col].astype(str)
        scores["wave"] = scores["wave"].astype(str)
        out["scores"] = scores
        self.meta["scoring_notes"] = notes
        return out

    def item_answers(
        self, surveys: list, instruments: dict[str, Any], scores: pd.DataFrame
    ) -> pd.DataFrame:
        """Keep the keyed item answers of every scale, on the rows the study scored.

        One long table (:data:`ITEM_ANSWER_COLUMNS`): per instrument (in the order the surveys
        of study.toml first name them) and scale (in key order), the answers of the
        participant x wave rows scored for that instrument, in export and row order, the key's
        items in key order within each row; ``answer`` reverse keyed from the declared range
        as the scoring does, NaN when missing.
        """
        from surveys import keyed_item_answers

        cfg = self.cfg
        by_name = {inst.name: inst for inst in instruments.values()}
        wide: dict[str, list[pd.DataFrame]] = {}
        for spec, export, _ in surveys:
            data = export.responses.data
            wave = data[spec.wave_col] if spec.wave_col is not None else spec.wave
            for entry in spec.instruments:
                instrument = instruments[entry]
                items = [i for i in instrument.items if i in data.columns]
                frame = pd.DataFrame(
                    {"__id": data[export.id_col].astype(str), "__wave": wave}, index=data.index
                )
                wide.setdefault(instrument.name, []).append(pd.concat([frame, data[items]], axis=1))
        parts: list[pd.DataFrame] = []
        for name, frames in wide.items():
            answers = pd.concat(frames, ignore_index=True)
            answers["__wave"] = answers["__wave"].astype(str)
            scored = scores.loc[scores["instrument"] == name, [cfg.id_col, "wave"]]
            kept = pd.MultiIndex.from_frame(scored.drop_duplicates().astype(str))
            answers = answers.loc[
                pd.MultiIndex.from_frame(answers[["__id", "__wave"]]).isin(kept)
            ].reset_index(drop=True)
            for key in by_name[name].scales:
                keyed = keyed_item_answers(answers, key, id_col="__id", wave_col="__wave")
                parts.append(
                    pd.DataFrame(
                        {
                            cfg.id_col: keyed["__id"].to_numpy(dtype=object),
                            "wave": keyed["__wave"].to_numpy(dtype=object),
                            "instrument": name,
                            "scale": key.name,
                            "item": keyed["item"].to_numpy(dtype=object),
                            "answer": keyed["value"].to_numpy(dtype="float64"),
                        }
                    )
                )
        columns = [cfg.id_col if c == "id" else c for c in ITEM_ANSWER_COLUMNS]
        if not parts:
            empty = {c: pd.Series(dtype="float64" if c == "answer" else object) for c in columns}
            return pd.DataFrame(empty)
        return pd.concat(parts, ignore_index=True)  # each part has the columns in order
