# lme4 simulate/refit loop timed for benchmarks/bench_power.py, written to
# benchmarks/data/power_lme4_timings.csv.
#
# Run from the repository root:  Rscript benchmarks/power_lme4.R
#
# The study-sized model of benchmarks/bench_lmm.py (benchmarks/data/study_sized.csv: 804 ratings,
# 41 participants, 120 stories), empathy ~ trait + week + (1 + week | participant) + (1 | story),
# fitted by lmerTest::lmer (REML); the trait effect is set to 0.2 (simr's fixef<-) and each
# simulation draws a response with simulate(), refits with refit() and takes lmerTest's
# Satterthwaite t test of trait (as_lmerModLmerTest + summary): the loop simr's powerSim runs,
# written out. One R process, one thread; the figure is simulations per second.

suppressPackageStartupMessages({
  library(lme4)
  library(lmerTest)
})

set.seed(20240501)
n_sims <- 300
study <- read.csv(file.path("benchmarks", "data", "study_sized.csv"))
fit <- lmerTest::lmer(empathy ~ trait + week + (1 + week | participant) + (1 | story), data = study)
beta <- fixef(fit)
beta["trait"] <- 0.2
responses <- simulate(fit, nsim = n_sims, newparams = list(beta = beta, theta = getME(fit, "theta"),
                                                          sigma = sigma(fit)))
p_values <- numeric(n_sims)
seconds <- system.time({
  for (i in seq_len(n_sims)) {
    m <- suppressMessages(suppressWarnings(refit(fit, responses[[i]])))
    p_values[i] <- summary(as_lmerModLmerTest(m))$coefficients["trait", "Pr(>|t|)"]
  }
})[["elapsed"]]

out <- data.frame(
  case = "study",
  n_sims = n_sims,
  seconds = seconds,
  sims_per_second = n_sims / seconds,
  power = mean(p_values < 0.05),
  date = format(Sys.Date()),
  r_version = R.version.string,
  lme4 = as.character(packageVersion("lme4")),
  lmerTest = as.character(packageVersion("lmerTest"))
)
write.csv(out, file.path("benchmarks", "data", "power_lme4_timings.csv"), row.names = FALSE)
cat(sprintf("%d simulate/refit/Satterthwaite loops in %.1f s: %.1f per second (power %.3f)\n",
            n_sims, seconds, n_sims / seconds, mean(p_values < 0.05)))
