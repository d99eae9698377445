# Reference fits for models.sem._wlsmv (tests/models/sem/test_wlsmv.py).
#
# Data: psychTools' `sai` (state anxiety items, 1-4), the complete participants written by
# invariance.R:
#   flat: study FLAT, times 1, 2, 3, items tense, anxious, nervous, jittery (three waves)
#   rim:  study RIM, times 1 and 3, items calm, at.ease, relaxed, content (two waves)
#   flat_collapsed: flat with nervous made binary (1 | 2-4) and jittery three categories
#     (1 | 2 | 3-4), for the identification of items with fewer categories
# and five-point items from mosaicData's `HELPfull` (the HELP trial; tests/data/README.md):
#   help: the SF-36 general health items B1 (1 excellent - 5 poor) and B11A-B11D (1 definitely
#     true - 5 definitely false; B11A and B11C worded the other way, so their loadings are
#     negative) at baseline and 6 months (times 0 and 6), the 254 patients who answered all
#     five at both (tests/data/mosaicData_HELPfull_gh.csv, answers as published)
# The items are ordered categorical. The ladder is semTools::measEq.syntax(ordered = ...,
# parameterization = "theta", ID.fac = "std.lv", ID.cat = "Wu.Estabrook.2016",
# longFacNames = ..., auto = "all") with long.equal growing by thresholds, loadings,
# intercepts and residuals, fitted with lavaan::cfa(estimator = "WLSMV",
# parameterization = "theta").
#
# Run from the repository root:  Rscript tests/models/reference/wlsmv_ladder.R
# Writes tests/models/reference/wlsmv_ladder.json: per data set the sample statistics
# (wls.obs, gamma, the diagonal of wls.v, thresholds, polychoric correlations), the syntax of
# every step, and per model the fit measures, the parameter table (est, se), the seconds
# lavaan took, the scaled difference test against the previous model (lavTestLRT's default
# method), the univariate score tests of the equality constraints (lavTestScore), the partial
# thresholds and metric models releasing the constraint with the largest of them; and the
# configural to scalar models again in the delta parameterisation (syntax, fit, parameters).
suppressMessages({
  library(lavaan)
  library(semTools)
  library(jsonlite)
})
out <- "tests/models/reference/wlsmv_ladder.json"

sets <- list(
  flat = list(times = c(1, 2, 3), items = c("tense", "anxious", "nervous", "jittery")),
  rim = list(times = c(1, 3), items = c("calm", "at.ease", "relaxed", "content")),
  flat_collapsed = list(times = c(1, 2, 3), items = c("tense", "anxious", "nervous", "jittery"),
                        file = "flat", top = c(nervous = 2, jittery = 3)),
  help = list(times = c(0, 6), items = c("B1", "B11A", "B11B", "B11C", "B11D"),
              path = "tests/data/mosaicData_HELPfull_gh.csv")
)
levels <- list(configural = character(0), thresholds = "thresholds",
               metric = c("thresholds", "loadings"),
               scalar = c("thresholds", "loadings", "intercepts"),
               strict = c("thresholds", "loadings", "intercepts", "residuals"))
measures <- c("npar", "fmin", "chisq", "df", "pvalue", "chisq.scaled", "df.scaled",
              "pvalue.scaled", "chisq.scaling.factor", "baseline.chisq", "baseline.df",
              "baseline.chisq.scaled", "baseline.chisq.scaling.factor", "cfi", "tli",
              "cfi.scaled", "tli.scaled", "cfi.robust", "tli.robust", "rmsea",
              "rmsea.ci.lower", "rmsea.ci.upper", "rmsea.scaled", "rmsea.ci.lower.scaled",
              "rmsea.ci.upper.scaled", "rmsea.robust", "rmsea.ci.lower.robust",
              "rmsea.ci.upper.robust", "srmr", "crmr")

result <- list(R = R.version.string, lavaan = as.character(packageVersion("lavaan")),
               semTools = as.character(packageVersion("semTools")), datasets = list())
