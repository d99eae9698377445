# ordinal::clmm simulate/refit loop timed for benchmarks/bench_power.py, written to
# benchmarks/data/power_clmm_timings.csv.
#
# Run from the repository root:  Rscript benchmarks/power_clmm.R
#
# The study-sized data of benchmarks/bench_lmm.py (benchmarks/data/study_sized.csv: 804 ratings,
# 41 participants, 120 stories) with the empathy score rounded to a rating 1..5, and the
# cumulative link mixed model rating ~ trait + week + (1 + week | participant) + (1 | story)
# (logit link, Laplace). The trait effect is set to 0.3 (log odds ratio per SD); each simulation
# draws the random effects and standard logistic errors at the fitted values, cuts the latent
# response at the fitted thresholds, refits clmm started from the pilot's parameters
# (`start`: its thresholds, coefficients and covariance factors), and takes the Wald z test of
# trait. ordinal has no simulate() or refit(), so both are written out; this is the loop a
# power analysis with clmm runs. One R process, one thread; the figure is simulations per
# second.

suppressPackageStartupMessages({
  library(ordinal)
  library(MASS)
})

set.seed(20240501)
n_sims <- as.integer(Sys.getenv("N_SIMS", "20"))
study <- read.csv(file.path("benchmarks", "data", "study_sized.csv"))
study$rating <- factor(pmin(5, pmax(1, round(study$empathy))), levels = 1:5, ordered = TRUE)
study$participant <- factor(study$participant)
study$story <- factor(study$story)
formula <- rating ~ trait + week + (1 + week | participant) + (1 | story)
fit <- clmm(formula, data = study)
beta <- fit$beta
beta["trait"] <- 0.3
vc <- VarCorr(fit)
G <- as.matrix(vc$participant)
sd_story <- sqrt(as.numeric(vc$story))
p_index <- as.integer(study$participant)
s_index <- as.integer(study$story)
start <- list(c(fit$alpha, fit$beta), ordinal:::ST2par(fit$ST))
eta <- beta[["trait"]] * study$trait + beta[["week"]] * study$week

p_values <- rep(NA_real_, n_sims)
seconds <- system.time({
  for (i in seq_len(n_sims)) {
    b <- MASS::mvrnorm(nlevels(study$participant), c(0, 0), G)
    s <- rnorm(nlevels(study$story), 0, sd_story)
    latent <- eta + b[p_index, 1] + b[p_index, 2] * study$week + s[s_index] +
      rlogis(nrow(study))
    d <- study
    d$rating <- factor(1 + findInterval(latent, fit$alpha, left.open = TRUE), levels = 1:5,
                       ordered = TRUE)
    m <- tryCatch(
      suppressWarnings(clmm(formula, data = d, start = start)),
      error = function(e) NULL
    )
    if (!is.null(m)) p_values[i] <- summary(m)$coefficients["trait", "Pr(>|z|)"]
  }
})[["elapsed"]]

out <- data.frame(
  case = "study_ordinal",
  n_sims = n_sims,
  n_failed = sum(is.na(p_values)),
  seconds = seconds,
  sims_per_second = n_sims / seconds,
  power = mean(p_values < 0.05, na.rm = TRUE),
  date = format(Sys.Date()),
  r_version = R.version.string,
  ordinal = as.character(packageVersion("ordinal"))
)
write.csv(out, file.path("benchmarks", "data", "power_clmm_timings.csv"), row.names = FALSE)
print(out)
