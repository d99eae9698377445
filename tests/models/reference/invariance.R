# Reference fits for models.sem (tests/models/sem/test_invariance.py).
#
# Data: psychTools' `sai` (state anxiety items, 1-4, Revelle's personality lab; real responses).
#   flat: study FLAT, times 1, 2, 3, items tense, anxious, nervous, jittery (three waves)
#   rim:  study RIM, times 1 and 3, items calm, at.ease, relaxed, content (two waves)
#   vale: study VALE, times 1 to 4, the same items as rim (four waves, 67 complete of 77)
# Only participants with every item at every wave are kept (complete data).
# The ladder is semTools::measEq.syntax(ID.fac = "std.lv", auto = "all", longFacNames = ...)
# fitted with lavaan::cfa, estimator ML and MLR (under MLR also the scaled indices and the
# robust CFI, TLI and RMSEA of Brosseau-Liard, Savalei & Li 2012 and Brosseau-Liard & Savalei
# 2014, as fitMeasures gives them).
#
# Run from the repository root:  Rscript tests/models/reference/invariance.R
# Writes tests/data/psychTools_sai_{flat,rim}.csv (complete participants),
# tests/data/psychTools_sai_{flat,rim}_all.csv (every participant, for full-information ML)
# and tests/models/reference/invariance_*.csv.
suppressMessages({
  library(lavaan)
  library(semTools)
  library(psychTools)
})
data(sai, package = "psychTools")
out <- "tests/models/reference"

sets <- list(
  flat = list(study = "FLAT", times = c(1, 2, 3), items = c("tense", "anxious", "nervous", "jittery")),
  rim = list(study = "RIM", times = c(1, 3), items = c("calm", "at.ease", "relaxed", "content")),
  vale = list(study = "VALE", times = c(1, 2, 3, 4),
              items = c("calm", "at.ease", "relaxed", "content"))
)
levels <- list(configural = character(0), metric = "loadings",
               scalar = c("loadings", "intercepts"),
               strict = c("loadings", "intercepts", "residuals"))
measures <- c("npar", "chisq", "df", "pvalue", "cfi", "tli", "rmsea", "rmsea.ci.lower",
              "rmsea.ci.upper", "srmr", "logl", "aic", "bic", "baseline.chisq", "baseline.df")
robust <- c("chisq.scaled", "df.scaled", "pvalue.scaled", "chisq.scaling.factor",
            "cfi.scaled", "tli.scaled", "rmsea.scaled", "rmsea.ci.lower.scaled",
            "rmsea.ci.upper.scaled", "cfi.robust", "tli.robust", "rmsea.robust")
step_op <- c(metric = "=~", scalar = "~1", strict = "~~")

