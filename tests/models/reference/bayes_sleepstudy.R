# Reference values for tests/models/bayes/test_bayes_slow.py (the gaussian BayesianMixedModel on
# sleepstudy), written to bayes_sleepstudy.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/bayes_sleepstudy.R
#
# lme4::lmer REML fit of Reaction ~ Days + (Days | Subject) on tests/data/lme4_sleepstudy.csv,
# with BOBYQA converged tightly so the values are the optimum itself.

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data <- read.csv(file.path(here, "..", "..", "data", "lme4_sleepstudy.csv"))

ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-10, maxfun = 1e6))
m <- lmer(Reaction ~ Days + (Days | Subject), data = data, REML = TRUE, control = ctrl)
co <- summary(m)$coefficients
vc <- as.data.frame(VarCorr(m))

num <- function(x) as.numeric(format(unname(x), digits = 15))
out <- list(
  meta = list(
    generated = format(Sys.time(), "%Y-%m-%d %H:%M:%S UTC", tz = "UTC"),
    r_version = R.version.string,
    lme4 = as.character(packageVersion("lme4")),
    script = "tests/models/reference/bayes_sleepstudy.R",
    model = "lmer(Reaction ~ Days + (Days | Subject), REML = TRUE)"
  ),
  fixed = list(term = rownames(co), estimate = num(co[, "Estimate"]), se = num(co[, "Std. Error"])),
  varcorr = list(
    grp = as.character(vc$grp),
    var1 = ifelse(is.na(vc$var1), "", as.character(vc$var1)),
    var2 = ifelse(is.na(vc$var2), "", as.character(vc$var2)),
    sdcor = num(vc$sdcor)
  )
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           file.path(here, "bayes_sleepstudy.json"))
