"""Tests of longitudinal/plotting/: figure functions and the intervals they draw."""

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from longitudinal._errors import InvalidParameterError
from longitudinal.plotting import (
    empathy_course_table,
    plot_big_five_radar,
    plot_demographics,
    plot_empathy_course,
    plot_rating_distribution,
    plot_reliable_change,
    plot_smooth_course,
    plot_state_course,
    plot_trajectories,
    plot_wave_distributions,
    save_figure,
    within_subject_ci,
)

HERE = Path(__file__).parents[1]
DATA = HERE.parent / "data"
REFERENCE = HERE / "reference" / "plotting_reference.csv"


@pytest.fixture
def pyplot():
    """Force the Agg backend and close every pyplot figure after the test."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


@pytest.fixture(scope="module")
def reference():
    return pd.read_csv(REFERENCE, comment="#")


@pytest.fixture(scope="module")
def obrien_long():
    """carData::OBrienKaiser: mean of the five hourly scores per phase, long format."""
    wide = pd.read_csv(DATA / "carData_OBrienKaiser.csv")
    rows = []
    for _, rec in wide.iterrows():
        for phase in ("pre", "post", "fup"):
            value = np.mean([rec[f"{phase}.{h}"] for h in range(1, 6)])
            rows.append({"id": f"S{int(rec['rownames']):02d}", "wave": phase, "score": value})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def person_wave():
    """A small person x wave frame with two scales, one participant missing 'mid'."""
    rng = np.random.default_rng(11)
    rows = []
    for k in range(12):
        level = rng.normal(4, 1)
        for t, wave in enumerate(["pre", "mid", "post"]):
            if k == 3 and wave == "mid":
                continue
            rows.append(
                {
                    "participant_id": f"S{k:02d}",
                    "wave": wave,
                    "day": float(-2 + 14 * t + rng.integers(0, 3)),
                    "cls": level + 0.3 * t + rng.normal(0, 0.4),
                    "who5": 50 + 10 * level + rng.normal(0, 8),
                }
            )
    frame = pd.DataFrame(rows)
    frame["wave"] = pd.Categorical(frame["wave"], ["pre", "mid", "post"], ordered=True)
    return frame


def test_within_subject_ci_matches_r(obrien_long, reference):
    ci = within_subject_ci(
        obrien_long, value_col="score", id_col="id", wave_col="wave", waves=["pre", "post", "fup"]
    )
    ref = reference[reference["analysis"] == "within_subject_ci"]
    for quantity in ("n", "estimate", "se", "ci_low", "ci_high"):
        expected = ref[ref["quantity"] == quantity].set_index("wave")["value"]
        got = ci.set_index("wave")[quantity].astype(float)
        # R printed 15 significant digits
        assert_allclose(got.loc[expected.index], expected, rtol=1e-12)


def test_within_subject_ci_uses_complete_cases(obrien_long):
    dropped = obrien_long.drop(index=obrien_long.index[1])  # first person's post
    waves = ["pre", "post", "fup"]
    ci = within_subject_ci(dropped, value_col="score", id_col="id", wave_col="wave", waves=waves)
    complete = obrien_long[obrien_long["id"] != "S01"]
    expected = within_subject_ci(
        complete, value_col="score", id_col="id", wave_col="wave", waves=waves
    )
    assert ci["n"].tolist() == [15, 15, 15]
    assert_allclose(ci["ci_low"], expected["ci_low"], rtol=1e-12)


def test_within_subject_ci_rejects_duplicates(obrien_long):
    doubled = pd.concat([obrien_long, obrien_long.iloc[:1]])
    with pytest.raises(InvalidParameterError, match="one row per"):
        within_subject_ci(doubled, value_col="score", id_col="id", wave_col="wave")


def test_empathy_course_table_matches_r_t_interval(obrien_long, reference):
    pre = obrien_long[obrien_long["wave"] == "pre"].assign(week=0)
    table = empathy_course_table(
        pre, rating_col="score", id_col="id", time_col="week", ci_level=0.90
    )
    ref = reference[reference["analysis"] == "t_interval_90"].set_index("quantity")["value"]
    assert table["n"].tolist() == [16]
    assert_allclose(
        table.loc[0, ["estimate", "ci_low", "ci_high"]].astype(float),
        ref.loc[["estimate", "ci_low", "ci_high"]],
        rtol=1e-12,
    )


def test_empathy_course_table_averages_people_not_ratings():
    data = pd.DataFrame(
        {"pid": ["a", "a", "a", "b"], "week": [0, 0, 0, 0], "empathy": [1.0, 1.0, 1.0, 5.0]}
    )
    table = empathy_course_table(data, id_col="pid")
    # person means 1 and 5: their mean is 3, the mean of the four ratings would be 2
    assert table.loc[0, "estimate"] == 3.0
    assert table.loc[0, "n_ratings"] == 4


def test_empathy_course_table_clips_to_the_scale_and_flags_small_weeks():
    # week 0: three people far apart on a 1-7 scale, t(2) interval 0.03-9.97 before clipping;
    # week 1: one person, no interval; week 2: five people, within the scale
    data = pd.DataFrame(
        {
            "pid": ["a", "b", "c", "a", "a", "b", "c", "d", "e"],
            "week": [0, 0, 0, 1, 2, 2, 2, 2, 2],
            "empathy": [3.0, 7.0, 5.0, 4.0, 4.0, 4.0, 5.0, 4.0, 5.0],
        }
    )
    raw = empathy_course_table(data, id_col="pid")
    assert [round(raw.loc[0, c], 2) for c in ("ci_low", "ci_high")] == [0.03, 9.97]
    assert not raw["clipped"].any() and raw["too_few"].tolist() == [False, True, False]
    table = empathy_course_table(data, id_col="pid", scale_min=1, scale_max=7, min_participants=5)
    assert table["too_few"].tolist() == [True, True, False]
    assert table.loc[:1, ["ci_low", "ci_high"]].isna().all().all()  # no interval under 5
    assert table.loc[2, "ci_low"] >= 1 and table.loc[2, "ci_high"] <= 7
    assert table["estimate"].notna().all()  # the means are kept, only marked
    clipped = empathy_course_table(data, id_col="pid", scale_min=1, scale_max=7)
    assert clipped.loc[0, ["ci_low", "ci_high"]].tolist() == [1.0, 7.0]
    assert clipped["clipped"].tolist() == [True, False, False]
    with pytest.raises(InvalidParameterError, match="min_participants"):
        empathy_course_table(data, id_col="pid", min_participants=1)


def test_empathy_course_plot_labels_the_scale_and_leaves_small_weeks_open(pyplot):
    data = pd.DataFrame(
        {
            "participant_id": list("abcabcdeab"),
            "week": [0, 0, 0, 1, 1, 1, 1, 1, 2, 2],
            "empathy": [3.0, 7.0, 5.0, 4.0, 4.0, 5.0, 4.0, 5.0, 6.0, 2.0],
        }
    )
    fig = plot_empathy_course(data, scale_min=1, scale_max=7)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "mean empathy (1–7)"
    band = ax.collections[-1].get_paths()[0].vertices[:, 1]
    assert band.min() >= 1 and band.max() <= 7  # only week 1 (5 people) has an interval


def test_trajectories_and_distributions_return_one_panel_per_scale(pyplot, person_wave):
    from matplotlib.figure import Figure

    fig = plot_trajectories(person_wave, scales=["cls", "who5"], labels={"cls": "Compassion"})
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    assert fig.axes[0].get_title() == "Compassion"
    # the error bar is drawn at the complete-case means
    ci = within_subject_ci(person_wave, value_col="cls", id_col="participant_id", wave_col="wave")
    line = [ln for ln in fig.axes[0].get_lines() if ln.get_linewidth() > 2][0]
    assert_allclose(np.asarray(line.get_ydata(), dtype=float), ci["estimate"], rtol=1e-12)
    fig = plot_wave_distributions(person_wave, scales="who5")
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["pre\n(n = 12)", "mid\n(n = 11)", "post\n(n = 12)"]


def test_state_course_places_wave_means_at_median_day(pyplot, person_wave):
    fig = plot_state_course(person_wave, scales=["cls"])
    line = [ln for ln in fig.axes[0].get_lines() if ln.get_linewidth() > 2][0]
    medians = person_wave.groupby("wave", observed=True)["day"].median()
    assert_allclose(
        np.asarray(line.get_xdata(), dtype=float), medians.loc[["pre", "mid", "post"]], rtol=1e-12
    )


def test_reliable_change_counts_people_outside_the_band(pyplot):
    data = pd.DataFrame(
        {
            "scale": ["a"] * 5,
            "pre": [1.0, 2.0, 3.0, 4.0, 5.0],
            "post": [3.5, 2.5, 0.0, 4.1, 5.0],
            "threshold": [2.0] * 5,
        }
    )
    fig = plot_reliable_change(data)
    assert "higher 1, lower 1, no reliable change 3; band |Δ| < 2" in fig.axes[0].get_xlabel()
    # one legend for the figure, outside every panel, so it never covers a point
    assert fig.axes[0].get_legend() is None
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "band of no reliable change",
        "reliably higher",
        "reliably lower",
        "no reliable change",
    ]
    fig.canvas.draw()
    box = legend.get_window_extent()
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent())


def test_reliable_change_labels_of_side_by_side_panels_do_not_overlap(pyplot):
    rng = np.random.default_rng(5)
    pre = rng.normal(4, 1, 41)
    data = pd.concat(
        pd.DataFrame(
            {"scale": name, "pre": pre, "post": pre + rng.normal(0, 1, 41), "threshold": 0.955}
        )
        for name in ("cls", "ubc", "who5")
    )
    fig = plot_reliable_change(data)
    fig.draw_without_rendering()
    boxes = [ax.xaxis.label.get_window_extent() for ax in fig.axes[:3]]
    for left, right in itertools.pairwise(boxes):
        assert left.x1 < right.x0


def test_reliable_change_rejects_varying_threshold(pyplot):
    data = pd.DataFrame(
        {"scale": ["a", "a"], "pre": [1.0, 2.0], "post": [1.0, 2.0], "threshold": [1.0, 2.0]}
    )
    with pytest.raises(InvalidParameterError, match="constant within a scale"):
        plot_reliable_change(data)


def test_rating_distribution_bars_are_shares(pyplot):
    ratings = pd.DataFrame({"empathy": [1, 2, 2, 4, 4, 4, 5, 5]})
    fig = plot_rating_distribution(ratings, scale_min=1, scale_max=5)
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert_allclose(heights, [1 / 8, 2 / 8, 0, 3 / 8, 2 / 8])


def test_radar_demographics_and_course_return_figures(pyplot):
    from matplotlib.figure import Figure

    traits = pd.DataFrame({c: [2.0, 3.0, 4.5] for c in ("e", "a", "c", "n", "o")})
    assert isinstance(plot_big_five_radar(traits, columns=list(traits)), Figure)
    people = pd.DataFrame({"age": [20.0, 35.0, np.nan], "gender": ["woman", "man", "woman"]})
    fig = plot_demographics(people, columns=["age", "gender"])
    assert len(fig.axes) == 2
    story = pd.DataFrame(
        {
            "participant_id": list("aabbcc"),
            "week": [0, 1, 0, 1, 0, 1],
            "empathy": [3.0, 4.0, 2.0, 2.0, 5.0, 4.0],
        }
    )
    fig = plot_empathy_course(story, scale_min=1, scale_max=5)
    assert fig.axes[0].get_ylim()[1] > 5


def test_smooth_course_draws_the_band_the_curve_and_the_line(pyplot):
    week = np.linspace(0, 4, 9)
    fit = 3 + np.sin(week)
    curve = pd.DataFrame({"week": week, "fit": fit, "lower": fit - 0.2, "upper": fit + 0.2})
    line = pd.DataFrame({"week": week, "fit": 3 + 0.1 * week})
    fig = plot_smooth_course(curve, line=line, scale_min=1, scale_max=5)
    ax = fig.axes[0]
    assert_allclose(ax.lines[0].get_ydata(), fit)
    assert_allclose(ax.lines[1].get_ydata(), line["fit"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["smooth", "straight line"]
    assert ax.get_ylim()[0] < 1 and ax.get_ylim()[1] > 5
    with pytest.raises(InvalidParameterError, match="upper"):
        plot_smooth_course(curve.drop(columns="upper"), line=line)


def test_radar_needs_three_columns(pyplot):
    with pytest.raises(InvalidParameterError, match="at least 3"):
        plot_big_five_radar(pd.DataFrame({"a": [1.0], "b": [2.0]}), columns=["a", "b"])


def test_missing_column_is_named(pyplot, person_wave):
    with pytest.raises(InvalidParameterError, match="nope"):
        plot_trajectories(person_wave, scales=["nope"])


def test_bad_ci_level(pyplot, person_wave):
    with pytest.raises(InvalidParameterError, match="ci_level"):
        plot_trajectories(person_wave, scales=["cls"], ci_level=95)


def test_save_figure_is_deterministic(pyplot, person_wave, tmp_path):
    first = save_figure(plot_trajectories(person_wave, scales=["cls"]), tmp_path / "a.png")
    second = save_figure(plot_trajectories(person_wave, scales=["cls"]), tmp_path / "b.png")
    assert first.read_bytes() == second.read_bytes()
    assert b"Software" not in first.read_bytes()[:200]


def test_no_global_pyplot_figures(pyplot, person_wave):
    before = len(pyplot.get_fignums())
    plot_trajectories(person_wave, scales=["cls"])
    assert len(pyplot.get_fignums()) == before


def test_vector_copy_is_deterministic_and_undated(pyplot, person_wave, tmp_path):
    for name in ("a", "b"):
        save_figure(
            plot_trajectories(person_wave, scales=["cls"]), tmp_path / f"{name}.png", vector=True
        )
    first, second = (tmp_path / "a.svg").read_bytes(), (tmp_path / "b.svg").read_bytes()
    assert first == second
    assert b"<svg" in first and b"<dc:date>" not in first


def test_radar_value_labels_sit_above_the_band(pyplot):
    data = pd.DataFrame({c: [2.0, 3.0, 4.0, 3.5] for c in ("a", "b", "c", "d", "e")})
    fig = plot_big_five_radar(data, columns=["a", "b", "c", "d", "e"])
    ax = fig.axes[0]
    texts = [t for t in ax.texts if t.get_text() in {"2", "3", "4", "5"}]
    assert [t.get_text() for t in texts] == ["2", "3", "4", "5"]
    top = max(a.get_zorder() for a in (*ax.lines, *ax.collections))
    assert all(t.get_zorder() > top and t.get_bbox_patch() is not None for t in texts)


def _journal_figures(person_wave):
    """One figure of every kind the report draws, from small data."""
    from longitudinal.plotting import plot_power_curve

    traits = pd.DataFrame({c: [2.0, 3.0, 4.5] for c in ("e", "a", "c", "n", "o")})
    people = pd.DataFrame({"age": [20.0, 35.0, np.nan], "gender": ["woman", "man", "woman"]})
    story = pd.DataFrame(
        {
            "participant_id": list("aabbcc"),
            "week": [0, 1, 0, 1, 0, 1],
            "empathy": [3.0, 4.0, 2.0, 2.0, 5.0, 4.0],
        }
    )
    change = pd.DataFrame(
        {
            "scale": ["a"] * 5,
            "pre": [1.0, 2.0, 3.0, 4.0, 5.0],
            "post": [3.5, 2.5, 0.0, 4.1, 5.0],
            "threshold": [2.0] * 5,
        }
    )
    power = pd.DataFrame(
        {
            "n_sessions": [4, 4, 8, 8],
            "n_participants": [20, 40, 20, 40],
            "power": [0.3, 0.6, 0.4, 0.8],
            "ci_low": [0.2, 0.5, 0.3, 0.7],
            "ci_high": [0.4, 0.7, 0.5, 0.9],
        }
    )
    return {
        "trajectories": plot_trajectories(person_wave, scales=["cls", "who5"]),
        "distributions": plot_wave_distributions(person_wave, scales="who5"),
        "state_course": plot_state_course(person_wave, scales=["cls"]),
        "reliable_change": plot_reliable_change(change),
        "rating_distribution": plot_rating_distribution(
            pd.DataFrame({"empathy": [1, 2, 2, 4, 4, 4, 5, 5]}), scale_min=1, scale_max=5
        ),
        "radar": plot_big_five_radar(traits, columns=list(traits)),
        "demographics": plot_demographics(people, columns=["age", "gender"]),
        "empathy_course": plot_empathy_course(story, scale_min=1, scale_max=5),
        "power": plot_power_curve(power, title="Power to detect the effect of the condition"),
    }


def test_figures_are_one_or_two_journal_columns_wide(pyplot, person_wave):
    from longitudinal.plotting import ONE_COLUMN_WIDTH, TWO_COLUMN_WIDTH

    for name, fig in _journal_figures(person_wave).items():
        width = fig.get_size_inches()[0]
        assert width in (ONE_COLUMN_WIDTH, TWO_COLUMN_WIDTH), (name, width)
    assert _journal_figures(person_wave)["trajectories"].get_size_inches()[0] == TWO_COLUMN_WIDTH


def test_no_text_is_smaller_than_seven_points_at_print_size(pyplot, person_wave):
    from matplotlib.text import Text

    for name, fig in _journal_figures(person_wave).items():
        fig.canvas.draw()  # tick labels exist once drawn
        sizes = [
            t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
        ]
        assert sizes, name
        assert min(sizes) >= 7, (name, min(sizes))


def test_journal_size_gives_the_two_widths():
    from longitudinal.plotting import journal_size

    assert journal_size(1)[0] == 3.5 and abs(3.5 * 25.4 - 89) < 0.5
    assert journal_size(2, height=3.0) == (7.2, 3.0) and abs(7.2 * 25.4 - 183) < 0.5
    with pytest.raises(InvalidParameterError, match="columns"):
        journal_size(3)


def _media_width(pdf: bytes) -> float:
    import re

    box = re.search(rb"/MediaBox \[\s*([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)\s*\]", pdf)
    return float(box[3]) - float(box[1])


def test_pdf_copy_embeds_fonts_keeps_the_journal_width_and_is_deterministic(
    pyplot, person_wave, tmp_path
):
    figures = _journal_figures(person_wave)
    again = _journal_figures(person_wave)
    for name, fig in figures.items():
        save_figure(fig, tmp_path / f"{name}_a.png", vector=True)
        save_figure(again[name], tmp_path / f"{name}_b.png", vector=True)
        first = (tmp_path / f"{name}_a.pdf").read_bytes()
        assert first == (tmp_path / f"{name}_b.pdf").read_bytes(), name
        if name != "radar":  # the same figure saved again (the radar's polar layout drifts)
            save_figure(fig, tmp_path / f"{name}_c.png", vector=True)
            assert first == (tmp_path / f"{name}_c.pdf").read_bytes(), name
        assert first.startswith(b"%PDF"), name
        assert b"/FontFile2" in first, name  # TrueType, embedded
        assert b"CreationDate" not in first and b"Producer" not in first, name
        assert abs(_media_width(first) - 72 * fig.get_size_inches()[0]) <= 1, name
    # a PDF by default only with the vector copies; on its own when asked for
    save_figure(figures["power"], tmp_path / "plain.png")
    assert not (tmp_path / "plain.pdf").exists()
    save_figure(figures["power"], tmp_path / "only.png", pdf=True)
    assert (tmp_path / "only.pdf").is_file() and not (tmp_path / "only.svg").exists()


def test_several_series_differ_without_colour(pyplot, person_wave):
    fig = _journal_figures(person_wave)["power"]
    lines = [ln for ln in fig.axes[0].get_lines() if ln.get_label().endswith("sessions")]
    assert len(lines) == 2
    assert len({ln.get_marker() for ln in lines}) == 2
    assert len({str(ln.get_linestyle()) for ln in lines}) == 2
