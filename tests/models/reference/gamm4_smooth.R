# Reference values for models/lmm/_smooth.py (s(x, bs = "cr") terms of LinearMixedModel),
# written to gamm4_smooth.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/gamm4_smooth.R
#
# gamm4 fits the smooth as lme4 does a random effect (mgcv's smooth2random); the optimizer is
# converged far more tightly than lme4's default so the stored values are the optimum itself.

suppressPackageStartupMessages({
  library(gamm4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

ctrl <- lmerControl(
  optimizer = "bobyqa",
  optCtrl = list(rhoend = 1e-12, maxfun = 1e6),
  check.conv.singular = "ignore"
)

num <- function(x) unname(as.numeric(x))

one_case <- function(name, file, response, x, k, group) {
  d <- read.csv(file.path(data_dir, file), stringsAsFactors = FALSE)
  d[[group]] <- factor(d[[group]])
  form <- as.formula(sprintf("%s ~ s(%s, bs = \"cr\", k = %d)", response, x, k))
  rand <- as.formula(sprintf("~ (1 | %s)", group))
  fit <- gamm4(form, random = rand, data = d, REML = TRUE, control = ctrl)
  mer <- fit$mer
  gam <- fit$gam
  vc <- as.data.frame(VarCorr(mer))
  sm <- gam$smooth[[1]]
  grid <- seq(min(d[[x]]), max(d[[x]]), length.out = 21)
  nd <- data.frame(grid)
  names(nd) <- x
  pr <- predict(gam, newdata = nd, se.fit = TRUE)
  st <- summary(gam)$s.table
  pt <- summary(gam)$p.table
  new_x <- min(d[[x]]) + c(0.13, 0.41, 0.77, 0.95) * diff(range(d[[x]]))
  nd_new <- data.frame(new_x)
  names(nd_new) <- x
  smooth_cols <- sm$first.para:sm$last.para
  list(
    name = name,
    data = file,
    formula = sprintf("%s ~ s(%s, bs=\"cr\", k=%d) + (1 | %s)", response, x, k, group),
    n = nrow(d),
    reml_criterion = num(REMLcrit(mer)),
    loglik = num(logLik(mer)),
    sigma2 = num(sigma(mer)^2),
    var_group = num(vc$vcov[vc$grp == group]),
    var_smooth = num(vc$vcov[vc$grp == "Xr"]),
    sp = num(gam$sp),
    intercept = num(coef(gam)[1]),
    intercept_se = num(sqrt(gam$Vp[1, 1])),
    edf = num(sum(gam$edf[smooth_cols])),
    edf_coef = num(gam$edf),
    knots = num(sm$xp),
    s_table = list(edf = num(st[1, "edf"]), ref_df = num(st[1, "Ref.df"]),
                   F = num(st[1, "F"]), p_value = num(st[1, "p-value"])),
    p_table = list(term = rownames(pt), estimate = num(pt[, 1]), se = num(pt[, 2]),
                   t = num(pt[, 3]), p_value = num(pt[, 4]),
                   df = num(length(gam$y) - sum(gam$edf))),
    aic = num(AIC(mer)),
    bic = num(BIC(mer)),
    npar = num(attr(logLik(mer), "df")),
    singular = isSingular(mer),
    fitted_head = num(fitted(mer)[1:5]),
    new_x = num(new_x),
    predict_new = num(predict(gam, newdata = nd_new)),
    grid = num(grid),
    basis_grid = unname(PredictMat(sm, nd)),
    fit = num(pr$fit),
    se = num(pr$se.fit),
    coef = num(coef(gam)),
    Vp = unname(gam$Vp)
  )
}

# R's datasets::ChickWeight (Crowder & Hand 1990): growth curves, a smooth off the boundary
cw <- as.data.frame(datasets::ChickWeight)
cw$Chick <- as.character(cw$Chick)
cw$Diet <- as.character(cw$Diet)
write.csv(cw, file.path(data_dir, "datasets_ChickWeight.csv"), row.names = FALSE)

cases <- list(
  one_case("sleepstudy", "lme4_sleepstudy.csv", "Reaction", "Days", 6L, "Subject"),
  one_case("orthodont", "nlme_Orthodont.csv", "distance", "age", 4L, "Subject"),
  one_case("chickweight", "datasets_ChickWeight.csv", "weight", "Time", 6L, "Chick")
)
out <- list(
  versions = list(R = R.version.string, mgcv = as.character(packageVersion("mgcv")),
                  gamm4 = as.character(packageVersion("gamm4")),
                  lme4 = as.character(packageVersion("lme4"))),
  cases = cases
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           file.path(here, "gamm4_smooth.json"))
