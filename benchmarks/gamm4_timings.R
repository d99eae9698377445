# gamm4 fit times for benchmarks/bench_smooth.py, which runs this script in the same run.
#
# Run from the repository root, after `python benchmarks/bench_smooth.py --write-data` (it
# writes the simulated 100,000-row experience-sampling data):
#   Rscript benchmarks/gamm4_timings.R [RUNS [CASE ...]]
#
# For each case: gamm4 with its default controls (REML, lme4's nloptwrap BOBYQA) followed by
# summary(fit$gam) (the smooth's edf, F and p-value: what LinearMixedModel.fit and its
# smooth_table_ give), the median wall time of RUNS fits one after another; `fit_seconds` is
# gamm4 alone; `rlrt_seconds` the test of the smooth against its straight line as RLRsim runs
# it (the null model refitted by lmer with the same X, and RLRTSim's 10,000 simulated values).
# Prints CSV: case, n, seconds, fit_seconds, rlrt_seconds, reml_criterion, edf, versions.
suppressPackageStartupMessages({
  library(gamm4)
  library(RLRsim)
})
args <- commandArgs(trailingOnly = TRUE)
runs <- if (length(args)) as.integer(args[1]) else 3L
only <- if (length(args) > 1) args[-1] else c("study", "esm100k")
data_dir <- file.path("benchmarks", "data")

study <- read.csv(file.path(data_dir, "study_sized.csv"))
study$participant <- factor(study$participant)
study$story <- factor(study$story)
esm <- if ("esm100k" %in% only) read.csv(file.path(data_dir, "esm100k.csv")) else NULL
if (!is.null(esm)) esm$person <- factor(esm$person)
cases <- list(
  study = list(study, empathy ~ s(week), ~ (1 | participant) + (1 | story),
               empathy ~ 0 + .X + (1 | participant) + (1 | story)),
  esm100k = list(esm, y ~ s(day, bs = "cr"), ~ (1 | person), y ~ 0 + .X + (1 | person))
)

cat("case,n,seconds,fit_seconds,rlrt_seconds,reml_criterion,edf,versions\n")
for (name in intersect(names(cases), only)) {
  cs <- cases[[name]]
  d <- cs[[1]]
  total <- fit_only <- rlrt <- numeric(runs)
  for (r in seq_len(runs)) {
    t0 <- proc.time()[["elapsed"]]
    fit <- gamm4(cs[[2]], random = cs[[3]], data = d, REML = TRUE)
    t1 <- proc.time()[["elapsed"]]
    st <- summary(fit$gam)$s.table
    t2 <- proc.time()[["elapsed"]]
    mer <- fit$mer
    X <- getME(mer, "X")
    d0 <- d
    d0$.X <- X
    null <- lmer(cs[[4]], data = d0, REML = TRUE)
    stat <- 2 * (logLik(mer, REML = TRUE)[1] - logLik(null, REML = TRUE)[1])
    sm <- fit$gam$smooth[[1]]
    Z <- t(as.matrix(getME(mer, "Ztlist")[[paste0(sm$lmer.name, ".", sm$label)]]))
    sample <- RLRTSim(X, Z, qr(X), sqrt.Sigma = diag(ncol(Z)), seed = 1, nsim = 10000)
    p <- mean(stat < sample)
    t3 <- proc.time()[["elapsed"]]
    total[r] <- t2 - t0
    fit_only[r] <- t1 - t0
    rlrt[r] <- t3 - t2
  }
  versions <- sprintf("R %s.%s gamm4 %s mgcv %s lme4 %s RLRsim %s", R.version$major,
                      R.version$minor, packageVersion("gamm4"), packageVersion("mgcv"),
                      packageVersion("lme4"), packageVersion("RLRsim"))
  cat(sprintf("%s,%d,%.6f,%.6f,%.6f,%.10f,%.8f,%s\n", name, nrow(d), median(total),
              median(fit_only), median(rlrt), REMLcrit(mer), st[1, "edf"], versions))
}
