from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import FormulaError, InvalidParameterError
from models.formula import (
    Design,
    FormulaSpec,
    RandomBlock,
    RandomTerm,
    build_design,
    formula_name,
    parse_formula,
    quote_name,
)

DATA = Path(__file__).resolve().parents[1] / "data"
REFERENCE = Path(__file__).resolve().parent / "reference"


@pytest.fixture(scope="module")
def orthodont():
    return pd.read_csv(DATA / "nlme_Orthodont.csv")


@pytest.fixture
def small():
    return pd.DataFrame(
        {
            "y": [1.0, 2.0, 3.5, 4.0, 5.5, 6.0, 7.5, np.nan],
            "x": [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 2.0, 1.0],
            "f": ["a", "b", "a", "b", "c", "c", "a", "b"],
            "g": ["g2", "g2", "g1", "g1", "g3", "g3", "g1", "g1"],
            "h": [1, 2, 1, 2, 1, 2, 1, 2],
        }
    )


# ---------------------------------------------------------------------------------------------
# parse_formula


def test_parse_correlated_slope():
    spec = parse_formula("Reaction ~ Days + (Days | Subject)")
    assert spec == FormulaSpec(
        formula="Reaction ~ Days + (Days | Subject)",
        response="Reaction",
        fixed="Days",
        random=(RandomTerm("Subject", ("Subject",), "Days", True),),
    )


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ("y ~ x + (1 | g)", [("g", ("g",), "1", True)]),
        ("y ~ x + (1 + x | g)", [("g", ("g",), "1 + x", True)]),
        ("y ~ x + (0 + x | g)", [("g", ("g",), "0 + x", True)]),
        ("y ~ x + (1 + x || g)", [("g", ("g",), "1 + x", False)]),
        ("y ~ x + (1|g)", [("g", ("g",), "1", True)]),
        (
            "y ~ x + (1 | g1/g2)",
            [("g1", ("g1",), "1", True), ("g1:g2", ("g1", "g2"), "1", True)],
        ),
        (
            "y ~ x + (1 | a/b/c)",
            [
                ("a", ("a",), "1", True),
                ("a:b", ("a", "b"), "1", True),
                ("a:b:c", ("a", "b", "c"), "1", True),
            ],
        ),
        ("y ~ x + (1 | g1:g2)", [("g1:g2", ("g1", "g2"), "1", True)]),
        (
            "y ~ x + (1 | g1) + (1 | g2)",
            [("g1", ("g1",), "1", True), ("g2", ("g2",), "1", True)],
        ),
        (
            "y ~ x + ((1 | g) + (0 + x | g))",
            [("g", ("g",), "1", True), ("g", ("g",), "0 + x", True)],
        ),
        ("y ~ x + (1 | `my group`)", [("my group", ("my group",), "1", True)]),
    ],
)
def test_parse_random_terms(formula, expected):
    spec = parse_formula(formula)
    assert spec.fixed == "x"
    assert [(t.group, t.factors, t.expr, t.correlated) for t in spec.random] == expected


@pytest.mark.parametrize(
    ("formula", "fixed"),
    [
        ("y ~ (1 | g)", "1"),
        ("y ~ 0 + x + (1 | g)", "0 + x"),
        ("y ~ x - 1 + (1 | g)", "x - 1"),
        ("y ~ age * Sex + (1 | g)", "age * Sex"),
        ("y ~ (1 | g) + x + z", "x + z"),
        ("y ~ x*(a + b) + (1 | g)", "x*(a + b)"),
        ("y ~ center(x) + I(x**2) + (1 | g)", "center(x) + I(x**2)"),
        ("y ~ x", "x"),
    ],
)
def test_parse_fixed_part(formula, fixed):
    assert parse_formula(formula).fixed == fixed


def test_parse_response_expression():
    assert parse_formula("log(y) ~ x + (1 | g)").response == "log(y)"


