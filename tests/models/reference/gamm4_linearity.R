# Reference values for models/lmm/_smooth_linearity.py (LinearMixedModel.smooth_linearity_test),
# written to gamm4_linearity.json beside this script; the simulated study it also fits is
# written to tests/data/sim_smooth_curvature.csv.
#
# Run from the repository root:  Rscript tests/models/reference/gamm4_linearity.R
#
# A smooth fitted as gamm4 fits it is linear when its random-effect variance is zero (its null
# space, the linear term, is a fixed effect). The restricted likelihood-ratio statistic is
# 2 (REML log-likelihood of the gamm4 fit - that of the same model without the smooth's random
# effect, with the same fixed-effect matrix X). Its null distribution is RLRsim's: the exact
# finite-sample one of Crainiceanu & Ruppert (2004) for the model with the tested effect only
# (RLRsim::RLRTSim on X and the smooth's columns of Z; what exactRLRT(m, mA, m0) simulates --
# exactRLRT itself refuses a gamm4 $mer beside an lmer null, "all models must be fit to the
# same data object", so the statistic and the call it makes are written out here).
# Stored: the statistic, the eigenvalues mu the null distribution depends on, the p-value from
# 10,000 simulated values (seed 1, exactRLRT's defaults), and quantiles of 100,000 (seed 2).

suppressPackageStartupMessages({
  library(gamm4)
  library(RLRsim)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

ctrl <- lmerControl(
  optCtrl = list(xtol_abs = 1e-12, ftol_abs = 1e-14, xtol_rel = 1e-12, ftol_rel = 1e-15,
                 maxeval = 1e5),
  check.conv.singular = "ignore"
)
num <- function(x) unname(as.numeric(x))

# sum of log |diag R| of X's QR: lme4's REML criterion holds log|R_X|^2, so a null model fitted
# with another basis X0 of the same column space is moved to X's by twice the difference
logdet_r <- function(X) sum(log(abs(diag(qr.R(qr(X))))))

one_test <- function(fitA, i, null_fit, null_X) {
  mer <- fitA$mer
  sm <- fitA$gam$smooth[[i]]
  X <- getME(mer, "X")
  Z <- t(as.matrix(getME(mer, "Ztlist")[[paste0(sm$lmer.name, ".", sm$label)]]))
  reml0 <- -REMLcrit(null_fit) / 2 - (logdet_r(X) - logdet_r(null_X))
  stat <- max(0, 2 * (logLik(mer, REML = TRUE)[1] - reml0))
  mu <- (svd(t(qr.resid(qr(X), Z)), nu = 0, nv = 0)$d)^2
  small <- RLRTSim(X, Z, qr(X), sqrt.Sigma = diag(ncol(Z)), seed = 1, nsim = 10000)
  big <- RLRTSim(X, Z, qr(X), sqrt.Sigma = diag(ncol(Z)), seed = 2, nsim = 100000)
  list(
    label = sm$label,
    statistic = stat,
    reml_alt = num(logLik(mer, REML = TRUE)[1]),
    reml_null = reml0,
    n = nrow(X),
    p = ncol(X),
    mu = num(mu / max(mu)),
    p_value = if (stat > 0) mean(stat < small) else 1,
    p_value_big = if (stat > 0) mean(stat < big) else 1,
    null_at_zero = mean(big == 0),
    null_quantiles = num(quantile(big, c(0.5, 0.75, 0.9, 0.95, 0.99), type = 7))
  )
}

one_smooth_case <- function(name, file, y, x, group, smooth, formula) {
  d <- read.csv(file.path(data_dir, file), stringsAsFactors = FALSE)
  d[[group]] <- factor(d[[group]])
  fitA <- gamm4(as.formula(paste(y, "~", smooth)), random = as.formula(paste0("~ (1 | ", group, ")")),
                data = d, REML = TRUE, control = ctrl)
  X <- getME(fitA$mer, "X")
  used <- d[rownames(fitA$gam$model), , drop = FALSE]
  used$.X <- X
  null_fit <- lmer(as.formula(paste0(y, " ~ 0 + .X + (1 | ", group, ")")), data = used,
                   REML = TRUE, control = ctrl)
  list(name = name, data = file, formula = formula, group = group,
       tests = list(one_test(fitA, 1, null_fit, X)))
}

# a simulated study: 30 people, 12 times, a mild bend on a linear trend
set.seed(20261128)
sim <- expand.grid(time = 0:11, id = 1:30)
sim$y <- 0.2 * sim$time + 0.3 * sin(sim$time / 11 * pi) + rnorm(30)[sim$id] + rnorm(nrow(sim))
sim$id <- paste0("p", sim$id)
write.csv(sim, file.path(data_dir, "sim_smooth_curvature.csv"), row.names = FALSE)

cases <- list(
  one_smooth_case("tp_chickweight", "datasets_ChickWeight.csv", "weight", "Time", "Chick",
                  "s(Time)", "weight ~ s(Time) + (1 | Chick)"),
  one_smooth_case("tp_bodyweight", "nlme_BodyWeight.csv", "weight", "Time", "Rat",
                  "s(Time)", "weight ~ s(Time) + (1 | Rat)"),
  one_smooth_case("cr_sleepstudy", "lme4_sleepstudy.csv", "Reaction", "Days", "Subject",
                  "s(Days, bs = \"cr\", k = 6)", "Reaction ~ s(Days, bs=\"cr\", k=6) + (1 | Subject)"),
  one_smooth_case("tp_sim", "sim_smooth_curvature.csv", "y", "time", "id", "s(time)",
                  "y ~ s(time) + (1 | id)")
)

# two smooths: each tested with the other kept; the null is gamm4's fit with the tested smooth
# replaced by its linear term, moved to the full model's X
aq <- read.csv(file.path(data_dir, "datasets_airquality.csv"))
aq$Month <- factor(aq$Month)
fitA <- gamm4(Ozone ~ s(Temp) + s(Wind, bs = "cr"), random = ~ (1 | Month), data = aq,
              REML = TRUE, control = ctrl)
null_temp <- gamm4(Ozone ~ Temp + s(Wind, bs = "cr"), random = ~ (1 | Month), data = aq,
                   REML = TRUE, control = ctrl)
null_wind <- gamm4(Ozone ~ Wind + s(Temp), random = ~ (1 | Month), data = aq, REML = TRUE,
                   control = ctrl)
cases[[length(cases) + 1]] <- list(
  name = "two_airquality", data = "datasets_airquality.csv",
  formula = "Ozone ~ s(Temp) + s(Wind, bs=\"cr\") + (1 | Month)", group = "Month",
  tests = list(
    one_test(fitA, 1, null_temp$mer, getME(null_temp$mer, "X")),
    one_test(fitA, 2, null_wind$mer, getME(null_wind$mer, "X"))
  )
)

out <- list(
  versions = list(R = R.version.string, mgcv = as.character(packageVersion("mgcv")),
                  gamm4 = as.character(packageVersion("gamm4")),
                  lme4 = as.character(packageVersion("lme4")),
                  RLRsim = as.character(packageVersion("RLRsim"))),
  cases = cases
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"),
           file.path(here, "gamm4_linearity.json"))
