# Reference values for models/ordinal/_smooth.py (s(x) in OrdinalMixedModel), written to
# ocat_smooth.json (and the simulated data to ocat_smooth_sim.csv) beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/ocat_smooth.R
#
# mgcv fits the same model, y ~ s(x) + z + s(id, bs = "re") with family ocat(R = K), by its
# Laplace approximate REML over the smoothing parameters of the penalized likelihood; the
# Python model maximises the Laplace marginal likelihood. The two agree on the curve's shape,
# the fixed effect and the thresholds to the tolerances stated in the tests, not exactly.
#
# mgcv's ocat has an intercept and its first cut point fixed at -1; clmm's thresholds (the
# Python model's) are its cut points minus the intercept, and its curve is mgcv's centred
# smooth (predict(type = "terms")).
#
# Data: (1) datasets::airquality, with Ozone cut into 5 ordered categories MADE HERE (at 20,
# 40, 60 and 90 ppb), s(Temp), Wind as the fixed effect and Month as the grouping factor;
# (2) simulated: 40 participants x 8 occasions, week in [0, 7], latent = sin(2 pi week / 7) +
# 0.5 trait + N(0, 0.8^2) participant effect + logistic noise, cut at -1.5, -0.5, 0.5, 1.5.

suppressPackageStartupMessages({
  library(mgcv)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

one_fit <- function(d, x, z, k, R) {
  d$id <- factor(d$id)
  f <- as.formula(sprintf("y ~ s(%s, k = %d) + %s + s(id, bs = \"re\")", x, k, z))
  fit <- gam(f, family = ocat(R = R), data = d, method = "REML")
  cuts <- fit$family$getTheta(TRUE)
  intercept <- unname(coef(fit)[1])
  grid <- seq(min(d[[x]]), max(d[[x]]), length.out = 15)
  nd <- d[rep(1, length(grid)), , drop = FALSE]
  nd[[x]] <- grid
  terms <- predict(fit, newdata = nd, type = "terms", se.fit = TRUE)
  label <- sprintf("s(%s)", x)
  sp <- fit$sp
  edf <- fit$edf
  list(
    thresholds = unname(cuts - intercept),
    fixed = unname(coef(fit)[z]),
    fixed_se = unname(sqrt(diag(fit$Vp))[match(z, names(coef(fit)))]),
    grid = grid,
    curve = unname(terms$fit[, label]),
    curve_se = unname(terms$se.fit[, label]),
    smooth_sd = unname(1 / sqrt(sp[label])),
    id_sd = unname(1 / sqrt(sp["s(id)"])),
    vcomp = unname(gam.vcomp(fit)[, 1]),
    edf = sum(edf[grep(label, names(edf), fixed = TRUE)]),
    converged = fit$converged,
    n = nrow(d)
  )
}

aq <- datasets::airquality
aq <- aq[!is.na(aq$Ozone), ]
aq$y <- cut(aq$Ozone, c(-Inf, 20, 40, 60, 90, Inf), labels = FALSE)  # categories made here
aq$id <- aq$Month
air <- one_fit(aq, "Temp", "Wind", 10, 5)

set.seed(20261128)
n_id <- 40
n_w <- 8
id <- rep(seq_len(n_id), each = n_w)
week <- rep(seq(0, 7, length.out = n_w), n_id) + runif(n_id * n_w, -0.3, 0.3)
trait <- rnorm(n_id)[id]
lat <- sin(2 * pi * week / 7) + 0.5 * trait + rnorm(n_id, 0, 0.8)[id] + rlogis(n_id * n_w)
y <- findInterval(lat, c(-1.5, -0.5, 0.5, 1.5)) + 1
sim_data <- data.frame(y = y, week = week, trait = trait, id = id)
write.csv(sim_data, file.path(here, "ocat_smooth_sim.csv"), row.names = FALSE)
sim <- one_fit(sim_data, "week", "trait", 10, 5)

out <- list(
  r_version = R.version.string,
  mgcv_version = as.character(packageVersion("mgcv")),
  airquality = air,
  simulated = sim
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           file.path(here, "ocat_smooth.json"))