@pytest.mark.parametrize(
    "formula",
    [
        "y x + (1 | g)",
        "y ~ x ~ z",
        " ~ x + (1 | g)",
        "y ~ ",
        "y ~ x + (1 | g",
        "y ~ x + 1 | g",
        "y ~ x + ( | g)",
        "y ~ x + (1 | )",
        "y ~ x + (1 | g | h)",
        "y ~ x + + (1 | g)",
        "y ~ x + (1 | g) +",
        "y ~ x + (1 | g + h)",
        "y ~ x + (1 | g) - 1",
        "y ~ x + (1 + | g)",
        "y ~ x +* z + (1 | g)",
    ],
)
def test_parse_errors(formula):
    with pytest.raises(FormulaError):
        parse_formula(formula)


def test_parse_rejects_non_string():
    with pytest.raises(InvalidParameterError, match="`formula` parameter of parse_formula"):
        parse_formula(3)


def test_parse_error_names_the_part():
    with pytest.raises(FormulaError, match="outside a parenthesised random-effects term"):
        parse_formula("y ~ x + 1 | g")


# ---------------------------------------------------------------------------------------------
# build_design


def test_design_contract_fields(small):
    d = build_design(parse_formula("y ~ x + (1 + x | g)"), small)
    assert isinstance(d, Design)
    assert isinstance(d.y, np.ndarray) and d.y.dtype == float
    assert isinstance(d.X, pd.DataFrame)
    assert isinstance(d.random, list) and len(d.random) == 1
    block = d.random[0]
    assert isinstance(block, RandomBlock)
    assert block.group == "g"
    assert block.terms == ("Intercept", "x")
    assert isinstance(block.Z, np.ndarray) and block.Z.shape == (7, 2)
    assert isinstance(block.levels, pd.Index)
    assert block.codes.dtype == np.int64
    assert list(d.rows) == [0, 1, 2, 3, 4, 5, 6]
    assert d.n_dropped == 1
    assert d.n_obs == 7


def test_design_values(small):
    d = build_design(parse_formula("y ~ x + (1 + x | g)"), small)
    np.testing.assert_array_equal(d.y, [1.0, 2.0, 3.5, 4.0, 5.5, 6.0, 7.5])
    np.testing.assert_array_equal(d.X["x"], small["x"].iloc[:7])
    np.testing.assert_array_equal(d.X["Intercept"], np.ones(7))
    block = d.random[0]
    assert list(block.levels) == ["g1", "g2", "g3"]
    np.testing.assert_array_equal(block.codes, [1, 1, 0, 0, 2, 2, 0])
    np.testing.assert_array_equal(block.Z[:, 1], small["x"].iloc[:7])


def test_design_categorical_term_names(orthodont):
    d = build_design(parse_formula("distance ~ age * Sex + (1 | Subject)"), orthodont)
    assert list(d.X.columns) == ["Intercept", "age", "Sex[T.Male]", "age:Sex[T.Male]"]
    male = (orthodont["Sex"] == "Male").to_numpy(dtype=float)
    np.testing.assert_array_equal(d.X["age:Sex[T.Male]"], orthodont["age"] * male)
    assert d.random[0].n_levels == 27


def test_design_uncorrelated_terms_split(small):
    d = build_design(parse_formula("y ~ x + (1 + x || g)"), small)
    assert [(b.group, b.terms, b.correlated) for b in d.random] == [
        ("g", ("Intercept",), False),
        ("g", ("x",), False),
    ]
    np.testing.assert_array_equal(d.random[1].Z[:, 0], small["x"].iloc[:7])


def test_design_uncorrelated_factor_kept_together(small):
    d = build_design(parse_formula("y ~ x + (1 + f || g)"), small)
    assert [b.terms for b in d.random] == [("Intercept",), ("f[T.b]", "f[T.c]")]


def test_design_no_intercept_slope(small):
    d = build_design(parse_formula("y ~ x + (0 + x | g)"), small)
    assert d.random[0].terms == ("x",)


def test_design_nested_labels(small):
    d = build_design(parse_formula("y ~ x + (1 | g/h)"), small)
    outer, inner = d.random
    assert outer.group == "g" and inner.group == "g:h"
    assert list(inner.levels) == ["g1:1", "g1:2", "g2:1", "g2:2", "g3:1", "g3:2"]
    assert inner.factors == ("g", "h")
    # rows 2 and 6 share school g1 and class 1
    assert inner.codes[2] == inner.codes[6] == 0


