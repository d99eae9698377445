# Reference values for the partial-invariance search of the WLSMV ladder
# (tests/models/sem/test_invariance_wlsmv.py).
#
# Data: psychTools' `sai` as in wlsmv_ladder.R (flat: study FLAT, three waves; rim: study RIM,
# times 1 and 3). The ladder is semTools::measEq.syntax(ordered = ..., parameterization =
# "theta", ID.fac = "std.lv", ID.cat = "Wu.Estabrook.2016", auto = "all") fitted with
# lavaan::cfa(estimator = "WLSMV").
#
# 1. Score tests of every restriction a step adds: the equalities of thresholds and loadings
#    are lavaan's own constraints; an intercept fixed at 0 and a residual variance fixed at 1
#    at a later wave are written as a free labelled parameter with the constraint "== 0" or
#    "== 1" (the same model; its chi-square is checked to be unchanged), so that lavTestScore
#    tests them too. For the scalar and strict models of flat and rim.
# 2. The partial search: at the first step whose scaled CFI drops by more than `cut_cfi` or
#    whose scaled RMSEA rises by more than 0.015, the step's restriction with the largest
#    score statistic is freed and the model refitted, one at a time, until the step holds
#    against the level below; every model's fit measures, lavTestLRT against the level below,
#    its parameter estimates and the score tests it was chosen by. flat with cut_cfi = 0.0005
#    (the metric step is rejected) and rim with cut_cfi = 0.0005 (the scalar step; two
#    intercepts are freed).
#
# Run from the repository root:  Rscript tests/models/reference/wlsmv_partial.R
# Writes tests/models/reference/wlsmv_partial.json.
suppressMessages({
  library(lavaan)
  library(semTools)
  library(jsonlite)
})
out <- "tests/models/reference/wlsmv_partial.json"

sets <- list(
  flat = list(times = c(1, 2, 3), items = c("tense", "anxious", "nervous", "jittery")),
  rim = list(times = c(1, 3), items = c("calm", "at.ease", "relaxed", "content"))
)
levels <- list(configural = character(0), thresholds = "thresholds",
               metric = c("thresholds", "loadings"),
               scalar = c("thresholds", "loadings", "intercepts"),
               strict = c("thresholds", "loadings", "intercepts", "residuals"))
step_op <- c(thresholds = "|", metric = "=~", scalar = "~1", strict = "~~")
measures <- c("npar", "chisq", "df", "chisq.scaled", "df.scaled", "pvalue.scaled",
              "chisq.scaling.factor", "cfi.scaled", "tli.scaled", "rmsea.scaled",
              "rmsea.ci.lower.scaled", "rmsea.ci.upper.scaled", "srmr")

# the syntax of `level` with the later waves' fixed intercepts (scalar, strict) and residual
# variances (strict) written as labelled parameters held by "==" constraints, and the
# restrictions in `freed` ("lhs op rhs" of a later wave's entry) released
restricted <- function(text, level, freed, first, observed) {
  lines <- strsplit(text, "\n")[[1]]
  extra <- character(0)
  for (i in seq_along(lines)) {
    line <- trimws(lines[i])
    m <- regmatches(line, regexec("^(\\S+) ~ 0\\*1 \\+ \\S+\\*1$", line))[[1]]
    if (length(m) && m[2] %in% observed && level %in% c("scalar", "strict") &&
        !(m[2] %in% first)) {
      lab <- paste0("nuc.", m[2])
      lines[i] <- sprintf("%s ~ NA*1 + %s*1", m[2], lab)
      if (!(paste(m[2], "~1") %in% freed)) extra <- c(extra, sprintf("%s == 0", lab))
      next
    }
    m <- regmatches(line, regexec("^(\\S+) ~~ 1\\*(\\S+) \\+ \\S+\\*(\\S+)$", line))[[1]]
    if (length(m) && m[2] == m[3] && m[2] %in% observed && level == "strict" &&
        !(m[2] %in% first)) {
      lab <- paste0("thc.", m[2])
      lines[i] <- sprintf("%s ~~ NA*%s + %s*%s", m[2], m[2], lab, m[2])
      if (!(paste(m[2], "~~", m[2]) %in% freed)) extra <- c(extra, sprintf("%s == 1", lab))
      next
    }
    m <- regmatches(line, regexec("^(\\S+) =~ NA\\*(\\S+) \\+ \\S+\\*(\\S+)$", line))[[1]]
    if (length(m) && paste(m[2], "=~", m[3]) %in% freed) {
      lines[i] <- sprintf("%s =~ NA*%s + free.%s*%s", m[2], m[3], m[3], m[3])
      next
    }
    m <- regmatches(line, regexec("^(\\S+) \\| NA\\*(t\\d+) \\+ \\S+\\*(t\\d+)$", line))[[1]]
    if (length(m) && paste(m[2], "|", m[3]) %in% freed) {
      lines[i] <- sprintf("%s | NA*%s + free.%s.%s*%s", m[2], m[3], m[2], m[3], m[3])
    }
  }
  paste(c(lines, extra), collapse = "\n")
}

