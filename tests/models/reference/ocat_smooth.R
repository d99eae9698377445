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
# 0.5 trait + N(0, 0.8^2) participant effect + logistic noise, cut at -1.5, -0.5, 0.5, 1.5;
# (3) airquality with two smooths, s(Temp) + s(Wind); (4) datasets::ChickWeight with a smooth of
# Time by Diet (one curve and one smoothing parameter per diet), see multi_fit below.

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

# Several smooths and a smooth by a factor: one entry per smooth (each with its own smoothing
# parameter), curves on a grid (a by level's with that level in newdata, as predict(type =
# "terms") gives it), and population-level category probabilities of a few rows
# (predict(type = "response", exclude = "s(id)"): the participant effect at 0).
multi_fit <- function(d, formula, x, labels, levels = NULL, by = NULL, rows = 1:6) {
  d$id <- factor(d$id)
  fit <- gam(as.formula(formula), family = ocat(R = 5), data = d, method = "REML")
  cuts <- fit$family$getTheta(TRUE)
  intercept <- unname(coef(fit)[1])
  smooths <- lapply(seq_along(labels), function(j) {
    label <- labels[j]
    col <- x[j]
    grid <- seq(min(d[[col]]), max(d[[col]]), length.out = 15)
    nd <- d[rep(1, length(grid)), , drop = FALSE]
    nd[[col]] <- grid
    if (!is.null(by)) nd[[by]] <- factor(levels[j], levels = levels(d[[by]]))
    terms <- predict(fit, newdata = nd, type = "terms", se.fit = TRUE)
    list(
      label = label, grid = grid,
      curve = unname(terms$fit[, label]), curve_se = unname(terms$se.fit[, label]),
      sd = unname(1 / sqrt(fit$sp[label])),
      edf = sum(fit$edf[grep(label, names(fit$edf), fixed = TRUE)])
    )
  })
  probs <- predict(fit, newdata = d[rows, ], type = "response", exclude = "s(id)")
  list(
    thresholds = unname(cuts - intercept),
    fixed = unname(coef(fit)[-1][!grepl("^s\\(", names(coef(fit))[-1])]),
    id_sd = unname(1 / sqrt(fit$sp["s(id)"])),
    smooths = smooths,
    rows = rows - 1,
    probabilities = unname(probs),
    converged = fit$converged,
    n = nrow(d)
  )
}

# airquality as above, two cubic regression splines (k = 6), each with its own variance
two <- multi_fit(aq, "y ~ s(Temp, bs = \"cr\", k = 6) + s(Wind, bs = \"cr\", k = 6) + s(id, bs = \"re\")",
                 c("Temp", "Wind"), c("s(Temp)", "s(Wind)"))

# datasets::ChickWeight (Crowder & Hand 1990), weight cut into 5 ordered categories MADE HERE
# (at 60, 100, 150 and 200 g), a cubic regression spline of Time (k = 5) per Diet, the chick as
# the participant
cw <- read.csv(file.path(here, "..", "..", "data", "datasets_ChickWeight.csv"))
cw$Diet <- factor(cw$Diet)
cw$id <- cw$Chick
cw$y <- cut(cw$weight, c(-Inf, 60, 100, 150, 200, Inf), labels = FALSE)  # categories made here
diets <- levels(cw$Diet)
by_diet <- multi_fit(cw, "y ~ Diet + s(Time, by = Diet, bs = \"cr\", k = 5) + s(id, bs = \"re\")",
                     rep("Time", length(diets)), paste0("s(Time):Diet", diets), diets, "Diet",
                     rows = c(1, 5, 9, 300, 450, 578))

out <- list(
  r_version = R.version.string,
  mgcv_version = as.character(packageVersion("mgcv")),
  airquality = air,
  simulated = sim,
  two_smooths = two,
  by_diet = by_diet
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           file.path(here, "ocat_smooth.json"))