def test_design_crossed(small):
    d = build_design(parse_formula("y ~ 1 + (1 | g) + (1 | f)"), small)
    assert [b.group for b in d.random] == ["g", "f"]
    assert list(d.random[1].levels) == ["a", "b", "c"]
    assert list(d.X.columns) == ["Intercept"]


def test_design_numeric_group_levels_sorted_numerically():
    df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "g": [10, 9, 10, 100]})
    d = build_design(parse_formula("y ~ 1 + (1 | g)"), df)
    assert list(d.random[0].levels) == [9, 10, 100]
    np.testing.assert_array_equal(d.random[0].codes, [1, 0, 1, 2])


def test_design_categorical_levels_keep_order_and_drop_unused():
    g = pd.Categorical(["b", "a", "b", "a"], categories=["b", "z", "a"])
    f = pd.Categorical(["u", "u", "v", "v"], categories=["u", "v", "w"])
    df = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "g": g, "f": f})
    d = build_design(parse_formula("y ~ f + (1 | g)"), df)
    assert list(d.random[0].levels) == ["b", "a"]
    assert list(d.X.columns) == ["Intercept", "f[T.v]"]


def test_design_drops_rows_with_missing_used_values_only(small):
    df = small.assign(unused=np.nan)
    df.loc[2, "x"] = np.nan
    d = build_design(parse_formula("y ~ x + (1 | g)"), df)
    assert list(d.rows) == [0, 1, 3, 4, 5, 6]
    assert d.n_dropped == 2


def test_design_does_not_mutate_input(small):
    before = small.copy()
    build_design(parse_formula("y ~ x * f + (1 + x | g)"), small)
    pd.testing.assert_frame_equal(small, before)


def test_design_response_expression(small):
    d = build_design(parse_formula("log(y) ~ x + (1 | g)"), small)
    np.testing.assert_allclose(d.y, np.log(small["y"].iloc[:7]), rtol=1e-15)


def test_design_sqrt_is_a_function_not_a_column(small):
    d = build_design(parse_formula("y ~ sqrt(x) + (sqrt(h) | g)"), small)
    np.testing.assert_allclose(d.X["sqrt(x)"], np.sqrt(small["x"].iloc[:7]), rtol=1e-15)
    np.testing.assert_allclose(d.random[0].Z[:, 1], np.sqrt(small["h"].iloc[:7]), rtol=1e-15)
    with pytest.raises(FormulaError, match=r"lack the column\(s\) \['sqrt'\]"):
        build_design(parse_formula("y ~ sqrt + (1 | g)"), small)


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        (
            "y ~ log(x) + (1 | g)",
            r"log\(\) is defined for positive values only; 3 value\(s\) are not ",
        ),
        ("y ~ sqrt(x - 1) + (1 | g)", r"sqrt\(\) is defined for values >= 0 only; 3 value\(s\)"),
    ],
)
def test_design_log_and_sqrt_outside_their_domain_are_named(small, formula, message):
    with pytest.raises(FormulaError, match=message + r".*the first in row 0: -?[01]\b"):
        build_design(parse_formula(formula), small)


def test_design_missing_columns_listed(small):
    with pytest.raises(FormulaError, match=r"\['school', 'z'\]"):
        build_design(parse_formula("y ~ x + z + (1 | school)"), small)


def test_design_non_numeric_response(small):
    with pytest.raises(FormulaError, match="must be numeric"):
        build_design(parse_formula("f ~ x + (1 | g)"), small)


def test_design_no_complete_rows():
    df = pd.DataFrame({"y": [np.nan, 1.0], "x": [1.0, np.nan], "g": ["a", "b"]})
    with pytest.raises(FormulaError, match="no row"):
        build_design(parse_formula("y ~ x + (1 | g)"), df)


@pytest.mark.parametrize(("spec", "data"), [("y ~ x", pd.DataFrame()), (None, pd.DataFrame())])
def test_design_parameter_types(spec, data):
    with pytest.raises(InvalidParameterError):
        build_design(spec, data)


