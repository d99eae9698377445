# Reference power of an ordinal (cumulative link) mixed model for models/power.py, written to
# power_clmm.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/power_clmm.R
#
# A plain simulate/refit loop, seeded: 30 participants, 4 sessions each with 3 ratings per
# session; condition is 0 in sessions 1 and 3 and 1 in sessions 2 and 4; trait is fixed per
# participant at qnorm((i - 0.5) / 30) rounded to 4 decimals. The latent response is
# 0.3 condition + 0.6 trait + b + e, b ~ N(0, 1) per participant and e standard logistic, cut
# at thresholds -2.2, -0.9, 0.4, 1.9 into ratings 1..5 (rating j when threshold j-1 < latent
# <= threshold j). Each data set is fitted with
# ordinal::clmm(rating ~ condition + trait + (1 | participant_id)) (Laplace, default controls)
# and the Wald z test of trait is rejected at alpha = 0.05. Fits that raise or give no standard
# error are counted and left out, as models/power.py does. The same design is written as a
# design TOML in tests/models/power/test_power_ordinal.py.

suppressPackageStartupMessages({
  library(ordinal)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

set.seed(20261124)
n_people <- 30
n_sessions <- 4
per_session <- 3
n_sims <- 1000
alpha <- 0.05
beta <- c(condition = 0.3, trait = 0.6)
sd_person <- 1
cut <- c(-2.2, -0.9, 0.4, 1.9)
trait_values <- round(qnorm((seq_len(n_people) - 0.5) / n_people), 4)

d <- data.frame(
  participant_id = factor(rep(seq_len(n_people), each = n_sessions * per_session)),
  session = rep(rep(seq_len(n_sessions), each = per_session), n_people)
)
d$condition <- as.numeric(d$session %% 2 == 0)
d$trait <- trait_values[as.integer(d$participant_id)]

p_values <- rep(NA_real_, n_sims)
failed <- 0L
seconds <- system.time({
  for (i in seq_len(n_sims)) {
    b <- rnorm(n_people, 0, sd_person)
    latent <- beta[["condition"]] * d$condition + beta[["trait"]] * d$trait +
      b[as.integer(d$participant_id)] + rlogis(nrow(d))
    d$rating <- factor(1 + findInterval(latent, cut, left.open = TRUE), levels = 1:5,
                       ordered = TRUE)
    d$rating <- droplevels(d$rating)
    fit <- tryCatch(
      suppressWarnings(clmm(rating ~ condition + trait + (1 | participant_id), data = d)),
      error = function(e) NULL
    )
    if (is.null(fit)) {
      failed <- failed + 1L
      next
    }
    p <- summary(fit)$coefficients["trait", "Pr(>|z|)"]
    if (is.na(p)) {  # no standard error (a Hessian that is not positive definite)
      failed <- failed + 1L
      next
    }
    p_values[i] <- p
  }
})[["elapsed"]]

used <- sum(!is.na(p_values))
rejected <- sum(p_values < alpha, na.rm = TRUE)
ci <- binom.test(rejected, used)$conf.int
out <- list(
  design = list(
    participants = n_people,
    sessions = n_sessions,
    stories_per_session = per_session,
    beta = as.list(beta),
    trait_values = trait_values,
    sd_person = sd_person,
    thresholds = cut,
    link = "logit",
    formula = "rating ~ condition + trait + (1 | participant_id)",
    test = "wald",
    alpha = alpha
  ),
  n_sims = n_sims,
  n_failed = failed,
  n_rejected = rejected,
  power = format(rejected / used, digits = 6),
  ci_low = format(ci[1], digits = 15),
  ci_high = format(ci[2], digits = 15),
  seconds = seconds,
  seconds_per_fit = seconds / n_sims,
  date = format(Sys.Date()),
  r_version = R.version.string,
  ordinal = as.character(packageVersion("ordinal"))
)
writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA),
           file.path(here, "power_clmm.json"))
