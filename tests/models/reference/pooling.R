# Multiple-imputation pooling of linear mixed models (models/pooling.py), written to
# pooling.json, pooling_popmis.csv and pooling_imputed.csv beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/pooling.R
#
# Data: mice::popmis (Hox 2010: 2,000 pupils in 100 schools; popularity missing for 848
# pupils). m = 5 imputations by mice (seed 20261128) with the two-level normal model of pan
# ("2l.pan", school as the cluster, sex and teacher experience as predictors), each analysed by
# lme4::lmer(popular ~ sex + texp + (1 | school)) (REML, BOBYQA converged tightly).
# Pooled by mitml::testEstimates (Rubin's df; Barnard & Rubin's with df.com = n - p) and by
# mice::pool (Barnard & Rubin's df with dfcom from broom.mixed's glance: df.residual); the
# joint Wald test of sex and texp by mitml::testModels(method = "D1") against the model
# without them, with and without df.com (Reiter 2007), and of sex alone.
# Exported: each imputation's fixed effects and their covariance (vcov), the pooled tables,
# the data (pooling_popmis.csv) and the imputed values of the missing cells
# (pooling_imputed.csv: one row per missing cell, its row in pooling_popmis.csv counted from
# 1, one column per imputation).

suppressPackageStartupMessages({
  library(mice)
  library(mitml)
  library(lme4)
  library(broom.mixed)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-10, maxfun = 1e6))
num <- function(x) unname(as.numeric(x))

dat <- popmis[, c("pupil", "school", "popular", "sex", "texp")]
m <- 5L
meth <- make.method(dat)
meth["popular"] <- "2l.pan"
pred <- make.predictorMatrix(dat)
pred[, ] <- 0L
pred["popular", c("school", "sex", "texp")] <- c(-2L, 2L, 2L)
imp <- mice(dat, m = m, method = meth, predictorMatrix = pred, maxit = 10,
            seed = 20261128L, printFlag = FALSE)

fits <- lapply(seq_len(m), function(i) {
  lmer(popular ~ sex + texp + (1 | school), data = complete(imp, i), control = ctrl)
})
nulls <- lapply(seq_len(m), function(i) {
  lmer(popular ~ texp + (1 | school), data = complete(imp, i), control = ctrl)
})
nulls0 <- lapply(seq_len(m), function(i) {
  lmer(popular ~ 1 + (1 | school), data = complete(imp, i), control = ctrl)
})
n <- nobs(fits[[1]])
p <- length(fixef(fits[[1]]))
dfcom <- n - p

table_of <- function(est) {
  list(term = rownames(est), estimate = num(est[, "Estimate"]),
       se = num(est[, "Std.Error"]), statistic = num(est[, "t.value"]),
       df = num(est[, "df"]), p_value = num(est[, "P(>|t|)"]),
       riv = num(est[, "RIV"]), fmi = num(est[, "FMI"]))
}
rubin <- testEstimates(fits)
barnard <- testEstimates(fits, df.com = dfcom)
ci_rubin <- confint(rubin, level = 0.95)
ci_barnard <- confint(barnard, level = 0.90)

pooled <- pool(as.mira(fits))
pm <- pooled$pooled
mice_table <- list(term = as.character(pm$term), estimate = num(pm$estimate),
                   ubar = num(pm$ubar), b = num(pm$b), t = num(pm$t),
                   dfcom = num(pm$dfcom), df = num(pm$df), riv = num(pm$riv),
                   lambda = num(pm$lambda), fmi = num(pm$fmi))

d1_of <- function(tm) {
  list(F = num(tm$test[1, "F.value"]), df1 = num(tm$test[1, "df1"]),
       df2 = num(tm$test[1, "df2"]), p_value = num(tm$test[1, "P(>F)"]),
       riv = num(tm$test[1, "RIV"]))
}
d1_both <- testModels(fits, nulls0, method = "D1")
d1_both_com <- testModels(fits, nulls0, method = "D1", df.com = dfcom)
d1_sex <- testModels(fits, nulls, method = "D1")

per_imputation <- lapply(fits, function(f) {
  list(estimates = as.list(fixef(f)), vcov = unname(as.matrix(vcov(f))))
})

out <- list(
  versions = list(R = R.version.string, mice = as.character(packageVersion("mice")),
                  mitml = as.character(packageVersion("mitml")),
                  lme4 = as.character(packageVersion("lme4")),
                  broom.mixed = as.character(packageVersion("broom.mixed"))),
  formula = "popular ~ sex + texp + (1 | school)",
  m = m, n_obs = n, n_fixed = p, dfcom = dfcom,
  terms = names(fixef(fits[[1]])),
  per_imputation = per_imputation,
  testEstimates_rubin = c(table_of(rubin$estimates),
                          list(ci_low = num(ci_rubin[, 1]), ci_high = num(ci_rubin[, 2]))),
  testEstimates_barnard_rubin = c(table_of(barnard$estimates),
                                  list(ci_low_90 = num(ci_barnard[, 1]),
                                       ci_high_90 = num(ci_barnard[, 2]))),
  mice_pool = mice_table,
  D1_sex_texp = d1_of(d1_both),
  D1_sex_texp_dfcom = d1_of(d1_both_com),
  D1_sex = d1_of(d1_sex)
)
write_json(out, file.path(here, "pooling.json"), digits = NA, auto_unbox = TRUE, pretty = TRUE)

write.csv(dat, file.path(here, "pooling_popmis.csv"), row.names = FALSE, na = "")
miss <- which(is.na(dat$popular))
cells <- data.frame(row = miss)
for (i in seq_len(m)) cells[[paste0("imp", i)]] <- complete(imp, i)$popular[miss]
write.csv(cells, file.path(here, "pooling_imputed.csv"), row.names = FALSE)