def test_design_rejects_non_dataframe():
    with pytest.raises(InvalidParameterError, match="`data` parameter of build_design"):
        build_design(parse_formula("y ~ x + (1 | g)"), {"y": [1.0]})


# ---------------------------------------------------------------------------------------------
# Design.transform


def test_transform_same_coding_and_new_levels(orthodont):
    d = build_design(parse_formula("distance ~ age * Sex + (age | Subject)"), orthodont)
    new = pd.DataFrame(
        {
            "age": [8.0, 10.0, 12.0],
            "Sex": ["Male", "Female", "Male"],
            "Subject": ["M01", "X9", "F01"],
        }
    )
    t = d.transform(new)
    assert list(t.X.columns) == list(d.X.columns)
    np.testing.assert_array_equal(t.X["age:Sex[T.Male]"], [8.0, 0.0, 12.0])
    assert t.random[0].codes.tolist() == [list(d.random[0].levels).index("M01"), -1, 0]
    assert np.isnan(t.y).all()


def test_transform_equals_build_on_training_rows(orthodont):
    d = build_design(parse_formula("distance ~ age * Sex + (age | Subject)"), orthodont)
    t = d.transform(orthodont)
    np.testing.assert_array_equal(t.X.to_numpy(), d.X.to_numpy())
    np.testing.assert_array_equal(t.random[0].Z, d.random[0].Z)
    np.testing.assert_array_equal(t.random[0].codes, d.random[0].codes)
    np.testing.assert_array_equal(t.y, d.y)


def test_transform_nested_labels(small):
    d = build_design(parse_formula("y ~ x + (1 | g/h)"), small)
    new = pd.DataFrame({"x": [0.0, 1.0], "g": ["g3", "g9"], "h": [2, 1]})
    t = d.transform(new)
    assert t.random[1].codes.tolist() == [list(d.random[1].levels).index("g3:2"), -1]


def test_transform_without_random_needs_no_group_column(small):
    d = build_design(parse_formula("y ~ x + (1 | g)"), small)
    t = d.transform(pd.DataFrame({"x": [1.0, np.nan]}), random=False)
    assert t.random == []
    assert list(t.rows) == [0]
    assert t.n_dropped == 1


def test_transform_missing_column(small):
    d = build_design(parse_formula("y ~ x + (1 | g)"), small)
    with pytest.raises(FormulaError, match=r"\['g'\]"):
        d.transform(pd.DataFrame({"x": [1.0]}))


# -- the allow-list: a formula is data, never code ----------------------------------------------


@pytest.mark.parametrize(
    "formula",
    [
        "Reaction ~ Days + (Days | Subject)",
        "y ~ 1 + (1 | school/class)",
        "y ~ x*z + I(x**2) + C(g) + log(x) + exp(x) + (1 + x || g)",
        "y ~ poly(x, 2) + bs(x, df=3) + center(x) + scale(z) + sqrt(x)",
        "log(y) ~ x + (1|g)",
        "y ~ `odd name` + x:z - 1",
        "y ~ 1.5e-3 + x",
    ],
)
def test_allowed_formulas_parse(formula):
    parse_formula(formula)


@pytest.mark.parametrize(
    ("formula", "part"),
    [
        ("Reaction ~ Days + I(__import__('os').system('id > PWNED'))", "__import__"),
        ('y ~ exec("1") + x', "exec("),
        ("y ~ open('/etc/hostname')", "open("),
        ("y ~ {x + 1}", "{"),
        ("y ~ np.log(x)", "."),
        ("y ~ x[0]", "["),
        ("__import__('os') ~ x", "__import__"),
        ("y ~ lambda: 1", "lambda"),
        ("y ~ C(g, levels=['a'])", "["),
        ("y ~ x; import os", ";"),
        ("y ~ poly(x, degree=__import__('os'))", "__import__"),
        ("y ~ x if x else x", "if"),
        ("y ~ I((x)(1))", ")("),
        ("y ~ 'text'", "'text'"),
        ("y ~ `a` + `b", "`"),
    ],
)
def test_code_in_a_formula_is_refused_naming_the_part(formula, part):
    with pytest.raises(FormulaError, match="is not allowed") as info:
        parse_formula(formula)
    assert repr(part) in str(info.value) and "never run as code" in str(info.value)


