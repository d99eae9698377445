"""One number format for the page and the manuscript (longitudinal/narrate/numbers.py)."""

import math

import pytest

from longitudinal.narrate.numbers import (
    MINUS,
    apa_ci,
    apa_df,
    apa_num,
    apa_p,
    apa_unit,
    num,
    p_text,
    signed,
)


@pytest.mark.parametrize(
    ("p", "shown"),
    [
        (0.0217, ".022"),
        (0.048, ".048"),
        (0.0495, ".050"),  # rounded, never truncated to .049
        (0.001, ".001"),
        (0.000999, "< .001"),
        (1e-12, "< .001"),
        (0.9984, ".998"),
        (0.9994, "> .999"),
        (0.99951, "> .999"),
        (1.0, "> .999"),
        (math.nan, "–"),
        (None, "–"),
    ],
)
def test_p_values_have_no_leading_zero_and_stop_at_001(p, shown):
    assert apa_p(p) == shown


def test_p_in_a_sentence_reads_less_than_not_equals_less_than():
    assert p_text(0.0004, name="*p*") == "*p* < .001"
    assert p_text(0.0217, name="*p*") == "*p* = .022"
    assert p_text(1.0, name="*p*") == "*p* > .999"


def test_negative_numbers_carry_the_minus_sign_not_a_hyphen():
    assert apa_num(-0.2238) == f"{MINUS}0.22"
    assert apa_num(-12.5, 1) == f"{MINUS}12.5"
    assert "-" not in apa_num(-3.0) and apa_num(-3.0) == f"{MINUS}3.00"
    # a value that rounds to zero has no sign
    assert apa_num(-0.004) == "0.00"
    assert apa_ci(-0.2238, 0.4357) == f"[{MINUS}0.22, 0.44]"


def test_bounded_values_drop_the_leading_zero_others_keep_it():
    assert apa_unit(0.0286) == ".03"
    assert apa_unit(0.0286, 3) == ".029"
    assert apa_unit(-0.2536, 3) == f"{MINUS}.254"
    assert apa_unit(1.0, 3) == "1.000"
    assert apa_num(0.53) == "0.53"  # an effect size d can exceed 1: it keeps its zero
    assert apa_ci(0.72, 0.94, unit=True) == "[.72, .94]"


def test_degrees_of_freedom():
    assert apa_df(14.0) == "14"
    assert apa_df(26.91118) == "26.9"
    assert apa_df(1.92223) == "1.92"
    assert apa_df(float("nan")) == "–"


@pytest.mark.parametrize(
    ("value", "page", "manuscript"),
    [
        (0.99999, "p > .999", "*p* > .999"),  # the page printed 1.000 before the floor
        (0.9994, "p > .999", "*p* > .999"),
        (0.0004, "p < .001", "*p* < .001"),
        (0.0217, "p = .022", "*p* = .022"),
        (math.nan, "p = –", "*p* = –"),
    ],
)
def test_the_page_and_the_manuscript_write_a_p_value_one_way(value, page, manuscript):
    assert p_text(value) == page
    assert p_text(value, name="*p*") == manuscript


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (-0.004, "0.00"),  # the page printed −0.00 before the floor
        (-0.2238, f"{MINUS}0.22"),
        (math.inf, "∞"),  # the manuscript printed a dash before the floor
        (-math.inf, f"{MINUS}∞"),
        (math.nan, "–"),
    ],
)
def test_a_cell_of_the_page_is_the_manuscript_number(value, shown):
    assert num(value) == apa_num(value) == shown


def test_counts_flags_and_text_keep_their_page_form():
    assert (num(12), num(True), num(None), num("pre")) == ("12", "yes", "–", "pre")


def test_a_signed_number_is_positive_unless_it_prints_negative():
    assert (signed(0.25), signed(-0.25), signed(-0.004), signed(math.nan)) == (
        "+0.25",
        f"{MINUS}0.25",
        "+0.00",
        "–",
    )
