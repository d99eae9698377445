# Reference values for factor-smooth interactions s(x, f, bs = "fs", xt = "cr") of
# LinearMixedModel (models/lmm/_smooth_fs.py), written to gamm4_fs.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/gamm4_fs.R
#
# mgcv's "fs" smooth builds one cubic regression spline basis of x (knots from all the data, no
# sum-to-zero constraint), puts it in its natural parametrisation (mgcv:::nat.param, type 1),
# repeats it for every level of f, and penalises three parts apart, each a random effect with
# one variance shared by all levels in gamm4: the wiggly part, and each of the two directions in
# which its eigen-decomposition splits the null space (constant and linear). The two directions
# are the least-squares line through the first knot's basis function and the line orthogonal to
# it over the data; which of the two comes first in gamm4's output is left to rounding, so
# each null-space variance is stored beside the direction it belongs to ("cos_first": the
# cosine between gamm4's direction and that least-squares line). "re_test" keeps the statistic
# of summary.gam's test of the fs smooth and the smallest eigenvalues of its null distribution
# (relative to the largest): where some lie just above mgcv's cut-off of eps^0.8 (3e-13), its
# Ref.df counts rounding noise ("rank_above_1e10" counts the others).
# The optimizer is converged far more tightly than lme4's default, as in gamm4_smooth.R.
#
# The simulated study is written to tests/data/sim_fs_curves.csv; "linearity" holds the
# restricted likelihood-ratio statistic of its population smooth beside the fs smooth.
# Evidence kept in "stability": the REML criterion of the fs fit on the rows as read and on
# the rows reversed and shuffled (seeds 1 and 2), with the cubic regression spline base and
# with mgcv's default thin plate base; only the former is the same fit each time.

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

# the fs smooth's variances, each null-space one with the direction it belongs to
fs_values <- function(fit, d, i) {
  gam <- fit$gam
  sm <- gam$smooth[[i]]
  vc <- as.data.frame(VarCorr(fit$mer))
  x <- d[rownames(gam$model), sm$base$term]
  base <- smooth.construct(s(x, bs = "cr", k = sm$base$bs.dim), data.frame(x = x), NULL)
  r <- sm$base$rank
  null <- base$X %*% sm$P[, r + 1:2]
  first <- lm.fit(cbind(1, x), base$X[, 1])$fitted.values
  cos_first <- abs(colSums(null * first)) / sqrt(colSums(null^2) * sum(first^2))
  variance <- vapply(sm$lmer.name, function(g) num(vc$vcov[vc$grp == g]), 0)
  order <- if (cos_first[1] > cos_first[2]) 1:2 else 2:1
  sp <- num(gam$sp[sm$first.sp:sm$last.sp])
  list(
    label = sm$label,
    term = sm$base$term,
    factor = sm$fterm,
    k = sm$base$bs.dim,
    knots = num(sm$xp),
    cos_first = num(cos_first[order]),
    variance_wiggly = variance[1],
    variance_null = num(variance[1 + order]),
    sp = c(sp[1], sp[1 + order]),
    edf = num(sum(gam$edf[sm$first.para:sm$last.para])),
    n_coef = sm$last.para - sm$first.para + 1
  )
}

# an ordinary smooth's curve on a grid: the intercept plus the smooth (as gamm4_smooth.R)
curve_values <- function(fit, d, i) {
  gam <- fit$gam
  sm <- gam$smooth[[i]]
  x <- sm$term
  grid <- seq(min(d[[x]]), max(d[[x]]), length.out = 21)
  nd <- d[rep(1, length(grid)), , drop = FALSE]
  nd[[x]] <- grid
  Xp <- predict(gam, newdata = nd, type = "lpmatrix")
  for (j in seq_along(gam$smooth)) {
    if (j != i) Xp[, gam$smooth[[j]]$first.para:gam$smooth[[j]]$last.para] <- 0
  }
  Xp[, seq_len(gam$nsdf)[-1]] <- 0
  vc <- as.data.frame(VarCorr(fit$mer))
  list(label = sm$label, variance = num(vc$vcov[vc$grp == sm$lmer.name]),
       sp = num(gam$sp[sm$first.sp]), edf = num(sum(gam$edf[sm$first.para:sm$last.para])),
       grid = num(grid), fit = num(Xp %*% coef(gam)),
       se = num(sqrt(rowSums((Xp %*% gam$Vp) * Xp))))
}

