"""Column vocabulary shared by every result table :mod:`models` returns."""

TERM = "term"
ESTIMATE = "estimate"
SE = "se"
DF = "df"
STATISTIC = "statistic"
P_VALUE = "p_value"
CI_LOW = "ci_low"
CI_HIGH = "ci_high"
N = "n"
GROUP = "group"

FIXED_COLUMNS = [TERM, ESTIMATE, SE, DF, STATISTIC, P_VALUE, CI_LOW, CI_HIGH]
