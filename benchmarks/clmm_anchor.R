# One ordinal::clmm fit of the insteval400 case, timed for benchmarks/bench_ordinal.py --r, so
# that the command line's whole-process time is compared with clmm's time in the same run.
#
#   Rscript benchmarks/clmm_anchor.R [runs]
#
# Prints one line: "seconds,cpu_seconds,loglik": the median wall time and the median CPU time
# (user + system) of the fits, clmm's default controls. On a shared, loaded machine the CPU
# time is the steadier of the two.

suppressPackageStartupMessages(library(ordinal))
args <- commandArgs(trailingOnly = TRUE)
runs <- if (length(args)) as.integer(args[1]) else 1L
inst <- read.csv(file.path("benchmarks", "data", "insteval.csv"))
inst <- inst[inst$s %in% sort(unique(inst$s))[1:400], ]
inst$y <- factor(inst$y, ordered = TRUE)
inst$s <- factor(inst$s); inst$d <- factor(inst$d); inst$service <- factor(inst$service)
times <- numeric(runs)
cpu <- numeric(runs)
for (i in seq_len(runs)) {
  took <- system.time(m <- clmm(y ~ service + (1 | s) + (1 | d), data = inst))
  times[i] <- took[["elapsed"]]
  cpu[i] <- took[["user.self"]] + took[["sys.self"]]
}
cat(sprintf("%.3f,%.3f,%s\n", median(times), median(cpu), format(as.numeric(logLik(m)), digits = 12)))
