# Reference values for tests/longitudinal/cli/test_cli_score.py.
#
# 1. Simulates a long survey export (40 participants x waves pre/mid/post; TAS-4 items 1-5,
#    WHO-5 items 0-5, no missing cells) and writes it to tests/data/raw/tas4_who5_long.csv.
# 2. Writes, per instrument x scale x wave, Cronbach's alpha from psych::alpha and n, and per
#    participant x wave the scale scores (TAS-4 mean, WHO-5 raw sum and sum x 4), to
#    cli_score_alpha.csv and cli_score_scores.csv beside this script.
#
# Run from the repository root: Rscript tests/longitudinal/reference/cli_score.R
suppressPackageStartupMessages(library(psych))

set.seed(20240611)
n <- 40
waves <- c("pre", "mid", "post")
rows <- list()
for (w in waves) {
  absorption <- rnorm(n)
  wellbeing <- rnorm(n)
  tas <- sapply(1:4, function(k) pmin(5, pmax(1, round(3 + 0.9 * absorption + rnorm(n, sd = 0.8)))))
  who <- sapply(1:5, function(k) pmin(5, pmax(0, round(2.5 + 1.1 * wellbeing + rnorm(n, sd = 0.9)))))
  colnames(tas) <- paste0("tas4_", 1:4)
  colnames(who) <- paste0("who5_", 1:5)
  rows[[w]] <- data.frame(participant_id = sprintf("P%03d", 1:n), wave = w, tas, who)
}
data <- do.call(rbind, rows)
write.csv(data, "tests/data/raw/tas4_who5_long.csv", row.names = FALSE, quote = FALSE)

header <- c(
  sprintf("# generated %s by tests/longitudinal/reference/cli_score.R", format(Sys.Date())),
  sprintf("# %s; psych %s", R.version.string, as.character(packageVersion("psych")))
)

alpha_rows <- list()
score_rows <- list()
for (w in waves) {
  d <- data[data$wave == w, ]
  tas <- d[, paste0("tas4_", 1:4)]
  who <- d[, paste0("who5_", 1:5)]
  a_tas <- psych::alpha(tas, warnings = FALSE)$total$raw_alpha
  a_who <- psych::alpha(who, warnings = FALSE)$total$raw_alpha
  alpha_rows[[length(alpha_rows) + 1]] <- data.frame(
    instrument = c("tas4", "who5", "who5"), scale = c("absorption", "raw", "percentage"),
    wave = w, n = nrow(d), alpha = c(a_tas, a_who, a_who))
  score_rows[[length(score_rows) + 1]] <- data.frame(
    id = rep(d$participant_id, 3), wave = w,
    instrument = rep(c("tas4", "who5", "who5"), each = nrow(d)),
    scale = rep(c("absorption", "raw", "percentage"), each = nrow(d)),
    score = c(rowMeans(tas), rowSums(who), 4 * rowSums(who)))
}
write_ref <- function(frame, file) {
  num <- vapply(frame, is.double, logical(1))
  frame[num] <- lapply(frame[num], function(x) format(x, digits = 15, trim = TRUE))
  path <- file.path("tests/longitudinal/reference", file)
  writeLines(header, path)
  suppressWarnings(write.table(frame, path, sep = ",", row.names = FALSE, quote = FALSE,
                               append = TRUE))
}
write_ref(do.call(rbind, alpha_rows), "cli_score_alpha.csv")
write_ref(do.call(rbind, score_rows), "cli_score_scores.csv")