def test_a_refused_formula_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FormulaError):
        parse_formula("y ~ x + I(__import__('os').system('touch PWNED'))")
    # a column named like code, quoted with backticks, is only a name
    data = pd.DataFrame({"y": [1.0, 2.0, 4.0], "open('PWNED2', 'w')": [1.0, 3.0, 2.0]})
    design = build_design(parse_formula("y ~ `open('PWNED2', 'w')`"), data)
    assert design.X.shape == (3, 2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "expr", ["1 + a", "a", "a + b", "0 + a", "0 + a + b", "1", "b + a", "a + 1", "1 + b + a"]
)
def test_plain_numeric_expressions_equal_formulaic(expr):
    """The matrix of an intercept and numeric columns is built without formulaic: the same
    column names, order and values as formulaic's, and a model spec that evaluates new data."""
    from formulaic import model_matrix

    from models._design import _matrix, _PlainSpec

    rng = np.random.default_rng(3)
    data = pd.DataFrame({"a": rng.normal(size=7), "b": np.arange(7), "g": list("xyzxyzx")})
    fast = _matrix(expr, data, "fixed part", f"y ~ {expr}")
    assert isinstance(fast.model_spec, _PlainSpec)
    slow = model_matrix(expr, data, na_action="raise")
    assert [str(c) for c in fast.columns] == [str(c) for c in slow.columns]
    np.testing.assert_array_equal(np.asarray(fast, dtype=float), np.asarray(slow, dtype=float))
    new = data.iloc[:3].assign(a=[1.0, 2.0, 3.0])
    again = _matrix(fast.model_spec, new, "fixed part", f"y ~ {expr}")
    np.testing.assert_array_equal(
        np.asarray(again, dtype=float), np.asarray(slow.model_spec.get_model_matrix(new), float)
    )


@pytest.mark.parametrize("expr", ["g", "a:b", "a * b", "log(b + 1)", "a + a", "-1 + a", "c"])
def test_other_expressions_go_to_formulaic(expr):
    from models._design import _plain_spec

    data = pd.DataFrame({"a": [1.0, 2.0], "b": [1, 2], "g": ["x", "y"], "c": [True, False]})
    assert _plain_spec(expr, data) is None


# -- names are data: any column name in backticks is one column -----------------------------------

HOSTILE = [
    "story_id) + I(10**10**10) + (1 | story_id",
    "a + b",
    "p|q",
    "p || q",
    "x ~ y",
    "x**2",
    "two words",
    "back`tick",
    "ends in backslash\\",
    "`",
    "g1/g2",
    "g1:g2",
    "C(x)",
    "(1 | g)",
    "open('PWNED', 'w')",
    "_private",
    "1st",
    "éü",
]


