"""Tests of surveys/instruments.py and the instrument library (surveys/instruments/*.toml).

The expected keys are transcribed from the published scoring keys listed in each instrument's
``sources`` (the same facts, with their verification grades, are in its ``grade_notes``).
"""

import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import package_warnings

from surveys._errors import (
    InputValidationError,
    InvalidParameterError,
    SurveysWarning,
    UnknownInstrumentError,
)
from surveys.instruments import (
    GRADES,
    Instrument,
    ScaleKey,
    derive_items,
    list_instruments,
    load_instrument,
)
from surveys.scoring import score

KEYS = Path(__file__).resolve().parents[1] / "data" / "keys"
LIBRARY = Path(__file__).resolve().parents[2] / "surveys" / "instruments"

NAMES = [
    "batson_ecpd",
    "bfi10",
    "bfi44",
    "cls21_close",
    "cls21_humanity",
    "cls9_humanity",
    "ipip50",
    "iri28",
    "mini_ipip",
    "mpq_bf_absorption",
    "scbcs5",
    "sites",
    "tas34",
    "tas4",
    "tipi",
    "ubc_sscs10",
    "who5",
]


def ids(prefix, numbers):
    return tuple(f"{prefix}_{k}" for k in numbers)


def reversed_numbers(instrument):
    """Questionnaire numbers of the reverse-keyed items, over all scales."""
    out = set()
    for key in instrument.scales:
        out |= {int(item.rsplit("_", 1)[1]) for item in key.reverse}
    return sorted(out)


# ---------------------------------------------------------------------------------------------
# The library as a whole


def test_library_has_exactly_the_expected_instruments():
    assert sorted(p.stem for p in LIBRARY.glob("*.toml")) == NAMES
    table = list_instruments()
    assert table.columns.tolist() == [
        "name",
        "title",
        "n_items",
        "scales",
        "response_min",
        "response_max",
        "scoring",
        "grade",
    ]
    assert table["name"].tolist() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_library_file_is_complete_and_consistent(name):
    ins = load_instrument(name)
    assert ins.name == name
    assert ins.title and ins.licence and ins.sources
    assert ins.grade in GRADES
    # every grade that appears in the notes is a known grade, and the file's grade is there
    assert ins.grade_notes and ins.grade in ins.grade_notes
    # item ids are "{instrument}_{k}", unique, and every scale item is an instrument item
    assert len(set(ins.items)) == len(ins.items)
    assert all(re.fullmatch(rf"{name}_\d+", item) for item in ins.items)
    scale_items = {item for key in ins.scales for item in key.items}
    assert scale_items == set(ins.items)
    for key in ins.scales:
        assert set(key.reverse) <= set(key.items)
        assert (key.response_min, key.response_max) == (ins.response_min, ins.response_max)
    # item wording only for the public-domain IPIP instruments and Batson's adjectives; the IRI
    # (free for non-commercial use only) carries short labels, and its licence says so
    if name in ("ipip50", "mini_ipip"):
        assert set(ins.item_text) == set(ins.items)
        assert "public domain" in ins.licence.lower()
    elif name in ("batson_ecpd", "iri28"):
        assert set(ins.item_text) == set(ins.items)
        if name == "iri28":
            assert "short labels" in ins.licence
            assert "not the published" in ins.licence
    else:
        assert ins.item_text == {}


def test_weakest_grade_is_reported():
    grades = dict(zip(list_instruments()["name"], list_instruments()["grade"], strict=True))
    assert grades == {
        "batson_ecpd": "V1",
        "bfi10": "V1",
        "bfi44": "V2",
        "cls21_close": "S",
        "cls21_humanity": "S",
        "cls9_humanity": "S",
        "ipip50": "V1",
        "iri28": "V2",
        "mini_ipip": "V1",
        "mpq_bf_absorption": "V2",
        "scbcs5": "S",
        "sites": "V2",
        "tas34": "V1",
        "tas4": "S",
        "tipi": "V2",
        "ubc_sscs10": "U",
        "who5": "V2",
    }
    # an unverified or secondary fact is never presented as settled
    assert "U:" in load_instrument("ubc_sscs10").grade_notes
    for name in ("tas4", "scbcs5", "cls21_humanity", "cls21_close", "cls9_humanity"):
        assert "S:" in load_instrument(name).grade_notes
    # facts kept unverified but not used for scoring are still stated
    assert "U (not used for scoring)" in load_instrument("cls9_humanity").grade_notes
    assert "V1:" in load_instrument("batson_ecpd").grade_notes