# lavTestScore's univariate tests as "lhs op rhs" of the later wave's entry
score_table <- function(fit) {
  pt <- parTable(fit)
  sc <- suppressWarnings(lavTestScore(fit))$uni
  idx <- match(as.character(sc$rhs), pt$plabel)
  user <- is.na(idx)
  idx[user] <- match(as.character(sc$lhs[user]), pt$label)
  param <- trimws(paste(pt$lhs[idx], pt$op[idx], ifelse(pt$op[idx] == "~1", "", pt$rhs[idx])))
  data.frame(param = param, op = pt$op[idx], X2 = sc$X2, stringsAsFactors = FALSE)
}

params_of <- function(fit) {
  pe <- parameterEstimates(fit)
  pe <- pe[pe$op %in% c("=~", "|", "~1", "~~"), ]
  list(lhs = pe$lhs, op = pe$op, rhs = pe$rhs, est = pe$est, se = pe$se)
}

fit_syntax <- function(text, wide, ordered) {
  fit <- cfa(text, data = wide, ordered = ordered, estimator = "WLSMV",
             parameterization = "theta")
  stopifnot(lavInspect(fit, "converged"))
  fit
}

result <- list(R = R.version.string, lavaan = as.character(packageVersion("lavaan")),
               semTools = as.character(packageVersion("semTools")), score = list(),
               search = list())
syntaxes <- list(); datas <- list()
for (name in names(sets)) {
  s <- sets[[name]]
  long <- read.csv(sprintf("tests/data/psychTools_sai_%s.csv", name))
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  ordered <- as.vector(sapply(s$times, function(t) paste0(s$items, ".", t)))
  facs <- paste0("F.", s$times)
  model <- paste(sprintf("%s =~ %s", facs,
                         sapply(s$times, function(t) paste0(s$items, ".", t, collapse = " + "))),
                 collapse = "\n")
  first <- paste0(s$items, ".", s$times[1])
  syn <- list()
  for (lev in names(levels)) {
    syn[[lev]] <- as.character(measEq.syntax(
      configural.model = model, data = wide, ordered = ordered, parameterization = "theta",
      ID.fac = "std.lv", ID.cat = "Wu.Estabrook.2016", longFacNames = list(F = facs),
      long.equal = levels[[lev]], auto = "all"))
  }
  syntaxes[[name]] <- syn
  datas[[name]] <- list(wide = wide, ordered = ordered, first = first)
  entry <- list()
  for (lev in c("scalar", "strict")) {
    plain <- fit_syntax(syn[[lev]], wide, ordered)
    fit <- fit_syntax(restricted(syn[[lev]], lev, character(0), first, ordered), wide,
                      ordered)
    gap <- abs(fitMeasures(fit, "chisq.scaled") - fitMeasures(plain, "chisq.scaled"))
    stopifnot(gap < 1e-4, fitMeasures(fit, "df") == fitMeasures(plain, "df"))
    sc <- score_table(fit)
    sc <- sc[sc$op == step_op[[lev]], ]
    entry[[lev]] <- list(param = sc$param, X2 = sc$X2)
  }
  result$score[[name]] <- entry
}

searches <- list(flat = 0.0005, rim = 0.0005)
for (name in names(searches)) {
  cut_cfi <- searches[[name]]
  d <- datas[[name]]
  syn <- syntaxes[[name]]
  fits <- lapply(names(levels), function(lev) fit_syntax(syn[[lev]], d$wide, d$ordered))
  names(fits) <- names(levels)
  idx <- function(fit) unclass(fitMeasures(fit, c("cfi.scaled", "rmsea.scaled")))
  rejected <- NULL
  for (i in 2:length(levels)) {
    a <- idx(fits[[i - 1]]); b <- idx(fits[[i]])
    if (a[1] - b[1] > cut_cfi || b[2] - a[2] > 0.015) { rejected <- names(levels)[i]; break }
  }
  stopifnot(!is.null(rejected))
  below <- names(levels)[match(rejected, names(levels)) - 1]
  base <- idx(fits[[below]])
  freed <- character(0)
  models <- list()
  current <- fit_syntax(restricted(syn[[rejected]], rejected, freed, d$first, d$ordered),
                        d$wide, d$ordered)
  repeat {
    sc <- score_table(current)
    sc <- sc[sc$op == step_op[[rejected]] & !(sc$param %in% freed), ]
    worst <- sc$param[which.max(sc$X2)]
    freed <- c(freed, worst)
    fit <- fit_syntax(restricted(syn[[rejected]], rejected, freed, d$first, d$ordered),
                      d$wide, d$ordered)
    tab <- lavTestLRT(fit, fits[[below]])
    now <- idx(fit)
    holds <- base[1] - now[1] <= cut_cfi && now[2] - base[2] <= 0.015
    models[[length(models) + 1]] <- list(
      scored = list(param = I(sc$param), X2 = I(sc$X2)), freed = I(freed),
      fit = as.list(unclass(fitMeasures(fit, measures))),
      lrt = list(chisq_diff = tab[2, "Chisq diff"], df_diff = tab[2, "Df diff"],
                 p = tab[2, "Pr(>Chisq)"]),
      params = params_of(fit), holds = holds)
    if (holds || nrow(sc) == 1) break
    current <- fit
  }
  result$search[[name]] <- list(cut_cfi = cut_cfi, rejected = rejected, below = below,
                                models = models)
}
writeLines(toJSON(result, auto_unbox = TRUE, digits = NA, pretty = FALSE, na = "null"), out)