fits <- list(); params <- list(); lrts <- list(); scores <- list(); partial <- list()
for (name in names(sets)) {
  s <- sets[[name]]
  long <- sai[sai$study == s$study & sai$time %in% s$times, c("id", "time", s$items)]
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  wide <- wide[complete.cases(wide), ]
  long <- long[long$id %in% wide$id, ]
  long <- long[order(long$id, long$time), ]
  write.csv(long, sprintf("tests/data/psychTools_sai_%s.csv", name), row.names = FALSE)
  facs <- paste0("F.", s$times)
  model <- paste(sprintf("%s =~ %s", facs,
                         sapply(s$times, function(t) paste0(s$items, ".", t, collapse = " + "))),
                 collapse = "\n")
  for (est in c("ML", "MLR")) {
    prev <- NULL
    for (lev in names(levels)) {
      syn <- measEq.syntax(configural.model = model, data = wide, ID.fac = "std.lv",
                           longFacNames = list(F = facs), long.equal = levels[[lev]], auto = "all")
      fit <- cfa(as.character(syn), data = wide, estimator = est)
      fm <- unclass(fitMeasures(fit, measures))
      fm[robust] <- if (est == "MLR") unclass(fitMeasures(fit, robust)) else NA
      row <- data.frame(dataset = name, estimator = est, level = lev, n = nobs(fit),
                        converged = lavInspect(fit, "converged"), as.list(fm), check.names = FALSE)
      fits[[length(fits) + 1]] <- row
      pe <- parameterEstimates(fit)
      pe <- pe[pe$op %in% c("=~", "~~", "~1"), c("lhs", "op", "rhs", "est", "se")]
      params[[length(params) + 1]] <- data.frame(dataset = name, estimator = est, level = lev, pe)
      if (!is.null(prev)) {
        method <- if (est == "MLR") "satorra.bentler.2001" else "default"
        tab <- lavTestLRT(fit, prev, method = method)
        lrts[[length(lrts) + 1]] <- data.frame(
          dataset = name, estimator = est, level = lev,
          chisq_diff = tab[2, "Chisq diff"], df_diff = tab[2, "Df diff"], p = tab[2, "Pr(>Chisq)"])
      }
      if (lev != "configural") {
        # under MLR lavTestScore warns that it falls back to the ordinary score test
        pt <- parTable(fit)
        sc <- suppressWarnings(lavTestScore(fit))$uni
        target <- match(as.character(sc$rhs), pt$plabel)
        sc$param <- trimws(paste(pt$lhs[target], pt$op[target], pt$rhs[target]))
        scores[[length(scores) + 1]] <- data.frame(dataset = name, estimator = est, level = lev,
                                                   param = sc$param, X2 = sc$X2,
                                                   op = pt$op[target])
      }
      if (est == "ML" && lev != "configural") {
        # the partial model: free the worst constraint added at this step
        step <- pt$op[target] == step_op[[lev]] &
          (lev != "strict" | pt$lhs[target] == pt$rhs[target])
        worst <- which(step)[which.max(sc$X2[step])]
        con <- which(pt$op == "==" & pt$lhs == as.character(sc$lhs[worst]) &
                       pt$rhs == as.character(sc$rhs[worst]))
        stopifnot(length(con) == 1)
        pt2 <- pt[-con, ]
        pt2$label[pt2$plabel == sc$rhs[worst]] <- ""
        pt2 <- pt2[, c("id", "lhs", "op", "rhs", "user", "block", "group", "free",
                       "ustart", "exo", "label", "plabel")]
        pt2$free[pt2$free > 0] <- seq_len(sum(pt2$free > 0))
        pt2$id <- seq_len(nrow(pt2))
        fit2 <- lavaan(pt2, data = wide, estimator = est)
        partial[[length(partial) + 1]] <- data.frame(
          dataset = name, level = lev, freed = sc$param[worst], X2 = sc$X2[worst],
          chisq = fitMeasures(fit2, "chisq"), df = fitMeasures(fit2, "df"),
          cfi = fitMeasures(fit2, "cfi"), rmsea = fitMeasures(fit2, "rmsea"))
      }
      prev <- fit
    }
  }
}
# Full-information ML (missing = "ml"; estimator ML, labelled FIML, and MLR, labelled
# FIML-MLR) on every participant of the same studies, the incomplete ones included
# (flat: 3 of 170; rim: 8 of 342).
for (name in names(sets)) {
  s <- sets[[name]]
  long <- sai[sai$study == s$study & sai$time %in% s$times, c("id", "time", s$items)]
  long <- long[order(long$id, long$time), ]
  write.csv(long, sprintf("tests/data/psychTools_sai_%s_all.csv", name), row.names = FALSE)
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  facs <- paste0("F.", s$times)
  model <- paste(sprintf("%s =~ %s", facs,
                         sapply(s$times, function(t) paste0(s$items, ".", t, collapse = " + "))),
                 collapse = "\n")
  for (est in c("ML", "MLR")) {
    label <- if (est == "ML") "FIML" else "FIML-MLR"
    prev <- NULL
    for (lev in names(levels)) {
      syn <- measEq.syntax(configural.model = model, data = wide, ID.fac = "std.lv",
                           longFacNames = list(F = facs), long.equal = levels[[lev]],
                           auto = "all")
      fit <- cfa(as.character(syn), data = wide, estimator = est, missing = "ml")
      fm <- unclass(fitMeasures(fit, measures))
      fm[robust] <- if (est == "MLR") unclass(fitMeasures(fit, robust)) else NA
      fits[[length(fits) + 1]] <- data.frame(
        dataset = paste0(name, "_all"), estimator = label, level = lev, n = nobs(fit),
        converged = lavInspect(fit, "converged"), as.list(fm), check.names = FALSE)
      pe <- parameterEstimates(fit)
      pe <- pe[pe$op %in% c("=~", "~~", "~1"), c("lhs", "op", "rhs", "est", "se")]
      params[[length(params) + 1]] <- data.frame(dataset = paste0(name, "_all"),
                                                 estimator = label, level = lev, pe)
      if (est == "ML" && lev != "configural") {
        pt <- parTable(fit)
        sc <- lavTestScore(fit)$uni
        target <- match(as.character(sc$rhs), pt$plabel)
        scores[[length(scores) + 1]] <- data.frame(
          dataset = paste0(name, "_all"), estimator = label, level = lev,
          param = trimws(paste(pt$lhs[target], pt$op[target], pt$rhs[target])), X2 = sc$X2,
          op = pt$op[target])
      }
      if (!is.null(prev)) {
        method <- if (est == "MLR") "satorra.bentler.2001" else "default"
        tab <- lavTestLRT(fit, prev, method = method)
        lrts[[length(lrts) + 1]] <- data.frame(
          dataset = paste0(name, "_all"), estimator = label, level = lev,
          chisq_diff = tab[2, "Chisq diff"], df_diff = tab[2, "Df diff"],
          p = tab[2, "Pr(>Chisq)"])
      }
      prev <- fit
    }
  }
}
wr <- function(x, f) write.csv(do.call(rbind, x), file.path(out, f), row.names = FALSE)
wr(fits, "invariance_fits.csv")
wr(params, "invariance_params.csv")
wr(lrts, "invariance_lrt.csv")
wr(scores, "invariance_score.csv")
wr(partial, "invariance_partial.csv")
writeLines(c(R.version.string, paste("lavaan", packageVersion("lavaan")),
             paste("semTools", packageVersion("semTools")),
             paste("psychTools", packageVersion("psychTools"))),
           file.path(out, "invariance_versions.txt"))