# ---------------------------------------------------------------------------------------------
# Keys checked against the published scoring keys


def test_bfi44_key():
    ins = load_instrument("bfi44")
    assert ins.items == ids("bfi44", range(1, 45))
    assert (ins.response_min, ins.response_max, ins.scoring) == (1, 5, "mean")
    expected = {
        "extraversion": ([1, 6, 11, 16, 21, 26, 31, 36], [6, 21, 31]),
        "agreeableness": ([2, 7, 12, 17, 22, 27, 32, 37, 42], [2, 12, 27, 37]),
        "conscientiousness": ([3, 8, 13, 18, 23, 28, 33, 38, 43], [8, 18, 23, 43]),
        "neuroticism": ([4, 9, 14, 19, 24, 29, 34, 39], [9, 24, 34]),
        "openness": ([5, 10, 15, 20, 25, 30, 35, 40, 41, 44], [35, 41]),
    }
    assert [k.name for k in ins.scales] == list(expected)
    for key in ins.scales:
        items, rev = expected[key.name]
        assert key.items == ids("bfi44", items)
        assert key.reverse == ids("bfi44", rev)
    assert reversed_numbers(ins) == [2, 6, 8, 9, 12, 18, 21, 23, 24, 27, 31, 34, 35, 37, 41, 43]


def test_bfi10_key_and_bfi44_mapping():
    ins = load_instrument("bfi10")
    expected = {
        "extraversion": ([1, 6], [1]),
        "agreeableness": ([2, 7], [7]),
        "conscientiousness": ([3, 8], [3]),
        "neuroticism": ([4, 9], [4]),
        "openness": ([5, 10], [5]),
    }
    for key in ins.scales:
        items, rev = expected[key.name]
        assert key.items == ids("bfi10", items)
        assert key.reverse == ids("bfi10", rev)
    assert reversed_numbers(ins) == [1, 3, 4, 5, 7]
    mapping = {1: 6, 2: 22, 3: 23, 4: 9, 5: 41, 6: 36, 7: 2, 8: 3, 9: 39, 10: 20}
    assert ins.derive == {"bfi44": {f"bfi10_{k}": f"bfi44_{v}" for k, v in mapping.items()}}


def test_ipip50_key_cycles_factors_and_uses_emotional_stability():
    ins = load_instrument("ipip50")
    assert (ins.scoring, ins.response_min, ins.response_max) == ("sum", 1, 5)
    names = [
        "extraversion",
        "agreeableness",
        "conscientiousness",
        "emotional_stability",
        "intellect",
    ]
    assert [k.name for k in ins.scales] == names
    for f, key in enumerate(ins.scales, start=1):
        assert key.items == ids("ipip50", [k for k in range(1, 51) if (k - 1) % 5 + 1 == f])
    assert reversed_numbers(ins) == [
        2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 29, 30, 32, 34, 36, 38, 39, 44, 46, 49,
    ]  # fmt: skip
    stability = ins.scale("emotional_stability")
    assert stability.reverse == ids("ipip50", [4, 14, 24, 29, 34, 39, 44, 49])
    assert "high = emotionally stable" in stability.description
    assert ins.item_text["ipip50_1"] == "Am the life of the party."
    assert ins.item_text["ipip50_50"] == "Am full of ideas."


def test_mini_ipip_key_uses_neuroticism():
    ins = load_instrument("mini_ipip")
    assert (ins.scoring, ins.response_min, ins.response_max) == ("sum", 1, 5)
    names = ["extraversion", "agreeableness", "conscientiousness", "neuroticism", "intellect"]
    assert [k.name for k in ins.scales] == names
    assert reversed_numbers(ins) == [6, 7, 8, 9, 10, 15, 16, 17, 18, 19, 20]
    neuro = ins.scale("neuroticism")
    assert neuro.items == ids("mini_ipip", [4, 9, 14, 19])
    assert neuro.reverse == ids("mini_ipip", [9, 19])
    assert "high = more neurotic" in neuro.description
    assert ins.scale("intellect").reverse == ids("mini_ipip", [10, 15, 20])


