# Reference values for models/lmm.py (LinearMixedModel), written to lmm.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/lmm.R
#
# Fits use lme4::lmer through lmerTest (Satterthwaite df) with BOBYQA converged far more tightly
# than lme4's default (rhoend = 1e-10), so the stored values are the optimum itself rather than
# lme4's default stopping point (which differs in the 5th-6th significant digit).
# The simulated crossed and nested data sets are generated here (seeded) and written beside it.

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
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

fit_info <- function(m, newdata = NULL) {
  s <- summary(m)
  co <- s$coefficients
  vc <- as.data.frame(VarCorr(m))
  re <- as.data.frame(ranef(m, condVar = TRUE))
  out <- list(
    formula = deparse(formula(m), width.cutoff = 500L),
    reml = isREML(m),
    n_obs = nobs(m),
    groups = as.list(ngrps(m)),
    fixed = list(
      term = rownames(co),
      estimate = num(co[, "Estimate"]),
      se = num(co[, "Std. Error"]),
      df = num(co[, "df"]),
      statistic = num(co[, "t value"]),
      p_value = num(co[, "Pr(>|t|)"])
    ),
    varcorr = list(
      grp = as.character(vc$grp),
      var1 = ifelse(is.na(vc$var1), "", as.character(vc$var1)),
      var2 = ifelse(is.na(vc$var2), "", as.character(vc$var2)),
      vcov = num(vc$vcov),
      sdcor = num(vc$sdcor)
    ),
    theta = num(getME(m, "theta")),
    sigma = num(sigma(m)),
    loglik = num(logLik(m)),
    npar = num(attr(logLik(m), "df")),
    aic = num(AIC(m)),
    bic = num(BIC(m)),
    reml_criterion = if (isREML(m)) num(REMLcrit(m)) else NULL,
    deviance = if (isREML(m)) NULL else num(deviance(m)),
    vcov = num(as.matrix(vcov(m))),
    ranef = list(
      group = as.character(re$grpvar),
      term = as.character(re$term),
      level = as.character(re$grp),
      estimate = num(re$condval),
      cond_sd = num(re$condsd)
    ),
    fitted = num(fitted(m)),
    residuals = num(residuals(m))
  )
  if (!is.null(newdata)) {
    out$predict_all <- num(predict(m, newdata = newdata, allow.new.levels = TRUE))
    out$predict_fixed <- num(predict(m, newdata = newdata, re.form = NA))
  }
  out
}

sleep <- read.csv(file.path(data_dir, "lme4_sleepstudy.csv"))
sleep$Subject <- factor(sleep$Subject)
orth <- read.csv(file.path(data_dir, "nlme_Orthodont.csv"))
orth$Subject <- factor(orth$Subject)
orth$Sex <- factor(orth$Sex, levels = c("Female", "Male"))
riesby <- read.csv(file.path(data_dir, "riesby.csv"))
riesby$id <- factor(riesby$id)

# simulated crossed design: raters x targets, with a random slope for raters
set.seed(20240501)
n_r <- 40
n_t <- 25
n <- 600
rater <- sample(n_r, n, replace = TRUE)
target <- sample(n_t, n, replace = TRUE)
x <- round(rnorm(n), 6)
b_r <- MASS::mvrnorm(n_r, c(0, 0), matrix(c(0.64, 0.12, 0.12, 0.16), 2))
b_t <- rnorm(n_t, 0, 0.5)
y <- 2 + 0.5 * x + b_r[rater, 1] + b_r[rater, 2] * x + b_t[target] + rnorm(n)
crossed <- data.frame(
  y = round(y, 6), x = x,
  rater = sprintf("r%02d", rater), target = sprintf("t%02d", target)
)
write.csv(crossed, file.path(here, "lmm_crossed.csv"), row.names = FALSE)
crossed <- read.csv(file.path(here, "lmm_crossed.csv"))

# simulated nested design: classes (labelled c1..c5 within each school) within schools
set.seed(20240502)
n_s <- 12
school <- rep(sprintf("s%02d", 1:n_s), each = 40)
class <- rep(rep(sprintf("c%d", 1:5), each = 8), n_s)
u_s <- rnorm(n_s, 0, 1.0)
u_c <- rnorm(n_s * 5, 0, 0.6)
xn <- round(rnorm(length(school)), 6)
yn <- 10 + 0.3 * xn + u_s[as.integer(factor(school))] +
  u_c[as.integer(factor(paste(school, class)))] + rnorm(length(school))
