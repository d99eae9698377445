# Reference power for models/power.py (simulate_power), written to power_lme4.json beside this
# script.
#
# Run from the repository root:  Rscript tests/models/reference/power_lme4.R
#
# A plain simulate/refit loop, seeded: 30 participants, 6 sessions each (t = 0, ..., 5), one
# rating per session, y = 0 + 0.15 t + b0 + b1 t + e with (b0, b1) normal, SDs 1 and 0.3,
# correlation 0.2, and residual SD 1. Each simulated data set is fitted with
# lmerTest::lmer(y ~ t + (1 + t | participant_id)) (REML, lme4's default controls) and the
# Satterthwaite t test of t is rejected at alpha = 0.05. Every fit is kept (singular fits too);
# fits that raise are counted and left out, as models/power.py does. The same design is
# written as a design TOML in tests/models/power/test_power.py.

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
  library(MASS)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

set.seed(20240501)
n_people <- 30
n_sessions <- 6
n_sims <- 2000
alpha <- 0.05
beta <- c(0, 0.15)
sds <- c(1, 0.3)
rho <- 0.2
sigma <- 1
G <- diag(sds) %*% matrix(c(1, rho, rho, 1), 2) %*% diag(sds)

d <- data.frame(
  participant_id = factor(rep(seq_len(n_people), each = n_sessions)),
  t = rep(0:(n_sessions - 1), n_people)
)

p_values <- rep(NA_real_, n_sims)
singular <- 0L
failed <- 0L
seconds <- system.time({
  for (i in seq_len(n_sims)) {
    b <- MASS::mvrnorm(n_people, c(0, 0), G)
    pid <- as.integer(d$participant_id)
    d$y <- beta[1] + beta[2] * d$t + b[pid, 1] + b[pid, 2] * d$t + rnorm(nrow(d), 0, sigma)
    fit <- tryCatch(
      suppressMessages(suppressWarnings(lmer(y ~ t + (1 + t | participant_id), data = d))),
      error = function(e) NULL
    )
    if (is.null(fit)) {
      failed <- failed + 1L
      next
    }
    if (isSingular(fit)) singular <- singular + 1L
    p_values[i] <- summary(fit)$coefficients["t", "Pr(>|t|)"]
  }
})[["elapsed"]]

used <- sum(!is.na(p_values))
rejected <- sum(p_values < alpha, na.rm = TRUE)
ci <- binom.test(rejected, used)$conf.int
out <- list(
  design = list(
    participants = n_people, sessions = n_sessions, beta = beta, sds = sds, corr = rho,
    residual_sd = sigma, formula = "y ~ t + (1 + t | participant_id)", test = "satterthwaite",
    alpha = alpha
  ),
  n_sims = n_sims,
  n_failed = failed,
  n_singular = singular,
  n_rejected = rejected,
  power = format(rejected / used, digits = 15),
  ci_low = format(ci[1], digits = 15),
  ci_high = format(ci[2], digits = 15),
  seconds = seconds,
  date = format(Sys.Date()),
  r_version = R.version.string,
  lme4 = as.character(packageVersion("lme4")),
  lmerTest = as.character(packageVersion("lmerTest"))
)
writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA), file.path(here, "power_lme4.json"))
cat(sprintf("power %.4f [%.4f, %.4f], %d singular, %d failed, %.1f s\n",
            rejected / used, ci[1], ci[2], singular, failed, seconds))