for (name in names(sets)) {
  s <- sets[[name]]
  path <- if (is.null(s$path)) {
    sprintf("tests/data/psychTools_sai_%s.csv", if (is.null(s$file)) name else s$file)
  } else s$path
  long <- read.csv(path)
  for (item in names(s$top)) long[[item]] <- pmin(long[[item]], s$top[[item]])
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  ordered <- as.vector(sapply(s$times, function(t) paste0(s$items, ".", t)))
  facs <- paste0("F.", s$times)
  model <- paste(sprintf("%s =~ %s", facs,
                         sapply(s$times, function(t) paste0(s$items, ".", t, collapse = " + "))),
                 collapse = "\n")
  entry <- list(items = s$items, times = s$times, names = ordered, syntax = list(),
                models = list(), lrt = list(), score = list(), partial = list())
  prev <- NULL
  for (lev in names(levels)) {
    syn <- measEq.syntax(configural.model = model, data = wide, ordered = ordered,
                         parameterization = "theta", ID.fac = "std.lv",
                         ID.cat = "Wu.Estabrook.2016", longFacNames = list(F = facs),
                         long.equal = levels[[lev]], auto = "all")
    text <- as.character(syn)
    cat("=====", name, lev, "\n", text, "\n")
    entry$syntax[[lev]] <- text
    seconds <- system.time(
      fit <- cfa(text, data = wide, ordered = ordered, estimator = "WLSMV",
                 parameterization = "theta")
    )[["elapsed"]]
    stopifnot(lavInspect(fit, "converged"))
    if (lev == "configural") {
      ss <- lavInspect(fit, "sampstat")
      th <- ss$th
      entry$n <- nobs(fit)
      entry$stats <- list(
        wls_obs = unname(lavInspect(fit, "wls.obs")),
        wls_obs_names = names(lavInspect(fit, "wls.obs")),
        gamma = unname(unclass(lavInspect(fit, "gamma"))),
        wls_v = unname(diag(lavInspect(fit, "wls.v"))),
        thresholds = lapply(ordered, function(v) I(unname(th[startsWith(names(th), paste0(v, "|"))]))),
        polychoric = unname(unclass(ss$cov))
      )
    }
    fm <- unclass(fitMeasures(fit, measures))
    test <- fit@test[["scaled.shifted"]]
    pe <- parameterEstimates(fit)
    pe <- pe[pe$op %in% c("=~", "|", "~1", "~~"), ]
    entry$models[[lev]] <- list(
      fit = c(as.list(fm), list(shift = test$shift.parameter,
                                trace_ugamma = test$trace.UGamma,
                                trace_ugamma2 = test$trace.UGamma2)),
      params = list(lhs = pe$lhs, op = pe$op, rhs = pe$rhs, est = pe$est, se = pe$se),
      seconds = seconds)
    if (!is.null(prev)) {
      tab <- lavTestLRT(fit, prev)
      entry$lrt[[lev]] <- list(method = attr(tab, "heading"),
                               chisq_diff = tab[2, "Chisq diff"], df_diff = tab[2, "Df diff"],
                               p = tab[2, "Pr(>Chisq)"])
    }
    if (lev != "configural") {
      pt <- parTable(fit)
      # under a scaled test lavTestScore warns that it gives the ordinary score test
      sc <- suppressWarnings(lavTestScore(fit))
      uni <- sc$uni
      first <- match(as.character(uni$lhs), pt$plabel)
      later <- match(as.character(uni$rhs), pt$plabel)
      entry$score[[lev]] <- list(
        total = list(X2 = sc$test$X2, df = sc$test$df, p = sc$test$p.value),
        lhs = pt$lhs[later], op = pt$op[later], rhs = pt$rhs[later],
        first_lhs = pt$lhs[first], first_op = pt$op[first], first_rhs = pt$rhs[first],
        X2 = uni$X2, df = uni$df, p = uni$p.value)
    }
    if (lev %in% c("thresholds", "metric")) {
      # the partial model: release the step's constraint with the largest score statistic
      op <- if (lev == "thresholds") "|" else "=~"
      step <- which(pt$op[later] == op)
      worst <- step[which.max(uni$X2[step])]
      con <- which(pt$op == "==" & pt$lhs == as.character(uni$lhs[worst]) &
                     pt$rhs == as.character(uni$rhs[worst]))
      stopifnot(length(con) == 1)
      pt2 <- pt[-con, ]
      pt2$label[pt2$plabel == as.character(uni$rhs[worst])] <- ""
      pt2 <- pt2[, c("id", "lhs", "op", "rhs", "user", "block", "group", "free",
                     "ustart", "exo", "label", "plabel")]
      pt2$free[pt2$free > 0] <- seq_len(sum(pt2$free > 0))
      pt2$id <- seq_len(nrow(pt2))
      fit2 <- lavaan(pt2, data = wide, ordered = ordered, estimator = "WLSMV",
                     parameterization = "theta")
      stopifnot(lavInspect(fit2, "converged"))
      pe2 <- parameterEstimates(fit2)
      pe2 <- pe2[pe2$op %in% c("=~", "|", "~1", "~~"), ]
      entry$partial[[lev]] <- list(
        freed = list(lhs = pt$lhs[later[worst]], op = pt$op[later[worst]],
                     rhs = pt$rhs[later[worst]]),
        fit = as.list(unclass(fitMeasures(fit2, measures))),
        params = list(lhs = pe2$lhs, op = pe2$op, rhs = pe2$rhs, est = pe2$est, se = pe2$se))
    }
    prev <- fit
  }
  # the delta parameterisation (no strict level: semTools refuses it)
  entry$delta <- list()
  for (lev in setdiff(names(levels), "strict")) {
    syn <- measEq.syntax(configural.model = model, data = wide, ordered = ordered,
                         parameterization = "delta", ID.fac = "std.lv",
                         ID.cat = "Wu.Estabrook.2016", longFacNames = list(F = facs),
                         long.equal = levels[[lev]], auto = "all")
    text <- as.character(syn)
    fit <- cfa(text, data = wide, ordered = ordered, estimator = "WLSMV",
               parameterization = "delta")
    stopifnot(lavInspect(fit, "converged"))
    fm <- unclass(fitMeasures(fit, measures))
    test <- fit@test[["scaled.shifted"]]
    pe <- parameterEstimates(fit)
    pe <- pe[pe$op %in% c("=~", "|", "~1", "~~", "~*~"), ]
    entry$delta[[lev]] <- list(
      syntax = text,
      fit = c(as.list(fm), list(shift = test$shift.parameter)),
      params = list(lhs = pe$lhs, op = pe$op, rhs = pe$rhs, est = pe$est, se = pe$se))
  }
  result$datasets[[name]] <- entry
}
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = FALSE, na = "null"), out)