one_case <- function(name, file, fixed, random, formula, factors) {
  d <- read.csv(file.path(data_dir, file), stringsAsFactors = FALSE)
  for (f in factors) d[[f]] <- factor(d[[f]])
  fit <- if (is.null(random)) {
    gamm4(as.formula(fixed), data = d, REML = TRUE, control = ctrl)
  } else {
    gamm4(as.formula(fixed), random = as.formula(random), data = d, REML = TRUE,
          control = ctrl)
  }
  mer <- fit$mer
  gam <- fit$gam
  vc <- as.data.frame(VarCorr(mer))
  st <- summary(gam)$s.table
  pt <- summary(gam)$p.table
  is_fs <- vapply(gam$smooth, function(s) inherits(s, "fs.interaction"), TRUE)
  fs <- which(is_fs)
  sm <- gam$smooth[[fs]]
  # predictions on a grid of x for three levels of the factor: with the fs curves (gam's
  # predict) and without them (the population level)
  levels_new <- levels(d[[sm$fterm]])[c(1, 2, length(levels(d[[sm$fterm]])))]
  x <- sm$base$term
  grid <- seq(min(d[[x]]), max(d[[x]]), length.out = 9)
  new <- d[rep(1, length(grid) * 3), , drop = FALSE]
  new[[x]] <- rep(grid, 3)
  new[[sm$fterm]] <- factor(rep(levels_new, each = length(grid)), levels = levels(d[[sm$fterm]]))
  keep <- unique(c(x, sm$fterm, factors[factors %in% all.vars(as.formula(fixed))]))
  lmer_names <- unlist(lapply(gam$smooth, function(s) s$lmer.name))
  # summary.gam's test of the fs smooth (mgcv:::reTest): the eigenvalues whose count above
  # eps^0.8 of the largest is the Ref.df; those near the cut-off are rounding noise
  rc <- mgcv:::recov(gam, integer(0), fs)
  ind <- sm$first.para:sm$last.para
  ev <- eigen(crossprod(rc$Rm %*% mgcv:::mroot(rc$Ve[ind, ind])) / gam$sig2, symmetric = TRUE,
              only.values = TRUE)$values
  group <- vc$grp[!(vc$grp %in% c("Residual", lmer_names))]
  list(
    name = name,
    data = file,
    formula = formula,
    factors = I(factors),
    n = length(gam$y),
    reml_criterion = num(REMLcrit(mer)),
    sigma2 = num(sigma(mer)^2),
    groups = as.list(setNames(num(vc$vcov[vc$grp %in% group]), vc$grp[vc$grp %in% group])),
    fs = fs_values(fit, d, fs),
    smooths = lapply(which(!is_fs), function(i) curve_values(fit, d, i)),
    re_test = list(statistic = num(sum((rc$Rm %*% coef(gam)[ind])^2) / gam$sig2),
                   smallest = num(sort(ev / max(ev))[1:4]),
                   rank_above_1e10 = sum(ev > max(ev) * 1e-10)),
    s_table = list(term = I(rownames(st)), edf = I(num(st[, "edf"])),
                   ref_df = I(num(st[, "Ref.df"])), F = I(num(st[, "F"])),
                   p_value = I(num(st[, "p-value"]))),
    p_table = list(term = I(rownames(pt)), estimate = I(num(pt[, 1])), se = I(num(pt[, 2])),
                   t = I(num(pt[, 3])), p_value = I(num(pt[, 4])),
                   df = num(length(gam$y) - sum(gam$edf))),
    aic = num(AIC(mer)),
    bic = num(BIC(mer)),
    npar = num(attr(logLik(mer), "df")),
    fitted_head = num(fitted(mer)[1:5]),
    new = lapply(as.list(new[, keep, drop = FALSE]),
                 function(v) if (is.factor(v)) as.character(v) else num(v)),
    predict_new = num(predict(gam, newdata = new)),
    predict_population = num(predict(gam, newdata = new, exclude = sm$label))
  )
}

# REML criterion of one fs fit on reordered rows
stability <- function(file, y, x, f, bs, k) {
  d0 <- read.csv(file.path(data_dir, file), stringsAsFactors = FALSE)
  d0[[f]] <- factor(d0[[f]])
  form <- as.formula(sprintf("%s ~ s(%s, %s, bs = \"fs\", xt = \"%s\", k = %d)", y, x, f, bs, k))
  orders <- list(
    as_read = seq_len(nrow(d0)),
    reversed = rev(seq_len(nrow(d0))),
    shuffled_1 = {set.seed(1); sample(nrow(d0))},
    shuffled_2 = {set.seed(2); sample(nrow(d0))}
  )
  crit <- vapply(orders, function(o) num(REMLcrit(gamm4(form, data = d0[o, ], REML = TRUE,
                                                          control = ctrl)$mer)), 0)
  list(data = file, formula = deparse(form), base = bs, k = k, orders = I(names(orders)),
       reml_criterion = I(num(crit)))
}

