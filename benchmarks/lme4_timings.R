# lme4 fit times for benchmarks/bench_lmm.py, written to benchmarks/data/lme4_timings.csv.
#
# Run from the repository root, after `python benchmarks/bench_lmm.py --write-data` (it writes
# the simulated random-slope designs, 10,000 and 1,000,000 rows):
#   Rscript benchmarks/lme4_timings.R
#
# Also writes benchmarks/data/insteval.csv (lme4::InstEval: s, d, dept, service, y) for the
# Python side. Each case is fitted with lme4's default controls (REML, nloptwrap BOBYQA); the
# figure is the median wall time of several fits (5; 3 for InstEval), taken one after another.
# `lmertest_seconds` is the same for lmerTest: its fit (which also computes the Hessian of the
# variance parameters) followed by `summary()` with Satterthwaite df, what a user runs to get
# p-values; the fixed-effect table of LinearMixedModel.fit holds the same.

suppressPackageStartupMessages(library(lme4))
suppressPackageStartupMessages(library(lmerTest))

data_dir <- file.path("benchmarks", "data")
insteval_csv <- file.path(data_dir, "insteval.csv")
write.csv(InstEval[, c("s", "d", "dept", "service", "y")], insteval_csv, row.names = FALSE)

sleep <- read.csv(file.path("tests", "data", "lme4_sleepstudy.csv"))
study <- read.csv(file.path(data_dir, "study_sized.csv"))
slope10k <- read.csv(file.path(data_dir, "slope10k.csv"), colClasses = c("factor", "factor", "numeric", "numeric"))
slope1m <- read.csv(file.path(data_dir, "slope1m.csv"), colClasses = c("factor", "factor", "numeric", "numeric"))
inst <- InstEval

cases <- list(
  sleepstudy = list(sleep, Reaction ~ Days + (Days | Subject), 5),
  study = list(study, empathy ~ trait + week + (1 + week | participant) + (1 | story), 5),
  insteval2 = list(inst, y ~ service + (1 | s) + (1 | d), 3),
  insteval3 = list(inst, y ~ service + (1 | s) + (1 | d) + (1 | dept), 3),
  insteval2_5k = list(inst[1:5000, ], y ~ service + (1 | s) + (1 | d), 5),
  insteval3_5k = list(inst[1:5000, ], y ~ service + (1 | s) + (1 | d) + (1 | dept), 5),
  slope10k = list(slope10k, y ~ x + (1 + x | person) + (1 | item), 5),
  slope1m = list(slope1m, y ~ x + (1 + x | person) + (1 | item), 1)
)

rows <- list()
for (name in names(cases)) {
  d <- cases[[name]][[1]]
  f <- cases[[name]][[2]]
  k <- cases[[name]][[3]]
  seconds <- numeric(k)
  for (i in seq_len(k)) {
    seconds[i] <- system.time(m <- lme4::lmer(f, data = d, REML = TRUE))[["elapsed"]]
  }
  with_df <- numeric(k)
  for (i in seq_len(k)) {
    with_df[i] <- system.time({
      mt <- lmerTest::lmer(f, data = d, REML = TRUE)
      st <- summary(mt, ddf = "Satterthwaite")
    })[["elapsed"]]
  }
  rows[[name]] <- data.frame(
    case = name,
    seconds = median(seconds),
    runs = k,
    reml_criterion = format(REMLcrit(m), digits = 15),
    lmertest_seconds = median(with_df),
    evaluations = m@optinfo$feval,
    date = format(Sys.Date()),
    r_version = R.version.string,
    lme4 = as.character(packageVersion("lme4")),
    lmertest = as.character(packageVersion("lmerTest"))
  )
}
write.csv(do.call(rbind, rows), file.path(data_dir, "lme4_timings.csv"), row.names = FALSE)
