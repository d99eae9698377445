# Reference values for longitudinal/predict/variance_explained.py: the R-squared of the report's
# empathy model (crossed: participant and story) and the within/between split of the same
# predictors in the two-level model (participant random effects only), written to
# empathy_r2.json beside this script.
#
# Run from the repository root:  Rscript tests/longitudinal/reference/empathy_r2.R
# r2mlm (0.3.8, not in Debian) is read from /work/Rlib when it is installed there.
#
# Data: empathy_r2_demo.csv beside this script, the model frame of the demo study (seed 2024,
# `longitudinal demo`): one row per rating with participant_id, story_id, the rating
# (empathy) and every predictor of the report's empathy model as the package builds it
# (empathy_data(study)[[id, story_id, empathy, *terms()]], written with 12 significant digits).
#
# 1. The report's model, lmer(empathy ~ predictors + (1 + week | participant_id) +
#    (1 | story_id)): performance::r2_nakagawa and insight::get_variance; the story share is
#    the story intercept's variance over var.fixed + var.random + var.residual.
# 2. The split: a predictor whose every person mean is 0 is within-person, one constant within
#    every person between-person (both to 1e-9 of its largest absolute value), any other is
#    replaced by its deviation from the person's mean over these ratings (_w) and that mean
#    (_b). The two-level model: lmer(empathy ~ predictors, split + (1 + week_w |
#    participant_id)), r2mlm::r2mlm (Rights & Sterba 2019) and r2_nakagawa.
# REML fits converged tightly (BOBYQA, rhoend = 1e-10).

suppressPackageStartupMessages({
  if (dir.exists("/work/Rlib")) .libPaths(c("/work/Rlib", .libPaths()))
  library(lme4)
  library(performance)
  library(insight)
  library(r2mlm)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)

ctrl <- lmerControl(
  optimizer = "bobyqa",
  optCtrl = list(rhoend = 1e-10, maxfun = 1e6),
  check.conv.singular = "ignore"
)
num <- function(x) unname(as.numeric(x))

d <- read.csv(file.path(here, "empathy_r2_demo.csv"), stringsAsFactors = FALSE)
d$participant_id <- factor(d$participant_id)
d$story_id <- factor(d$story_id)
predictors <- setdiff(names(d), c("participant_id", "story_id", "empathy"))

# --- 1. the report's crossed model -----------------------------------------------------------
crossed_formula <- as.formula(paste(
  "empathy ~", paste(predictors, collapse = " + "),
  "+ (1 + week | participant_id) + (1 | story_id)"
))
crossed <- lmer(crossed_formula, data = d, REML = TRUE, control = ctrl)
nk <- performance::r2_nakagawa(crossed)
v <- insight::get_variance(crossed)
total <- v$var.fixed + v$var.random + v$var.residual
story_share <- v$var.intercept[["story_id"]] / total

# --- 2. the split and the two-level model ----------------------------------------------------
level <- function(x, g) {
  scale <- max(abs(x))
  means <- ave(x, g, FUN = mean)
  if (max(abs(tapply(x, g, mean))) <= 1e-9 * scale) return("within")
  if (max(abs(x - means)) <= 1e-9 * scale) return("between")
  "both"
}
kinds <- vapply(predictors, function(p) level(d[[p]], d$participant_id), "")
split <- predictors[kinds == "both"]
terms <- character(0)
for (p in predictors) {
  if (p %in% split) {
    mb <- ave(d[[p]], d$participant_id, FUN = mean)
    d[[paste0(p, "_w")]] <- d[[p]] - mb
    d[[paste0(p, "_b")]] <- mb
    terms <- c(terms, paste0(p, "_w"), paste0(p, "_b"))
  } else {
    terms <- c(terms, p)
  }
}
two_level_formula <- as.formula(paste(
  "empathy ~", paste(terms, collapse = " + "), "+ (1 + week_w | participant_id)"
))
two_level <- lmer(two_level_formula, data = d, REML = TRUE, control = ctrl)
rs <- r2mlm(two_level, bargraph = FALSE)$R2s
nk2 <- performance::r2_nakagawa(two_level)

r2_table <- function(tab) {
  out <- list()
  for (col in colnames(tab)) {
    vals <- tab[, col]
    keep <- !is.na(vals)
    out[[col]] <- as.list(setNames(num(vals[keep]), rownames(tab)[keep]))
  }
  out
}
tabs <- r2_table(rs)

out <- list(
  generated = format(Sys.Date()),
  r_version = R.version.string,
  packages = list(
    lme4 = as.character(packageVersion("lme4")),
    performance = as.character(packageVersion("performance")),
    insight = as.character(packageVersion("insight")),
    r2mlm = as.character(packageVersion("r2mlm"))
  ),
  n_ratings = nrow(d),
  n_participants = nlevels(d$participant_id),
  crossed = list(
    formula = gsub("\\s+", " ", paste(deparse(crossed_formula, width.cutoff = 500L), collapse = " ")),
    nakagawa = list(marginal = num(nk$R2_marginal), conditional = num(nk$R2_conditional)),
    variances = list(
      fixed = num(v$var.fixed), random = num(v$var.random), residual = num(v$var.residual),
      story_id = num(v$var.intercept[["story_id"]])
    ),
    story_share = num(story_share),
    singular = isSingular(crossed)
  ),
  split = as.list(split),
  two_level = list(
    formula = gsub("\\s+", " ", paste(deparse(two_level_formula, width.cutoff = 500L), collapse = " ")),
    rights_sterba = list(total = tabs[["total"]], within = tabs[["within"]],
                         between = tabs[["between"]]),
    nakagawa = list(marginal = num(nk2$R2_marginal), conditional = num(nk2$R2_conditional)),
    singular = isSingular(two_level)
  )
)
writeLines(
  toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"),
  file.path(here, "empathy_r2.json")
)