# a simulated study whose subjects differ little (a random intercept of sd 0.25 beside noise of
# sd 1): the fs smooth's test has a p-value well away from 0 and 1
set.seed(7)
sim <- expand.grid(time = 0:9, id = sprintf("p%02d", 1:12))
shift <- rnorm(12, 0, 0.25)
sim$y <- round(2 + sin(sim$time / 3) + shift[as.integer(sim$id)] + rnorm(nrow(sim)), 3)
write.csv(sim, file.path(data_dir, "sim_fs_curves.csv"), row.names = FALSE)

ss <- "lme4_sleepstudy.csv"
ck <- "datasets_ChickWeight.csv"
bw <- "nlme_BodyWeight.csv"
cases <- list(
  # the fs curves alone beside the intercept (no other random effect)
  one_case("fs_sleepstudy", ss, "Reaction ~ s(Days, Subject, bs = \"fs\", xt = \"cr\", k = 5)",
           NULL, "Reaction ~ s(Days, Subject, bs=\"fs\", xt=\"cr\", k=5)", "Subject"),
  # a population smooth and the subjects' curves around it (xt as a list)
  one_case("fs_smooth_sleepstudy", ss,
           "Reaction ~ s(Days, bs = \"cr\", k = 5) + s(Days, Subject, bs = \"fs\", xt = list(bs = \"cr\"), k = 6)",
           NULL,
           "Reaction ~ s(Days, bs=\"cr\", k=5) + s(Days, Subject, bs=\"fs\", xt=list(bs=\"cr\"), k=6)",
           "Subject"),
  # another random effect beside the chicks' curves
  one_case("fs_chickweight", ck,
           "weight ~ s(Time, bs = \"cr\", k = 5) + s(Time, Chick, bs = \"fs\", xt = \"cr\", k = 5)",
           "~ (1 | Diet)",
           "weight ~ s(Time, bs=\"cr\", k=5) + s(Time, Chick, bs=\"fs\", xt=\"cr\", k=5) + (1 | Diet)",
           c("Chick", "Diet")),
  one_case("fs_simulated", "sim_fs_curves.csv",
           "y ~ s(time, bs = \"cr\", k = 5) + s(time, id, bs = \"fs\", xt = \"cr\", k = 4)",
           NULL, "y ~ s(time, bs=\"cr\", k=5) + s(time, id, bs=\"fs\", xt=\"cr\", k=4)", "id"),
  # a parametric factor beside the rats' curves
  one_case("fs_bodyweight", bw, "weight ~ Diet + s(Time, Rat, bs = \"fs\", xt = \"cr\", k = 5)",
           NULL, "weight ~ Diet + s(Time, Rat, bs=\"fs\", xt=\"cr\", k=5)", c("Rat", "Diet"))
)
# the restricted likelihood-ratio statistic of s(time) in the simulated study: the fit against
# the same model without s(time)'s random effect (its linear column, as gamm4 builds it, kept)
lin_d <- transform(read.csv(file.path(data_dir, "sim_fs_curves.csv")), id = factor(id))
lin_fit <- gamm4(y ~ s(time, bs = "cr", k = 5) + s(time, id, bs = "fs", xt = "cr", k = 4),
                 data = lin_d, REML = TRUE, control = ctrl)
lin_d$linear <- getME(lin_fit$mer, "X")[, 2]
lin_null <- gamm4(y ~ linear + s(time, id, bs = "fs", xt = "cr", k = 4), data = lin_d,
                  REML = TRUE, control = ctrl)
linearity <- list(case = "fs_simulated", term = "s(time)",
                  statistic = num(REMLcrit(lin_null$mer) - REMLcrit(lin_fit$mer)))

evidence <- list(
  stability(ss, "Reaction", "Days", "Subject", "cr", 5),
  stability(ss, "Reaction", "Days", "Subject", "tp", 5),
  stability(ck, "weight", "Time", "Chick", "cr", 6),
  stability(ck, "weight", "Time", "Chick", "tp", 6)
)
out <- list(
  versions = list(R = R.version.string, mgcv = as.character(packageVersion("mgcv")),
                  gamm4 = as.character(packageVersion("gamm4")),
                  lme4 = as.character(packageVersion("lme4"))),
  cases = cases,
  linearity = linearity,
  stability = evidence
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"),
           file.path(here, "gamm4_fs.json"))
