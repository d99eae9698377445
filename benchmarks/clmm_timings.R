# ordinal::clmm fit times for benchmarks/bench_ordinal.py, written to
# benchmarks/data/clmm_timings.csv.
#
# Run from the repository root (after benchmarks/lme4_timings.R has written insteval.csv):
#   Rscript benchmarks/clmm_timings.R
#
# Cases, each fitted with clmm's default controls (Laplace, nlminb), median wall time of 3 fits
# one after another:
#   insteval400  y ~ service + (1 | s) + (1 | d) on the 10,489 ratings of InstEval's first 400
#                students (crossed: 400 students x 1,037 lecturers)
#   wine         rating ~ temp + contact + (1 | judge) (ordinal's wine data, 72 ratings)
#   study        empathy ~ trait + week + (1 + week | participant) + (1 | story) on the
#                study-sized data of bench_lmm.py with empathy cut into 5 categories

suppressPackageStartupMessages(library(ordinal))

data_dir <- file.path("benchmarks", "data")
inst <- read.csv(file.path(data_dir, "insteval.csv"))
inst <- inst[inst$s %in% sort(unique(inst$s))[1:400], ]
inst$y <- factor(inst$y, ordered = TRUE)
inst$s <- factor(inst$s); inst$d <- factor(inst$d); inst$service <- factor(inst$service)
wine <- read.csv(file.path("tests", "data", "ordinal_wine.csv"))
wine$rating <- factor(wine$rating, ordered = TRUE)
study <- read.csv(file.path(data_dir, "study_sized.csv"))
study$empathy <- cut(study$empathy, c(-Inf, quantile(study$empathy, c(.1, .3, .6, .85)), Inf),
                     labels = FALSE, ordered_result = TRUE)
study$empathy <- factor(study$empathy, ordered = TRUE)

cases <- list(
  insteval400 = list(inst, y ~ service + (1 | s) + (1 | d)),
  wine = list(wine, rating ~ temp + contact + (1 | judge)),
  study = list(study, empathy ~ trait + week + (1 + week | participant) + (1 | story))
)
rows <- list()
for (name in names(cases)) {
  d <- cases[[name]][[1]]
  f <- cases[[name]][[2]]
  times <- numeric(3)
  for (i in 1:3) {
    times[i] <- system.time(m <- clmm(f, data = d))[["elapsed"]]
  }
  rows[[name]] <- data.frame(
    case = name, seconds = median(times), runs = 3, n = nrow(d),
    loglik = format(as.numeric(logLik(m)), digits = 12),
    date = format(Sys.Date()), r_version = R.version.string,
    ordinal = as.character(packageVersion("ordinal"))
  )
}
write.csv(do.call(rbind, rows), file.path(data_dir, "clmm_timings.csv"), row.names = FALSE)
