"""APA number formatting (longitudinal/manuscript/numbers.py)."""

import math

import pytest

from longitudinal.manuscript.numbers import (
    MINUS,
    apa_ci,
    apa_df,
    apa_num,
    apa_p,
    apa_p_text,
    apa_unit,
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
    assert apa_p_text(0.0004) == "*p* < .001"
    assert apa_p_text(0.0217) == "*p* = .022"
    assert apa_p_text(1.0) == "*p* > .999"


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
