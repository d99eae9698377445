# Timings of the lavaan + semTools invariance ladder, for benchmarks/bench_invariance.py.
#
# For each data set and estimator: the four levels written by semTools::measEq.syntax and
# fitted by lavaan::cfa, fitMeasures of each, and lavTestLRT of the four (the same work as
# models.sem.measurement_invariance); the *_all cases keep the incomplete participants and use
# full-information ML (missing = "ml"). Prints CSV: case, estimator, seconds (median of RUNS),
# seconds_fits (the cfa calls alone), lavaan version.
#
# Run from the repository root:  Rscript benchmarks/invariance_timings.R [RUNS]
suppressMessages({
  library(lavaan)
  library(semTools)
})
args <- commandArgs(trailingOnly = TRUE)
runs <- if (length(args)) as.integer(args[1]) else 3L
sets <- list(
  flat = list(times = c(1, 2, 3), items = c("tense", "anxious", "nervous", "jittery")),
  rim = list(times = c(1, 3), items = c("calm", "at.ease", "relaxed", "content"))
)
levels <- list(configural = character(0), metric = "loadings",
               scalar = c("loadings", "intercepts"),
               strict = c("loadings", "intercepts", "residuals"))
cat("case,estimator,seconds,seconds_fits,lavaan\n")
cases <- c(names(sets), paste0(names(sets), "_all"))
for (case in cases) {
  name <- sub("_all$", "", case)
  missing <- if (grepl("_all$", case)) "ml" else "listwise"
  s <- sets[[name]]
  long <- read.csv(sprintf("tests/data/psychTools_sai_%s.csv", case))
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  facs <- paste0("F.", s$times)
  model <- paste(sprintf("%s =~ %s", facs,
                         sapply(s$times, function(t) paste0(s$items, ".", t, collapse = " + "))),
                 collapse = "\n")
  for (est in c("ML", "MLR")) {
    total <- numeric(runs)
    fits_only <- numeric(runs)
    for (r in seq_len(runs)) {
      t_fit <- 0
      t0 <- proc.time()[["elapsed"]]
      fits <- list()
      for (lev in names(levels)) {
        syn <- measEq.syntax(configural.model = model, data = wide, ID.fac = "std.lv",
                             longFacNames = list(F = facs), long.equal = levels[[lev]],
                             auto = "all")
        t1 <- proc.time()[["elapsed"]]
        fit <- cfa(as.character(syn), data = wide, estimator = est, missing = missing)
        t_fit <- t_fit + proc.time()[["elapsed"]] - t1
        fitMeasures(fit)
        fits[[lev]] <- fit
      }
      method <- if (est == "MLR") "satorra.bentler.2001" else "default"
      lavTestLRT(fits$configural, fits$metric, fits$scalar, fits$strict, method = method)
      total[r] <- proc.time()[["elapsed"]] - t0
      fits_only[r] <- t_fit
    }
    cat(sprintf("%s,%s,%.4f,%.4f,%s\n", case, est, median(total), median(fits_only),
                packageVersion("lavaan")))
  }
}
