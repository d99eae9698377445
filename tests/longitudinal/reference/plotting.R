# Reference values for longitudinal/plotting/: within-subject confidence intervals
# (Cousineau 2005 normalisation with the Morey 2008 correction) and the t interval of a mean
# across participants, computed with base R.
#
# Run from the repository root:
#     Rscript tests/longitudinal/reference/plotting.R
# Writes tests/longitudinal/reference/plotting_reference.csv with the columns
#     analysis, wave, quantity, value
# (value printed with format(x, digits = 15)); header lines start with "#".
#
# Data: tests/data/carData_OBrienKaiser.csv (carData::OBrienKaiser, see tests/data/README.md).
# The outcome of each phase is the mean of its five hourly scores.

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))
out_file <- file.path(here, "plotting_reference.csv")

ok <- read.csv(file.path(data_dir, "carData_OBrienKaiser.csv"))
phase <- function(prefix) rowMeans(ok[, paste0(prefix, ".", 1:5)])
wide <- cbind(pre = phase("pre"), post = phase("post"), fup = phase("fup"))
n <- nrow(wide)
k <- ncol(wide)

rows <- list()
add <- function(analysis, wave, quantity, value) {
  rows[[length(rows) + 1]] <<- data.frame(
    analysis = analysis, wave = wave, quantity = quantity,
    value = format(as.numeric(value), digits = 15), stringsAsFactors = FALSE
  )
}

# Cousineau-Morey: y_ij - mean_i + grand mean; se_j = sd_j / sqrt(n) * sqrt(k / (k - 1))
normalised <- wide - rowMeans(wide) + mean(wide)
se <- apply(normalised, 2, sd) / sqrt(n) * sqrt(k / (k - 1))
half <- qt(0.975, n - 1) * se
est <- colMeans(wide)
for (w in colnames(wide)) {
  add("within_subject_ci", w, "n", n)
  add("within_subject_ci", w, "estimate", est[[w]])
  add("within_subject_ci", w, "se", se[[w]])
  add("within_subject_ci", w, "ci_low", est[[w]] - half[[w]])
  add("within_subject_ci", w, "ci_high", est[[w]] + half[[w]])
}

# t interval across participants (as t.test) of the pre means, at 90%
tt <- t.test(wide[, "pre"], conf.level = 0.90)
add("t_interval_90", "pre", "estimate", tt$estimate)
add("t_interval_90", "pre", "ci_low", tt$conf.int[1])
add("t_interval_90", "pre", "ci_high", tt$conf.int[2])

out <- do.call(rbind, rows)
header <- c(
  "# Reference values for tests/longitudinal/plotting/test_plotting.py",
  paste0("# generated ", format(Sys.Date()), " by tests/longitudinal/reference/plotting.R"),
  paste0("# ", R.version.string, "; base R only (stats::sd, stats::qt, stats::t.test)")
)
writeLines(header, out_file)
suppressWarnings(write.table(out, out_file, sep = ",", row.names = FALSE, quote = FALSE,
                             append = TRUE))
cat("wrote", out_file, "\n")
