# Reference values for tests/longitudinal/cli/test_cli_reliability.py: psych::mlr on the
# hand-written export tests/data/raw/mood3_long.csv (key tests/data/raw/mood3.toml), written
# to cli_reliability.json beside this script.
#
# Run from the repository root:  Rscript tests/longitudinal/reference/cli_reliability.R
#
# calm (c1, c2, -c3) is complete: ANOVA components (psych's default). tension (t1, t2, -t3)
# misses one answer: lme4 REML components (psych's lmer = TRUE). psych reverses "-c3" and
# "-t3" from the observed minimum and maximum of the scale's items, which are 1 and 5 here,
# the declared range of the key, so psych's reversal equals the package's. energy is answered
# at one wave only: no multilevel result.

suppressPackageStartupMessages({
  library(psych)
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
raw <- read.csv(file.path(here, "..", "..", "data", "raw", "mood3_long.csv"))

num <- function(x) unname(as.numeric(x))
one <- function(scale, items, lmer) {
  m <- mlr(raw, grp = "pid", Time = "wave", items = items, alpha = FALSE, lmer = lmer)
  comp <- m$components
  list(
    instrument = "mood3", scale = scale, n_persons = m$n.obs, n_occasions = m$n.time,
    n_items = m$n.items, method = if (lmer) "reml" else "anova",
    RkF = num(m$RkF), R1R = num(m$R1R), RkR = num(m$RkR), Rc = num(m$Rc),
    RkRn = num(m$RkRn), Rcn = num(m$Rcn),
    crossed = num(comp[c("ID", "Time", "Items", "ID x time", "ID x items", "time x items",
                         "Residual"), 1]),
    nested = num(comp[c("id", "id(time)", "residual"), 1])
  )
}
out <- list(
  created = format(Sys.time(), "%Y-%m-%d", tz = "UTC"),
  R = R.version.string,
  packages = list(psych = as.character(packageVersion("psych")),
                  lme4 = as.character(packageVersion("lme4")),
                  nlme = as.character(packageVersion("nlme"))),
  results = list(
    suppressWarnings(one("calm", c("c1", "c2", "-c3"), FALSE)),
    suppressWarnings(one("tension", c("t1", "t2", "-t3"), TRUE))
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE),
           file.path(here, "cli_reliability.json"))
