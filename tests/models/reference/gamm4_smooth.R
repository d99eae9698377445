# Reference values for models/lmm/_smooth*.py (s(...) terms of LinearMixedModel), written to
# gamm4_smooth.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/gamm4_smooth.R
#
# gamm4 fits each smooth as lme4 does a random effect (mgcv's smooth2random); the optimizer is
# converged far more tightly than lme4's default so the stored values are the optimum itself
# (gamm4 hands only optCtrl to lme4's default optimizer, NLopt's BOBYQA, hence its options).
# Cases: one cubic regression spline (bs = "cr"), one thin plate regression spline (the
# default bs = "tp"; with as many unique values as k, and with more), two smooths, and smooths
# by a factor.

suppressPackageStartupMessages({
  library(gamm4)
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

# one smooth's values: label, variance, sp, edf, penalty scaling, and its curve on a grid
# (the parametric row at its level plus this smooth; the other smooths at zero)
one_smooth <- function(fit, d, i, factors) {
  gam <- fit$gam
  sm <- gam$smooth[[i]]
  vc <- as.data.frame(VarCorr(fit$mer))
  x <- sm$term
  grid <- seq(min(d[[x]]), max(d[[x]]), length.out = 21)
  nd <- d[rep(1, length(grid)), , drop = FALSE]
  nd[[x]] <- grid
  level <- NULL
  if (!is.null(sm$by.level)) {
    level <- sm$by.level
    nd[[sm$by]] <- factor(level, levels = levels(d[[sm$by]]))
  }
  Xp <- predict(gam, newdata = nd, type = "lpmatrix")
  cols <- sm$first.para:sm$last.para
  for (j in seq_along(gam$smooth)) {
    if (j != i) Xp[, gam$smooth[[j]]$first.para:gam$smooth[[j]]$last.para] <- 0
  }
  list(
    label = sm$label,
    term = x,
    by = if (is.null(sm$by.level)) NULL else sm$by,
    level = level,
    variance = num(vc$vcov[vc$grp == sm$lmer.name]),
    sp = num(gam$sp[i]),
    edf = num(sum(gam$edf[cols])),
    S_scale = num(sm$S.scale),
    knots = if (inherits(sm, "cr.smooth")) num(sm$xp) else NULL,
    grid = num(grid),
    basis_grid = unname(PredictMat(sm, nd)),
    fit = num(Xp %*% coef(gam)),
    se = num(sqrt(rowSums((Xp %*% gam$Vp) * Xp)))
  )
}

one_case <- function(name, file, fixed, random, formula, factors = character(0)) {
  d <- read.csv(file.path(data_dir, file), stringsAsFactors = FALSE)
  for (f in factors) d[[f]] <- factor(d[[f]])
  fit <- gamm4(as.formula(fixed), random = as.formula(random), data = d, REML = TRUE,
               control = ctrl)
  mer <- fit$mer
  gam <- fit$gam
  vc <- as.data.frame(VarCorr(mer))
  st <- summary(gam)$s.table
  pt <- summary(gam)$p.table
  used <- d[rownames(gam$model), , drop = FALSE]
  terms <- unique(vapply(gam$smooth, function(s) s$term, ""))
  new <- used[c(3, 17, 29, 41), , drop = FALSE]
  for (x in terms) new[[x]] <- min(used[[x]]) + c(0.13, 0.41, 0.77, 0.95) * diff(range(used[[x]]))
  group <- vc$grp[!(vc$grp %in% c("Residual", vapply(gam$smooth, function(s) s$lmer.name, "")))]
  list(
    name = name,
    data = file,
    formula = formula,
    factors = I(factors),
    n = length(gam$y),
    reml_criterion = num(REMLcrit(mer)),
    sigma2 = num(sigma(mer)^2),
    groups = as.list(setNames(num(vc$vcov[vc$grp %in% group]), vc$grp[vc$grp %in% group])),
    smooths = lapply(seq_along(gam$smooth), function(i) one_smooth(fit, d, i, factors)),
    s_table = list(term = I(rownames(st)), edf = I(num(st[, "edf"])),
                   ref_df = I(num(st[, "Ref.df"])), F = I(num(st[, "F"])),
                   p_value = I(num(st[, "p-value"]))),
    p_table = list(term = I(rownames(pt)), estimate = I(num(pt[, 1])), se = I(num(pt[, 2])),
                   t = I(num(pt[, 3])), p_value = I(num(pt[, 4])),
                   df = num(length(gam$y) - sum(gam$edf))),
    edf_coef = num(gam$edf),
    aic = num(AIC(mer)),
    bic = num(BIC(mer)),
    npar = num(attr(logLik(mer), "df")),
    singular = isSingular(mer),
    fitted_head = num(fitted(mer)[1:5]),
    new = lapply(as.list(new[, unique(c(terms, names(new)[names(new) %in% factors]))]),
                 function(v) if (is.factor(v)) as.character(v) else num(v)),
    predict_new = num(predict(gam, newdata = new))
  )
}

# R's datasets::ChickWeight (Crowder & Hand 1990): growth curves, a smooth off the boundary
cw <- as.data.frame(datasets::ChickWeight)
cw$Chick <- as.character(cw$Chick)
cw$Diet <- as.character(cw$Diet)
write.csv(cw, file.path(data_dir, "datasets_ChickWeight.csv"), row.names = FALSE)
# nlme::BodyWeight (Hand & Crowder 1996): rat body weights over 64 days, 11 unique days
bw <- as.data.frame(nlme::BodyWeight)
bw$Rat <- as.character(bw$Rat)
bw$Diet <- as.character(bw$Diet)
write.csv(bw, file.path(data_dir, "nlme_BodyWeight.csv"), row.names = FALSE)
# R's datasets::airquality (New York, May to September 1973): two covariates, months as groups
write.csv(datasets::airquality, file.path(data_dir, "datasets_airquality.csv"), row.names = FALSE)

ss <- "lme4_sleepstudy.csv"
od <- "nlme_Orthodont.csv"
ck <- "datasets_ChickWeight.csv"
cases <- list(
  one_case("sleepstudy", ss, "Reaction ~ s(Days, bs = \"cr\", k = 6)", "~ (1 | Subject)",
           "Reaction ~ s(Days, bs=\"cr\", k=6) + (1 | Subject)", "Subject"),
  one_case("orthodont", od, "distance ~ s(age, bs = \"cr\", k = 4)", "~ (1 | Subject)",
           "distance ~ s(age, bs=\"cr\", k=4) + (1 | Subject)", "Subject"),
  one_case("chickweight", ck, "weight ~ s(Time, bs = \"cr\", k = 6)", "~ (1 | Chick)",
           "weight ~ s(Time, bs=\"cr\", k=6) + (1 | Chick)", "Chick"),
  # thin plate: 10 unique Days = k and Orthodont's 4 ages = k (no eigen step); 12 unique
  # Times and 11 unique days with k = 10
  one_case("tp_sleepstudy", ss, "Reaction ~ s(Days)", "~ (1 | Subject)",
           "Reaction ~ s(Days) + (1 | Subject)", "Subject"),
  one_case("tp_chickweight", ck, "weight ~ s(Time)", "~ (1 | Chick)",
           "weight ~ s(Time) + (1 | Chick)", "Chick"),
  one_case("tp_bodyweight", "nlme_BodyWeight.csv", "weight ~ s(Time, bs = \"tp\")",
           "~ (1 | Rat)", "weight ~ s(Time, bs=\"tp\") + (1 | Rat)", "Rat"),
  one_case("tp_orthodont", od, "distance ~ s(age, k = 4)", "~ (1 | Subject)",
           "distance ~ s(age, k=4) + (1 | Subject)", "Subject"),
  # two smooths, each its own variance
  one_case("two_airquality", "datasets_airquality.csv", "Ozone ~ s(Temp) + s(Wind, bs = \"cr\")",
           "~ (1 | Month)", "Ozone ~ s(Temp) + s(Wind, bs=\"cr\") + (1 | Month)", "Month"),
  # smooths by a factor, with the factor's main effect
  one_case("by_chickweight", ck, "weight ~ Diet + s(Time, by = Diet, k = 5)", "~ (1 | Chick)",
           "weight ~ Diet + s(Time, by=Diet, k=5) + (1 | Chick)", c("Chick", "Diet")),
  one_case("by_orthodont", od, "distance ~ Sex + s(age, by = Sex, bs = \"cr\", k = 4)",
           "~ (1 | Subject)", "distance ~ Sex + s(age, by=Sex, bs=\"cr\", k=4) + (1 | Subject)",
           c("Subject", "Sex"))
)
out <- list(
  versions = list(R = R.version.string, mgcv = as.character(packageVersion("mgcv")),
                  gamm4 = as.character(packageVersion("gamm4")),
                  lme4 = as.character(packageVersion("lme4"))),
  cases = cases
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"),
           file.path(here, "gamm4_smooth.json"))
