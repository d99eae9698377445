# Kenward-Roger reference values for models/lmm.py (LinearMixedModel(ddf="kenward-roger")),
# written to lmm_kr.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/lmm_kr.R
#
# summary(lmerTest::lmer(...), ddf = "Kenward-Roger") takes the adjusted covariance matrix of the
# fixed effects and the denominator df of each coefficient from pbkrtest (vcovAdj, Lb_ddf).
# Kenward-Roger is defined for REML fits only. Fits use BOBYQA converged tightly (rhoend = 1e-10)
# as in lmm.R, so the values are those at the optimum itself.

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
  library(pbkrtest)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

ctrl <- lmerControl(
  optimizer = "bobyqa",
  optCtrl = list(rhoend = 1e-10, maxfun = 1e6),
  check.conv.singular = "ignore"
)
num <- function(x) unname(as.numeric(x))

kr_info <- function(m) {
  s <- summary(m, ddf = "Kenward-Roger")
  co <- s$coefficients
  sat <- summary(m, ddf = "Satterthwaite")$coefficients
  list(
    term = rownames(co),
    estimate = num(co[, "Estimate"]),
    se = num(co[, "Std. Error"]),
    df = num(co[, "df"]),
    statistic = num(co[, "t value"]),
    p_value = num(co[, "Pr(>|t|)"]),
    se_unadjusted = num(sat[, "Std. Error"]),
    df_satterthwaite = num(sat[, "df"])
  )
}

sleep <- read.csv(file.path(data_dir, "lme4_sleepstudy.csv"))
orthodont <- read.csv(file.path(data_dir, "nlme_Orthodont.csv"))
riesby <- read.csv(file.path(data_dir, "riesby.csv"))
crossed <- read.csv(file.path(here, "lmm_crossed.csv"))

cases <- list(
  sleep_slope = list(sleep, Reaction ~ Days + (Days | Subject)),
  sleep_uncorrelated = list(sleep, Reaction ~ Days + (Days || Subject)),
  orthodont_agesex_slope = list(orthodont, distance ~ age * Sex + (age | Subject)),
  riesby_endog = list(riesby, hamdep ~ week * endog + (week | id)),
  crossed_intercepts = list(crossed, y ~ x + (1 | rater) + (1 | target))
)

fits <- list()
for (name in names(cases)) {
  d <- cases[[name]][[1]]
  f <- cases[[name]][[2]]
  m <- lmerTest::lmer(f, data = d, REML = TRUE, control = ctrl)
  fits[[name]] <- c(list(formula = deparse(f, width.cutoff = 500L)), kr_info(m))
}

out <- list(
  generated = format(Sys.Date()),
  r_version = R.version.string,
  packages = list(
    lme4 = as.character(packageVersion("lme4")),
    lmerTest = as.character(packageVersion("lmerTest")),
    pbkrtest = as.character(packageVersion("pbkrtest"))
  ),
  fits = fits
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE), file.path(here, "lmm_kr.json"))
