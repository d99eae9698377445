# Reference values for models.multilevel_reliability (psych::mlr parity), written to
# multilevel_reliability.json beside this script, with the data sets it reads or makes.
#
# Run from the repository root:  Rscript tests/models/reference/multilevel_reliability.R
#
# Data sets
# - shrout: Shrout & Lane (2012)'s example as printed in psych's ?mlr (5 persons x 4 times x
#   3 items), balanced and complete: crossed components by ANOVA (psych's default).
# - shrout_missing: the same with four answers removed (unbalanced): psych's lmer = TRUE.
# - vale: psychTools `sai`, study VALE, six state-anxiety items (calm and relaxed reverse
#   keyed, answers 1-4); the participants with every item at all four times (balanced,
#   ANOVA), and every VALE row with its missing answers and occasions (REML, lmer = TRUE).
# - negative: simulated here (set.seed(36)), 12 persons x 3 occasions x 4 items with no
#   occasion or occasion x item variance, so ANOVA gives negative components (kept by psych).
#
# psych reverses keyed items ("-calm") from the observed minimum and maximum of all the
# scale's items; the VALE items use their full declared range 1-4 in these data, so the
# observed and declared rules agree here.
#
# The nested components (id, time within id, residual) are psych's nlme::lme REML fit in
# every case; with lmer = TRUE the crossed components are lme4::lmer REML with lme4's
# default optimizer settings (as psych calls it).

suppressPackageStartupMessages({
  library(psych)
  library(psychTools)
  library(lme4)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

shrout <- data.frame(
  Person = rep(1:5, 4), Time = rep(1:4, each = 5),
  Item1 = c(2, 3, 6, 3, 7, 3, 5, 6, 3, 8, 4, 4, 7, 5, 6, 1, 5, 8, 8, 6),
  Item2 = c(3, 4, 6, 4, 8, 3, 7, 7, 5, 8, 2, 6, 8, 6, 7, 3, 9, 9, 7, 8),
  Item3 = c(6, 4, 5, 3, 7, 4, 7, 8, 9, 9, 5, 7, 9, 7, 8, 4, 7, 9, 9, 6)
)
shrout_missing <- shrout
shrout_missing$Item1[c(2, 13)] <- NA
shrout_missing$Item2[7] <- NA
shrout_missing$Item3[20] <- NA

data(sai, package = "psychTools")
vale_items <- c("calm", "tense", "anxious", "nervous", "jittery", "relaxed")
vale_all <- sai[sai$study == "VALE", c("id", "time", vale_items)]
rownames(vale_all) <- NULL
complete <- vale_all[complete.cases(vale_all), ]
everywhere <- names(which(table(complete$id) == 4))
vale_balanced <- complete[complete$id %in% everywhere, ]
rownames(vale_balanced) <- NULL
vale_keys <- c("-calm", "tense", "anxious", "nervous", "jittery", "-relaxed")

set.seed(36)
n_p <- 12; n_t <- 3; n_i <- 4
grid <- expand.grid(item = 1:n_i, time = 1:n_t, id = 1:n_p)
person <- rnorm(n_p, 0, 1)
item <- rnorm(n_i, 0, 0.5)
pxi <- matrix(rnorm(n_p * n_i, 0, 0.3), n_p)
pxt <- matrix(rnorm(n_p * n_t, 0, 0.4), n_p)
grid$value <- round(3 + person[grid$id] + item[grid$item] + pxi[cbind(grid$id, grid$item)] +
  pxt[cbind(grid$id, grid$time)] + rnorm(nrow(grid), 0, 0.6), 2)
negative <- reshape(grid, idvar = c("id", "time"), timevar = "item", direction = "wide",
                    v.names = "value")
names(negative) <- c("time", "id", paste0("q", 1:n_i))
negative <- negative[order(negative$id, negative$time), c("id", "time", paste0("q", 1:n_i))]
rownames(negative) <- NULL

num <- function(x) unname(as.numeric(x))
one <- function(name, data, grp, time, items, lmer = FALSE) {
  m <- mlr(data, grp = grp, Time = time, items = items, alpha = FALSE, lmer = lmer)
  comp <- m$components
  list(
    name = name,
    method = if (lmer) "reml" else "anova",
    n_persons = m$n.obs, n_occasions = m$n.time, n_items = m$n.items,
    RkF = num(m$RkF), R1R = num(m$R1R), RkR = num(m$RkR), Rc = num(m$Rc),
    RkRn = num(m$RkRn), Rcn = num(m$Rcn),
    crossed = list(
      person = comp["ID", 1], occasion = comp["Time", 1], item = comp["Items", 1],
      person_x_occasion = comp["ID x time", 1], person_x_item = comp["ID x items", 1],
      occasion_x_item = comp["time x items", 1], residual = comp["Residual", 1]
    ),
    nested = list(
      person = comp["id", 1], occasion_in_person = comp["id(time)", 1],
      residual = comp["residual", 1]
    )
  )
}

results <- list(
  one("shrout", shrout, "Person", "Time", 3:5),
  one("shrout_missing", shrout_missing, "Person", "Time", 3:5, lmer = TRUE),
  one("vale_balanced", vale_balanced, "id", "time", vale_keys),
  one("vale_all", vale_all, "id", "time", vale_keys, lmer = TRUE),
  suppressWarnings(one("negative", negative, "id", "time", 3:6))
)

write.csv(shrout, file.path(here, "mlr_shrout.csv"), row.names = FALSE)
write.csv(shrout_missing, file.path(here, "mlr_shrout_missing.csv"), row.names = FALSE,
          na = "")
write.csv(vale_all, file.path(here, "mlr_sai_vale.csv"), row.names = FALSE, na = "")
write.csv(negative, file.path(here, "mlr_negative.csv"), row.names = FALSE)

out <- list(
  created = format(Sys.time(), "%Y-%m-%d", tz = "UTC"),
  R = R.version.string,
  packages = list(
    psych = as.character(packageVersion("psych")),
    psychTools = as.character(packageVersion("psychTools")),
    lme4 = as.character(packageVersion("lme4")),
    nlme = as.character(packageVersion("nlme"))
  ),
  vale_balanced_ids = as.integer(everywhere),
  results = results
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE),
           file.path(here, "multilevel_reliability.json"))