def hostile_data(n=12):
    rng = np.random.default_rng(3)
    data = {name: rng.normal(size=n) for name in HOSTILE}
    data["y"] = rng.normal(size=n)
    data["x"] = rng.normal(size=n)
    data["g"] = np.repeat(["a", "b", "c", "d"], n // 4)
    return pd.DataFrame(data)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_quoted_name_is_one_column_everywhere(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = hostile_data()
    data["grp " + name] = data.pop("g")
    q = quote_name(name)
    formula = f"{q} ~ x + {q} + (1 + {q} | {quote_name('grp ' + name)})"
    spec = parse_formula(formula)
    assert spec.response == name and spec.response_is_column
    assert spec.fixed == f"x + {q}"
    assert [(t.group, t.factors, t.expr) for t in spec.random] == [
        ("grp " + name, ("grp " + name,), f"1 + {q}")
    ]
    design = build_design(spec, data)
    assert list(design.X.columns) == ["Intercept", "x", name]
    assert design.random[0].terms == ("Intercept", name)
    np.testing.assert_array_equal(design.y, data[name].to_numpy())
    np.testing.assert_array_equal(design.X[name], data[name].to_numpy())
    assert design.random[0].n_levels == 4
    new = design.transform(data.head(3))
    pd.testing.assert_frame_equal(new.X, design.X.head(3))
    np.testing.assert_array_equal(new.y, data[name].to_numpy()[:3])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["two words", "back`tick", "x**2", "a + b", "p|q"])
def test_a_quoted_name_inside_functions_interactions_and_nesting(name):
    data = hostile_data()
    data["level " + name] = np.tile(["u", "v", "w"], 4)
    q, lv = quote_name(name), quote_name("level " + name)
    formula = (
        f"y ~ C({lv}) + {lv}:{q} + I({q}**2) + poly({q}, 2) + scale({q}) + log(exp({q}))"
        f" + (1 | g/{lv})"
    )
    design = build_design(parse_formula(formula), data)
    columns = list(design.X.columns)
    assert f"C({q})[T.v]".replace(q, lv) in columns
    assert f"level {name}[v]:{name}" in columns
    assert f"I({q} ** 2)" in columns and f"poly({q}, 2)[2]" in columns
    np.testing.assert_allclose(design.X[f"log(exp({q}))"], data[name])
    np.testing.assert_allclose(design.X[f"I({q} ** 2)"], data[name] ** 2)
    assert [b.group for b in design.random] == ["g", f"g:level {name}"]


def test_quote_name_escapes_backticks_and_backslashes():
    assert quote_name("a b") == "`a b`"
    assert quote_name("a`b") == "`a\\`b`"
    assert quote_name("a\\") == "`a\\\\`"
    for name in ("a`b", "a\\", "\\`", "``"):
        assert parse_formula(f"{quote_name(name)} ~ 1").response == name
    # a backslash before another character stays a backslash, as before
    assert parse_formula("`a\\b` ~ 1").response == "a\\b"
    with pytest.raises(InvalidParameterError, match="`name` parameter of quote_name"):
        quote_name(1)


def test_formula_name_quotes_only_what_is_not_a_plain_name():
    assert formula_name("tipi_agreeableness_z") == "tipi_agreeableness_z"
    assert formula_name("week2") == "week2"
    for name in ("two words", "_x", "1st", "class", "log", "poly", "x.y", "a)"):
        assert formula_name(name) == quote_name(name)


def test_a_missing_quoted_column_is_named():
    data = hostile_data()
    with pytest.raises(FormulaError, match=r"\['no such\) \+ column'\]"):
        build_design(parse_formula("y ~ `no such) + column` + (1 | g)"), data)
    with pytest.raises(FormulaError, match=r"\['z'\]"):
        build_design(parse_formula("y ~ poly(z, 2) + (1 | g)"), data)


@pytest.mark.parametrize("formula", ["`` ~ x", "y ~ x + (1 | ``)", "y ~ x + (1 | g:``)"])
def test_an_empty_quoted_name_is_refused(formula):
    with pytest.raises(FormulaError, match="names no column|not a column name"):
        parse_formula(formula)


# -- arithmetic is bounded before anything is evaluated -------------------------------------------


@pytest.mark.parametrize(
    ("formula", "part", "why"),
    [
        ("empathy ~ I(10**10**10) + (1 | participant_id)", "10**10**10", "a power of a power"),
        ("y ~ I(2^3^4)", "2^3^4", "a power of a power"),
        ("y ~ I((2**10)**10)", "(2**10)**10", "a power of a power of numbers"),
        ("y ~ I(((9**9)))**9", "(((9**9)))**9", "a power of a power of numbers"),
        ("y ~ I(x**11)", "x**11", "an exponent above 10"),
        ("y ~ I(x**(1 + 1))", "x**(", "an exponent must be a number"),
        ("y ~ I(x**y)", "x**y", "an exponent must be a number"),
        ("y ~ (a + b)**20", ")**20", "an exponent above 10"),
        ("y ~ (a + b + c + d + e + f)**10", "(a+b+c+d+e+f)**10", "6 terms to the power 10"),
        ("y ~ (a*b*c*d*e + f)**3", "(a*b*c*d*e+f)**3", "32 terms to the power 3"),
        ("y ~ I(1234567890123456 * x)", "1234567890123456", "more than 15 digits"),
        ("y ~ poly(x, 11)", "poly(x, 11)", "degree of poly must be a whole number from 1 to 10"),
        ("y ~ poly(x, degree=10**10)", "poly(x, degree=10**10)", "degree of poly"),
        ("y ~ poly(x, 2.5)", "poly(x, 2.5)", "degree of poly"),
        ("y ~ bs(x, df=51)", "bs(x, df=51)", "df of bs must be a whole number from 1 to 50"),
        ("y ~ bs(x, 100)", "bs(x, 100)", "df of bs"),
        ("y ~ bs(x, df=4, degree=11)", "bs(x, df=4, degree=11)", "degree of bs"),
        ("y ~ bs(`a b`, df=x)", "bs(`a b`, df=x)", "df of bs"),
    ],
)
def test_unbounded_arithmetic_is_refused_naming_the_part(formula, part, why):
    with pytest.raises(FormulaError, match="refused before anything is evaluated") as info:
        parse_formula(formula)
    assert repr(part) in str(info.value) or part in str(info.value)
    assert why in str(info.value)


@pytest.mark.parametrize(
    "formula",
    [
        "y ~ I(x**2) + I(x**-1) + I(x**0.5) + I(x^2)",
        "y ~ (a + b + c)**2 + (a*b + c)**3 + (a + b + c + d + e)**5 + I((a + b + c + d)**10)",
        "y ~ I((x + 1)**2) + I((x**2 + 1)**2)",
        "y ~ I(2**10 * x) + I(123456789012345 * x)",
        "y ~ poly(x, 10) + poly(x, degree=3, raw=True) + bs(x, df=50) + bs(x, 5, degree=2)",
        "y ~ bs(x, degree=10, df=12) + scale(x, center=True, scale=False) + center(x)",
    ],
)
def test_bounded_arithmetic_parses(formula):
    parse_formula(formula)


# -- poly, bs, scale and center against R ---------------------------------------------------------

TRANSFORM_REFERENCE = pd.read_csv(REFERENCE / "transforms.csv", comment="#")
TRANSFORM_X = np.array([0.5, 1.2, 2.0, 2.1, 3.7, 4.4, 5.0, 6.3, 7.9, 8.8])
TRANSFORM_NEW_X = np.array([0.7, 3.0, 8.0])


@pytest.mark.parametrize("case", list(dict.fromkeys(TRANSFORM_REFERENCE["case"])))
def test_transforms_match_r(case):
    """poly (orthogonal and raw), splines::bs and scale as in R 4.2.2
    (tests/models/reference/transforms.R), on the data and, with the same basis, on new data
    (R's predict, here Design.transform); R printed 15 significant digits."""
    reference = TRANSFORM_REFERENCE[TRANSFORM_REFERENCE["case"] == case]
    data = pd.DataFrame({"y": np.arange(10.0), "x": TRANSFORM_X, "g": [1, 2] * 5})
    design = build_design(parse_formula(f"y ~ 0 + {case} + (1 | g)"), data)
    new = design.transform(pd.DataFrame({"x": TRANSFORM_NEW_X}), random=False)
    for which, got in (("fit", design.X), ("new", new.X)):
        want = (
            reference[reference["data"] == which]
            .pivot(index="row", columns="column", values="value")
            .to_numpy()
        )
        assert got.shape == want.shape
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, atol=1e-13)


def test_transforms_in_the_random_part_and_on_a_quoted_column():
    data = pd.DataFrame({"y": np.arange(10.0), "x y": TRANSFORM_X, "g": [1, 2] * 5})
    design = build_design(parse_formula("y ~ poly(`x y`, 2) + (1 + center(`x y`) | g)"), data)
    assert list(design.X.columns) == ["Intercept", "poly(`x y`, 2)[1]", "poly(`x y`, 2)[2]"]
    assert design.random[0].terms == ("Intercept", "center(`x y`)")
    np.testing.assert_allclose(design.random[0].Z[:, 1], TRANSFORM_X - TRANSFORM_X.mean())