def test_derived_items_keep_their_keying():
    # A derived item must be keyed as in its source, except where the sign convention of the
    # scale flips: Mini-IPIP neuroticism vs IPIP-50 emotional stability.
    for short, long_name in (("bfi10", "bfi44"), ("mini_ipip", "ipip50")):
        small, big = load_instrument(short), load_instrument(long_name)
        scale_of = {item: key for key in big.scales for item in key.items}
        for key in small.scales:
            for item in key.items:
                source = small.derive[long_name][item]
                big_key = scale_of[source]
                flipped = key.name == "neuroticism" and big_key.name == "emotional_stability"
                same_scale = big_key.name == key.name or flipped
                assert same_scale, (item, source)
                assert (item in key.reverse) == ((source in big_key.reverse) != flipped)
                if short == "mini_ipip":
                    assert small.item_text[item] == big.item_text[source]


def test_tipi_key():
    ins = load_instrument("tipi")
    assert (ins.scoring, ins.response_min, ins.response_max) == ("mean", 1, 7)
    assert reversed_numbers(ins) == [2, 4, 6, 8, 10]
    assert ins.scale("emotional_stability").items == ids("tipi", [4, 9])
    assert ins.scale("emotional_stability").reverse == ids("tipi", [4])


def test_absorption_keys():
    tas = load_instrument("tas34")
    assert tas.items == ids("tas34", range(1, 35))
    assert (tas.scoring, tas.response_min, tas.response_max) == ("count", 0, 1)
    assert reversed_numbers(tas) == []

    mpq = load_instrument("mpq_bf_absorption")
    numbers = [13, 24, 36, 48, 59, 71, 83, 95, 107, 119, 130, 155]
    assert mpq.items == ids("mpq_bf_absorption", numbers)
    assert (mpq.scoring, mpq.response_min, mpq.response_max) == ("count", 0, 1)
    assert reversed_numbers(mpq) == []
    t = [29, 35, 39, 43, 46, 49, 52, 55, 57, 60, 63, 66, 73]
    assert mpq.norms == {"t_score": {raw: float(v) for raw, v in enumerate(t)}}

    tas4 = load_instrument("tas4")
    assert tas4.items == ids("tas4", range(1, 5))
    assert (tas4.scoring, tas4.response_min, tas4.response_max) == ("mean", 1, 5)
    assert reversed_numbers(tas4) == []


def test_sites_records_both_anchor_sets():
    ins = load_instrument("sites")
    assert ins.items == ("sites_1",)
    assert ins.anchors["published"] == {1: "Not very true of me", 5: "Very true of me"}
    assert ins.anchors["study"] == {1: "Strongly disagree", 5: "Strongly agree"}
    assert ins.anchors["lab"][3] == "Neutral"


def test_compassionate_love_keys():
    for name in ("cls21_humanity", "cls21_close"):
        ins = load_instrument(name)
        assert ins.items == ids(name, range(1, 22))
        assert (ins.scoring, ins.response_min, ins.response_max) == ("mean", 1, 7)
        assert reversed_numbers(ins) == []
    cls9 = load_instrument("cls9_humanity")
    assert cls9.derive == {
        "cls21_humanity": {
            f"cls9_humanity_{k}": f"cls21_humanity_{v}"
            for k, v in enumerate([3, 4, 5, 6, 9, 10, 12, 13, 15], start=1)
        }
    }
    scbcs = load_instrument("scbcs5")
    assert scbcs.scoring == "sum"
    assert scbcs.derive == {
        "cls21_humanity": {
            f"scbcs5_{k}": f"cls21_humanity_{v}" for k, v in enumerate([3, 9, 10, 11, 12], start=1)
        }
    }


def test_ubc_sscs10_key():
    ins = load_instrument("ubc_sscs10")
    assert (ins.scoring, ins.response_min, ins.response_max) == ("mean", 1, 7)
    assert reversed_numbers(ins) == [1, 2, 3, 5]


def test_who5_raw_and_percentage_scales():
    ins = load_instrument("who5")
    assert (ins.scoring, ins.response_min, ins.response_max) == ("sum", 0, 5)
    raw, pct = ins.scales
    assert (raw.name, raw.multiplier, raw.score_range) == ("raw", 1.0, (0.0, 25.0))
    assert (pct.name, pct.multiplier, pct.score_range) == ("percentage", 4.0, (0.0, 100.0))