nested <- data.frame(y = round(yn, 6), x = xn, school = school, class = class)
write.csv(nested, file.path(here, "lmm_nested.csv"), row.names = FALSE)
nested <- read.csv(file.path(here, "lmm_nested.csv"))

sleep_new <- data.frame(Days = c(0, 5, 9, 3), Subject = factor(c("308", "309", "999", "372")))

fits <- list()
fits$sleep_slope_reml <- fit_info(
  lmer(Reaction ~ Days + (Days | Subject), sleep, REML = TRUE, control = ctrl), sleep_new
)
fits$sleep_slope_ml <- fit_info(
  lmer(Reaction ~ Days + (Days | Subject), sleep, REML = FALSE, control = ctrl)
)
fits$sleep_uncorrelated_reml <- fit_info(
  lmer(Reaction ~ Days + (Days || Subject), sleep, REML = TRUE, control = ctrl)
)
fits$sleep_intercept_reml <- fit_info(
  lmer(Reaction ~ Days + (1 | Subject), sleep, REML = TRUE, control = ctrl)
)
fits$orthodont_slope_reml <- fit_info(
  lmer(distance ~ age + (age | Subject), orth, REML = TRUE, control = ctrl)
)
fits$orthodont_agesex_intercept_reml <- fit_info(
  lmer(distance ~ age * Sex + (1 | Subject), orth, REML = TRUE, control = ctrl)
)
fits$orthodont_agesex_slope_reml <- fit_info(
  lmer(distance ~ age * Sex + (age | Subject), orth, REML = TRUE, control = ctrl)
)
fits$riesby_slope_ml <- fit_info(
  lmer(hamdep ~ week + (week | id), riesby, REML = FALSE, control = ctrl)
)
fits$riesby_intercept_ml <- fit_info(
  lmer(hamdep ~ week + (1 | id), riesby, REML = FALSE, control = ctrl)
)
fits$riesby_endog_ml <- fit_info(
  lmer(hamdep ~ week * endog + (week | id), riesby, REML = FALSE, control = ctrl)
)
crossed_new <- data.frame(x = c(0.5, -1, 2), rater = c("r01", "r99", "r07"),
                          target = c("t03", "t04", "t99"))
fits$crossed_intercepts_reml <- fit_info(
  lmer(y ~ x + (1 | rater) + (1 | target), crossed, REML = TRUE, control = ctrl), crossed_new
)
fits$crossed_slope_reml <- fit_info(
  lmer(y ~ x + (1 + x | rater) + (1 | target), crossed, REML = TRUE, control = ctrl)
)
fits$crossed_slope_ml <- fit_info(
  lmer(y ~ x + (1 + x | rater) + (1 | target), crossed, REML = FALSE, control = ctrl)
)
fits$nested_reml <- fit_info(
  lmer(y ~ x + (1 | school / class), nested, REML = TRUE, control = ctrl)
)

# likelihood-ratio tests (anova.merMod): fixed effects differ -> both refitted by ML
m0 <- lmer(Reaction ~ 1 + (Days | Subject), sleep, REML = TRUE, control = ctrl)
m1 <- lmer(Reaction ~ Days + (Days | Subject), sleep, REML = TRUE, control = ctrl)
a_fixed <- anova(m0, m1)
# same fixed effects, REML fits compared without refitting
r0 <- lmer(Reaction ~ Days + (1 | Subject), sleep, REML = TRUE, control = ctrl)
r1 <- lmer(Reaction ~ Days + (Days | Subject), sleep, REML = TRUE, control = ctrl)
a_random <- anova(r0, r1, refit = FALSE)
lrt_rows <- function(a) list(
  npar = num(a$npar), aic = num(a$AIC), bic = num(a$BIC), loglik = num(a$logLik),
  deviance = num(a$deviance), statistic = num(a$Chisq)[2], df = num(a$Df)[2],
  p_value = num(a[["Pr(>Chisq)"]])[2]
)

out <- list(
  meta = list(
    generated = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"),
    r_version = R.version.string,
    lme4 = as.character(packageVersion("lme4")),
    lmerTest = as.character(packageVersion("lmerTest")),
    Matrix = as.character(packageVersion("Matrix")),
    minqa = as.character(packageVersion("minqa")),
    control = "lmerControl(optimizer = 'bobyqa', optCtrl = list(rhoend = 1e-10, maxfun = 1e6))",
    script = "tests/models/reference/lmm.R"
  ),
  fits = fits,
  lrt = list(fixed_refit_ml = lrt_rows(a_fixed), random_reml = lrt_rows(a_random))
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"),
           file.path(here, "lmm.json"))
cat("wrote", file.path(here, "lmm.json"), "\n")
