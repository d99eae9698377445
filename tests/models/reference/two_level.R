# Reference values for models/_two_level.py (the REML fit behind the "2l.norm" imputation),
# written to two_level.json beside this script; the simulated data to two_level.csv.
#
# Run from the repository root:  Rscript tests/models/reference/two_level.R
#
# Two random-intercept fits, y ~ x + z + (1 | cluster) by REML with BOBYQA converged tightly
# (rhoend = 1e-10): "unbalanced", 30 clusters of 1 to 9 rows with a between-cluster SD of 0.8;
# "singular", the first 8 clusters of the same x and z with a response that has no cluster
# variance, where lme4 stops on the boundary (tau = 0).

suppressPackageStartupMessages({
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

set.seed(20261201)
n_cluster <- 30
sizes <- sample(1:9, n_cluster, replace = TRUE)
cluster <- rep(seq_len(n_cluster), sizes)
n <- length(cluster)
x <- rnorm(n_cluster)[cluster] + rnorm(n)
z <- rbinom(n, 1, 0.4)
y <- 1.5 + 0.4 * x - 0.3 * z + rnorm(n_cluster, sd = 0.8)[cluster] + rnorm(n)
y_flat <- 0.5 + 0.2 * x + rnorm(n, sd = 1.2)
data <- data.frame(cluster = cluster, x = x, z = z, y = y, y_flat = y_flat)
write.csv(data, file.path(here, "two_level.csv"), row.names = FALSE)

ctrl <- lmerControl(
  optimizer = "bobyqa",
  optCtrl = list(rhoend = 1e-10, maxfun = 1e6),
  check.conv.singular = "ignore"
)
info <- function(m) {
  vc <- as.data.frame(VarCorr(m))
  list(
    beta = unname(fixef(m)),
    cov = unname(as.matrix(vcov(m))),
    sigma2 = sigma(m)^2,
    tau2 = vc$vcov[vc$grp == "cluster"],
    reml_criterion = unname(REMLcrit(m)),
    n_obs = nobs(m)
  )
}
fit <- lmer(y ~ x + z + (1 | cluster), data = data, REML = TRUE, control = ctrl)
small <- data[data$cluster <= 8, ]
flat <- lmer(y_flat ~ x + z + (1 | cluster), data = small, REML = TRUE, control = ctrl)
out <- list(
  lme4 = as.character(packageVersion("lme4")),
  R = R.version.string,
  unbalanced = info(fit),
  singular = c(info(flat), list(is_singular = isSingular(flat)))
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           file.path(here, "two_level.json"))