def test_docs_table_gives_every_instrument_with_its_file_grade():
    # docs/instruments.md is the overview users read; its grade column must match the files
    doc = (LIBRARY.parents[1] / "docs" / "instruments.md").read_text(encoding="utf-8")
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    header = next(line for line in doc.splitlines() if line.startswith("| Name |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    documented = {}
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(columns), line
        documented[cells[0].strip("`")] = cells[columns.index("Grade")]
    table = list_instruments()
    assert documented == dict(zip(table["name"], table["grade"], strict=True))


# Interpersonal Reactivity Index (Davis 1980): item numbers per subscale, reverse keyed items
IRI_KEY = {
    "perspective_taking": ([3, 8, 11, 15, 21, 25, 28], [3, 15]),
    "fantasy": ([1, 5, 7, 12, 16, 23, 26], [7, 12]),
    "empathic_concern": ([2, 4, 9, 14, 18, 20, 22], [4, 14, 18]),
    "personal_distress": ([6, 10, 13, 17, 19, 24, 27], [13, 19]),
}


def test_iri28_key():
    ins = load_instrument("iri28")
    assert ins.items == ids("iri28", range(1, 29))
    assert (ins.scoring, ins.response_min, ins.response_max) == ("sum", 0, 4)
    assert [k.name for k in ins.scales] == list(IRI_KEY)
    for key in ins.scales:
        items, rev = IRI_KEY[key.name]
        assert len(key.items) == 7
        assert key.items == ids("iri28", items)
        assert key.reverse == ids("iri28", rev)
        assert key.score_range == (0.0, 28.0)
    # the four subscales partition the 28 items; no total scale
    assert sorted(int(i.rsplit("_", 1)[1]) for k in ins.scales for i in k.items) == list(
        range(1, 29)
    )
    assert reversed_numbers(ins) == [3, 4, 7, 12, 13, 14, 15, 18, 19]
    assert ins.anchors["default"] == {
        0: "A: Does not describe me well",
        4: "E: Describes me very well",
    }


def score_quietly(data, name):
    """Score a handful of respondents; reliability warnings of tiny samples are expected."""
    with package_warnings() as records:
        result = score(data, name)
    assert all(issubclass(r.category, SurveysWarning) for r in records)
    tidy = result.scores
    return {(i, s): v for i, s, v in zip(tidy["id"], tidy["scale"], tidy["score"], strict=True)}


def test_iri28_hand_scored_respondents():
    # r1 answers item k with (k - 1) mod 5: 1->0, 2->1, 3->2, 4->3, 5->4, 6->0, ..., 28->2.
    # Reversed items become 4 - x:
    #   PT: 3R 2->2, 8 2, 11 0, 15R 4->0, 21 0, 25 4, 28 2           = 10
    #   FS: 1 0, 5 4, 7R 1->3, 12R 1->3, 16 0, 23 2, 26 0            = 12
    #   EC: 2 1, 4R 3->1, 9 3, 14R 3->1, 18R 2->2, 20 4, 22 1        = 13
    #   PD: 6 0, 10 4, 13R 2->2, 17 1, 19R 3->1, 24 3, 27 1          = 12
    # r2 answers E (4) to everything: the forward items count 4, the reversed ones 0, so
    #   PT 5 x 4 = 20, FS 5 x 4 = 20, EC 4 x 4 = 16, PD 5 x 4 = 20.
    # r3 answers A (0) to everything: the mirror image, 4 x (number of reversed items).
    items = load_instrument("iri28").items
    rows = [[(k - 1) % 5 for k in range(1, 29)], [4] * 28, [0] * 28]
    data = pd.DataFrame(rows, columns=list(items), dtype=float)
    data.insert(0, "id", ["r1", "r2", "r3"])
    got = score_quietly(data, "iri28")
    expected = {
        "r1": [10, 12, 13, 12],
        "r2": [20, 20, 16, 20],
        "r3": [8, 8, 12, 8],
    }
    for rid, values in expected.items():
        assert [got[(rid, scale)] for scale in IRI_KEY] == values


def test_iri28_refuses_answers_coded_one_to_five():
    items = load_instrument("iri28").items
    data = pd.DataFrame([[5] * 28], columns=list(items), dtype=float)
    data.insert(0, "id", ["r1"])
    with pytest.raises(InputValidationError) as info:
        score(data, "iri28")
    assert set(info.value.failure_cases["column"]) == set(items)


BATSON_EC = ["sympathetic", "moved", "compassionate", "tender", "warm", "softhearted"]
BATSON_PD = [
    "alarmed",
    "grieved",
    "upset",
    "worried",
    "disturbed",
    "perturbed",
    "distressed",
    "troubled",
]


def test_batson_indices_key_and_adjectives():
    ins = load_instrument("batson_ecpd")
    assert (ins.scoring, ins.response_min, ins.response_max) == ("mean", 1, 7)
    ec, pd_ = ins.scales
    assert (ec.name, pd_.name) == ("empathic_concern", "personal_distress")
    assert [ins.item_text[i] for i in ec.items] == BATSON_EC
    assert [ins.item_text[i] for i in pd_.items] == BATSON_PD
    assert reversed_numbers(ins) == []
    assert ins.anchors["common"] == {1: "Not at all", 7: "Extremely"}


def test_batson_hand_scored_respondents():
    # r1: EC 7 6 5 4 3 2 -> 27 / 6 = 4.5; PD 1 2 3 4 5 6 7 7 -> 35 / 8 = 4.375 (the steps of
    # 1/6 and 1/8 seen in published empathy and distress scores). r2: all 1 -> 1 and 1.
    items = load_instrument("batson_ecpd").items
    rows = [[7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 7], [1] * 14]
    data = pd.DataFrame(rows, columns=list(items), dtype=float)
    data.insert(0, "id", ["r1", "r2"])
    got = score_quietly(data, "batson_ecpd")
    assert got[("r1", "empathic_concern")] == 4.5
    assert got[("r1", "personal_distress")] == 4.375
    assert got[("r2", "empathic_concern")] == got[("r2", "personal_distress")] == 1.0


def test_nine_item_cls_is_not_labelled_a_published_short_form():
    ins = load_instrument("cls9_humanity")
    assert "CLS-H-SF" not in ins.title
    assert "not verified" in ins.grade_notes


# ---------------------------------------------------------------------------------------------
# load_instrument


def test_unknown_library_name_lists_valid_names():
    with pytest.raises(UnknownInstrumentError) as info:
        load_instrument("bfi45")
    message = str(info.value)
    assert "bfi45" in message
    for name in NAMES:
        assert name in message
    assert isinstance(info.value, KeyError)


def test_custom_toml_in_psych_key_notation(tmp_path):
    ins = load_instrument(KEYS / "bfi25.toml")
    assert ins.name == "bfi25"
    assert ins.grade == "U"  # a custom key carries no verification
    assert ins.items[:5] == ("A1", "A2", "A3", "A4", "A5")
    assert len(ins.items) == 25
    assert ins.scale("agree").reverse == ("A1",)
    assert ins.scale("extraversion").reverse == ("E1", "E2")
    assert ins.scale("neuroticism").reverse == ()
    assert (ins.response_min, ins.response_max) == (1.0, 6.0)
    # a str path works too, and the name defaults to the file stem
    path = tmp_path / "short.toml"
    path.write_text(
        '[instrument]\nresponse_min = 0\nresponse_max = 1\nscoring = "count"\n'
        '[scales.total]\nitems = ["t1", "t2"]\n',
        encoding="utf-8",
    )
    short = load_instrument(str(path))
    assert (short.name, short.scoring, short.items) == ("short", "count", ("t1", "t2"))


def test_mapping_and_instrument_inputs():
    spec = {
        "instrument": {"name": "m", "response_min": 1, "response_max": 4, "scoring": "sum"},
        "scales": {"s": {"items": ["a", "-b"]}},
    }
    ins = load_instrument(spec)
    assert ins.scale("s").reverse == ("b",)
    assert load_instrument(ins) is ins
    with pytest.raises(InvalidParameterError):
        load_instrument(42)


@pytest.mark.parametrize(
    ("file", "column", "reason"),
    [
        ("missing_range.toml", "instrument.response_min", "missing declared response range"),
        ("reverse_not_in_items.toml", "scales.total.reverse", "not among the scale's items"),
        ("duplicated_item.toml", "scales.total.items", "more than once"),
        ("unknown_scoring.toml", "instrument.scoring", "unknown scoring rule"),
        ("undeclared_item.toml", "scales.total.items", "not declared in instrument.items"),
        ("min_not_below_max.toml", "instrument.response_min", "must be < response_max"),
        ("bad_syntax.toml", None, "not valid TOML"),
    ],
)
def test_malformed_key_files(file, column, reason):
    with pytest.raises(InputValidationError) as info:
        load_instrument(KEYS / file)
    cases = info.value.failure_cases
    assert cases.columns.tolist() == ["file", "row", "column", "value", "reason"]
    assert cases["file"].eq(str(KEYS / file)).all()
    assert cases["row"].isna().all()
    hit = cases[cases["reason"].str.contains(reason, regex=False)]
    assert len(hit) >= 1
    if column is None:
        assert hit["column"].isna().all()
    else:
        assert column in hit["column"].tolist()


def test_missing_range_reports_both_bounds():
    with pytest.raises(InputValidationError) as info:
        load_instrument(KEYS / "missing_range.toml")
    assert info.value.failure_cases["column"].tolist() == [
        "instrument.response_min",
        "instrument.response_max",
    ]


def test_every_problem_of_a_key_file_is_reported_at_once():
    with pytest.raises(InputValidationError) as info:
        load_instrument(KEYS / "many_problems.toml")
    cases = info.value.failure_cases
    found = set(zip(cases["column"], cases["value"].astype(str), strict=True))
    assert found == {
        ("instrument.colour", "blue"),  # unknown field
        ("instrument.response_min", "None"),  # missing range
        ("instrument.scoring", "sums"),  # unknown scoring rule
        ("instrument.items", "q3"),  # duplicated in the declared items
        ("scales.first.items", "q1"),  # listed twice (q1 and -q1)
        ("scales.first.reverse", "q5"),  # reverse item not among the items
        ("scales.first.items", "q9"),  # not declared in instrument.items
        ("scales.second.multiplier", "-2"),  # not positive
    }
    assert "8 problems" in str(info.value)


def test_missing_key_file():
    with pytest.raises(InputValidationError, match="does not exist"):
        load_instrument(KEYS / "no_such_file.toml")


def test_count_scoring_needs_zero_one_items():
    spec = {
        "instrument": {"name": "c", "response_min": 1, "response_max": 2, "scoring": "count"},
        "scales": {"s": {"items": ["a", "b"]}},
    }
    with pytest.raises(InputValidationError, match="count scoring needs 0/1 items"):
        load_instrument(spec)


# ---------------------------------------------------------------------------------------------
# ScaleKey and Instrument


def test_scale_key_rejects_inconsistent_keys():
    good = dict(name="s", items=("a", "b"), reverse=("b",), response_min=1, response_max=5)
    ScaleKey(**good, scoring="mean")
    with pytest.raises(InvalidParameterError, match="not among the scale's items"):
        ScaleKey(**{**good, "reverse": ("c",)}, scoring="mean")
    with pytest.raises(InvalidParameterError, match="unknown scoring rule"):
        ScaleKey(**good, scoring="median")
    with pytest.raises(InvalidParameterError, match="response_min must be < response_max"):
        ScaleKey(**{**good, "response_min": 5}, scoring="mean")
    with pytest.raises(InvalidParameterError, match="more than once"):
        ScaleKey(**{**good, "items": ("a", "a")}, scoring="mean")
    with pytest.raises(InvalidParameterError, match="multiplier"):
        ScaleKey(**good, scoring="sum", multiplier=0)


def test_scale_lookup():
    ins = load_instrument("tipi")
    assert isinstance(ins, Instrument)
    assert ins.scale("openness").items == ("tipi_5", "tipi_10")
    with pytest.raises(InvalidParameterError, match="extraversion"):
        ins.scale("neuroticism")


# ---------------------------------------------------------------------------------------------
# derive_items


def test_derive_items_copies_source_columns_and_keeps_the_input():
    data = pd.DataFrame(
        {"id": [1, 2]} | {f"bfi44_{k}": [k % 5 + 1, 5 - k % 5] for k in range(1, 45)}
    )
    before = data.copy()
    out = derive_items(data, "bfi10", source="bfi44")
    pd.testing.assert_frame_equal(data, before)
    assert out.columns.tolist() == data.columns.tolist() + [f"bfi10_{k}" for k in range(1, 11)]
    assert out["bfi10_1"].tolist() == data["bfi44_6"].tolist()
    assert out["bfi10_10"].tolist() == data["bfi44_20"].tolist()
    # changing the result does not touch the input
    out.loc[0, "bfi10_1"] = 99
    assert data.loc[0, "bfi44_6"] != 99


def test_derive_items_reports_missing_and_existing_columns():
    data = pd.DataFrame({f"ipip50_{k}": [3] for k in range(1, 51) if k not in (17, 23)})
    data["mini_ipip_1"] = 3
    with pytest.raises(InputValidationError) as info:
        derive_items(data, "mini_ipip", source="ipip50")
    cases = info.value.failure_cases
    assert sorted(cases["column"]) == ["ipip50_17", "ipip50_23", "mini_ipip_1"]


def test_derive_items_rejects_unknown_source():
    data = pd.DataFrame({"x": [1]})
    with pytest.raises(InvalidParameterError, match="cls21_humanity"):
        derive_items(data, "scbcs5", source="bfi44")
    with pytest.raises(InvalidParameterError, match="DataFrame"):
        derive_items([1, 2], "scbcs5", source="cls21_humanity")
