# Timings of the ordinal (WLSMV) invariance ladder in lavaan + semTools, for
# benchmarks/bench_invariance_wlsmv.py.
#
# For each data set: the five levels written by semTools::measEq.syntax(ordered = ...,
# parameterization = "theta", ID.fac = "std.lv", ID.cat = "Wu.Estabrook.2016", auto = "all")
# and fitted by lavaan::cfa(estimator = "WLSMV"), fitMeasures of each, lavTestLRT of
# consecutive models, and lavTestScore of the first rejected step (the work of
# models.sem.measurement_invariance(estimator = "WLSMV") before its partial search).
#
# Run from the repository root:
#   Rscript benchmarks/wlsmv_timings.R [RUNS]        CSV: case, seconds (median), seconds_fits
#   Rscript benchmarks/wlsmv_timings.R --command F   the ladder of the long CSV file F (columns
#                                                    id, time, then the items), once, from a
#                                                    fresh R: its fit table as CSV on stdout
suppressMessages({
  library(lavaan)
  library(semTools)
})
levels <- list(configural = character(0), thresholds = "thresholds",
               metric = c("thresholds", "loadings"),
               scalar = c("thresholds", "loadings", "intercepts"),
               strict = c("thresholds", "loadings", "intercepts", "residuals"))
measures <- c("npar", "chisq", "df", "chisq.scaled", "df.scaled", "pvalue.scaled",
              "cfi.scaled", "tli.scaled", "rmsea.scaled", "rmsea.ci.lower.scaled",
              "rmsea.ci.upper.scaled", "srmr")

ladder <- function(long) {
  items <- setdiff(names(long), c("id", "time"))
  times <- sort(unique(long$time))
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  ordered <- as.vector(sapply(times, function(t) paste0(items, ".", t)))
  facs <- paste0("F.", times)
  model <- paste(sprintf("%s =~ %s", facs,
                         sapply(times, function(t) paste0(items, ".", t, collapse = " + "))),
                 collapse = "\n")
  t_fit <- 0
  fits <- list()
  rows <- list()
  for (lev in names(levels)) {
    syn <- measEq.syntax(configural.model = model, data = wide, ordered = ordered,
                         parameterization = "theta", ID.fac = "std.lv",
                         ID.cat = "Wu.Estabrook.2016", longFacNames = list(F = facs),
                         long.equal = levels[[lev]], auto = "all")
    t1 <- proc.time()[["elapsed"]]
    fit <- cfa(as.character(syn), data = wide, ordered = ordered, estimator = "WLSMV",
               parameterization = "theta")
    t_fit <- t_fit + proc.time()[["elapsed"]] - t1
    fits[[lev]] <- fit
    rows[[lev]] <- data.frame(model = lev, t(unclass(fitMeasures(fit, measures))))
  }
  rejected <- NULL
  for (k in 2:length(fits)) {
    test <- lavTestLRT(fits[[k - 1]], fits[[k]])
    if (is.null(rejected) && test[["Pr(>Chisq)"]][2] < 0.05) rejected <- fits[[k]]
  }
  if (!is.null(rejected)) suppressWarnings(lavTestScore(rejected))
  list(table = do.call(rbind, rows), seconds_fits = t_fit)
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 2 && args[1] == "--command") {
  result <- ladder(read.csv(args[2]))
  write.csv(result$table, stdout(), row.names = FALSE)
} else {
  runs <- if (length(args)) as.integer(args[1]) else 3L
  cat("case,seconds,seconds_fits,lavaan\n")
  files <- c(flat = "tests/data/psychTools_sai_flat.csv", rim = "tests/data/psychTools_sai_rim.csv",
             help = "tests/data/mosaicData_HELPfull_gh.csv")
  for (case in names(files)) {
    long <- read.csv(files[[case]])
    total <- numeric(runs)
    fits_only <- numeric(runs)
    for (r in seq_len(runs)) {
      t0 <- proc.time()[["elapsed"]]
      result <- ladder(long)
      total[r] <- proc.time()[["elapsed"]] - t0
      fits_only[r] <- result$seconds_fits
    }
    cat(sprintf("%s,%.4f,%.4f,%s\n", case, median(total), median(fits_only),
                packageVersion("lavaan")))
  }
}
