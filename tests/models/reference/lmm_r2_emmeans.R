# R-squared and estimated marginal means of LinearMixedModel (models/lmm/_r2.py,
# models/lmm/_emmeans.py), written to lmm_r2_emmeans.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/lmm_r2_emmeans.R
# r2mlm (0.3.8, not in Debian) is read from the library /work/Rlib when it is installed there
# (R CMD INSTALL -l /work/Rlib <r2mlm source>); otherwise from the default libraries.
#
# Data: lme4::sleepstudy, nlme::Orthodont and datasets::ChickWeight (tests/data). Person-mean
# centred predictors: x_w = x - the subject's mean of x, x_b = the subject's mean of x.
# R-squared: r2mlm::r2mlm (Rights & Sterba 2019) and performance::r2_nakagawa. Marginal means:
# emmeans with lmer.df = "satterthwaite" (lmerTest::calcSatterth) and "kenward-roger"
# (pbkrtest::vcovAdj and Lb_ddf); contrasts with summary(..., infer = c(TRUE, TRUE)).
# REML fits converged tightly (BOBYQA, rhoend = 1e-10) as in lmm.R.

suppressPackageStartupMessages({
  if (dir.exists("/work/Rlib")) .libPaths(c("/work/Rlib", .libPaths()))
  library(lme4)
  library(lmerTest)
  library(pbkrtest)
  library(emmeans)
  library(performance)
  library(r2mlm)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

ctrl <- lmerControl(
  optimizer = "bobyqa",
  optCtrl = list(rhoend = 1e-10, maxfun = 1e6),
  check.conv.singular = "ignore"
)
num <- function(x) unname(as.numeric(x))
centre <- function(d, x, g) {
  mb <- ave(d[[x]], d[[g]], FUN = mean)
  d[[paste0(x, "_w")]] <- d[[x]] - mb
  d[[paste0(x, "_b")]] <- mb
  d
}

sleep <- read.csv(file.path(data_dir, "lme4_sleepstudy.csv"))
sleep$Subject <- factor(sleep$Subject)
sleep <- centre(sleep, "Days", "Subject")

orth <- read.csv(file.path(data_dir, "nlme_Orthodont.csv"))
orth$Subject <- factor(orth$Subject)
orth$Sex <- factor(orth$Sex, levels = c("Female", "Male"))
orth$Male <- as.numeric(orth$Sex == "Male")
orth$agef <- factor(orth$age, levels = c(8, 10, 12, 14))
orth <- centre(orth, "age", "Subject")

chick <- read.csv(file.path(data_dir, "datasets_ChickWeight.csv"))
chick$Chick <- factor(chick$Chick)
chick$Diet <- factor(chick$Diet, levels = 1:4)
for (k in 2:4) chick[[paste0("D", k)]] <- as.numeric(chick$Diet == k)
chick <- centre(chick, "Time", "Chick")

# --- R-squared -------------------------------------------------------------------------------
# r2mlm needs numeric predictors (dummies D2-D4, Male) and the cluster last in the formula;
# r2_nakagawa gets the same model. `python` is the formula fitted in Python (factors as such).
r2_cases <- list(
  sleep_within = list(sleep, Reaction ~ Days_w + (Days_w | Subject),
                      "Reaction ~ Days_w + (Days_w | Subject)"),
  orthodont_centred = list(orth, distance ~ age_w * Male + (age_w | Subject),
                           "distance ~ age_w * Sex + (age_w | Subject)"),
  orthodont_raw = list(orth, distance ~ age * Male + (age | Subject),
                       "distance ~ age * Sex + (age | Subject)"),
  chick_centred = list(chick, weight ~ Time_w + Time_b + D2 + D3 + D4 + (Time_w | Chick),
                       "weight ~ Time_w + Time_b + Diet + (Time_w | Chick)"),
  chick_intercept = list(chick, weight ~ Time_w + Time_b + D2 + D3 + D4 + (1 | Chick),
                         "weight ~ Time_w + Time_b + Diet + (1 | Chick)"),
  chick_raw = list(chick, weight ~ Time + D2 + D3 + D4 + (Time | Chick),
                   "weight ~ Time + Diet + (Time | Chick)")
)

r2_table <- function(tab) {
  out <- list()
  for (col in colnames(tab)) {
    vals <- tab[, col]
    keep <- !is.na(vals)
    out[[col]] <- as.list(setNames(num(vals[keep]), rownames(tab)[keep]))
  }
  out
}

r2 <- list()
for (name in names(r2_cases)) {
  d <- r2_cases[[name]][[1]]
  m <- lme4::lmer(r2_cases[[name]][[2]], data = d, REML = TRUE, control = ctrl)
  rs <- r2mlm(m, bargraph = FALSE)$R2s
  nk <- performance::r2_nakagawa(m)
  tabs <- r2_table(rs)
  r2[[name]] <- list(
    formula = r2_cases[[name]][[3]],
    rights_sterba = list(
      total = tabs[["total"]],
      within = if (is.null(tabs[["within"]])) setNames(list(), character(0)) else tabs[["within"]],
      between = if (is.null(tabs[["between"]])) setNames(list(), character(0)) else tabs[["between"]]
    ),
    nakagawa = list(marginal = num(nk$R2_marginal), conditional = num(nk$R2_conditional))
  )
}

# --- estimated marginal means ----------------------------------------------------------------
em_frame <- function(s, factors) {
  s <- as.data.frame(s)
  out <- list()
  for (f in factors) out[[f]] <- as.character(s[[f]])
  out$emmean <- num(s$emmean)
  out$se <- num(s$SE)
  out$df <- num(s$df)
  out$ci_low <- num(s$lower.CL)
  out$ci_high <- num(s$upper.CL)
  lapply(out, I) # arrays even with one row
}
con_frame <- function(s, by) {
  s <- as.data.frame(s)
  out <- list(contrast = as.character(s$contrast))
  for (f in by) out[[f]] <- as.character(s[[f]])
  out$estimate <- num(s$estimate)
  out$se <- num(s$SE)
  out$df <- num(s$df)
  out$statistic <- num(s$t.ratio)
  out$p_value <- num(s$p.value)
  out$ci_low <- num(s$lower.CL)
  out$ci_high <- num(s$upper.CL)
  lapply(out, I) # arrays even with one row
}

em_cases <- list(
  orthodont_sex = list(orth, distance ~ age * Sex + (age | Subject),
                       "distance ~ age * Sex + (age | Subject)", "Sex", NULL, NULL,
                       list(c("pairwise", "tukey"), c("pairwise", "none"))),
  chick_diet = list(chick, weight ~ Time * Diet + (Time | Chick),
                    "weight ~ Time * Diet + (Time | Chick)", "Diet", NULL, NULL,
                    list(c("pairwise", "tukey"), c("pairwise", "bonferroni"),
                         c("pairwise", "holm"), c("trt.vs.ctrl", "dunnettx"),
                         c("consec", "holm"), c("poly", "none"))),
  chick_diet_by_time = list(chick, weight ~ Time * Diet + (Time | Chick),
                            "weight ~ Time * Diet + (Time | Chick)", "Diet", "Time",
                            list(Time = c(10, 20)),
                            list(c("pairwise", "tukey"), c("trt.vs.ctrl", "dunnettx"))),
  orthodont_agef = list(orth, distance ~ agef * Sex + (1 | Subject),
                        "distance ~ agef * Sex + (1 | Subject)", "agef", NULL, NULL,
                        list(c("pairwise", "tukey"), c("poly", "none"),
                             c("consec", "bonferroni"))),
  orthodont_agef_by_sex = list(orth, distance ~ agef * Sex + (1 | Subject),
                               "distance ~ agef * Sex + (1 | Subject)", "agef", "Sex", NULL,
                               list(c("pairwise", "tukey"), c("trt.vs.ctrl", "dunnettx")))
)

emm <- list()
for (name in names(em_cases)) {
  cs <- em_cases[[name]]
  m <- lmerTest::lmer(cs[[2]], data = cs[[1]], REML = TRUE, control = ctrl)
  for (mode in c("satterthwaite", "kenward-roger")) {
    e <- emmeans(m, specs = cs[[4]], by = cs[[5]], at = cs[[6]], lmer.df = mode)
    contrasts <- list()
    for (cm in cs[[7]]) {
      con <- contrast(e, method = cm[1], adjust = cm[2])
      contrasts[[paste(cm, collapse = "/")]] <- c(
        list(method = cm[1], adjust = cm[2]),
        con_frame(summary(con, infer = c(TRUE, TRUE)), cs[[5]])
      )
    }
    emm[[paste(name, mode, sep = "/")]] <- list(
      formula = cs[[3]], specs = cs[[4]], by = cs[[5]], at = cs[[6]], df = mode,
      emmeans = em_frame(summary(e), c(cs[[4]], cs[[5]])),
      contrasts = contrasts
    )
  }
}

out <- list(
  generated = format(Sys.Date()),
  r_version = R.version.string,
  packages = list(
    lme4 = as.character(packageVersion("lme4")),
    lmerTest = as.character(packageVersion("lmerTest")),
    pbkrtest = as.character(packageVersion("pbkrtest")),
    emmeans = as.character(packageVersion("emmeans")),
    performance = as.character(packageVersion("performance")),
    insight = as.character(packageVersion("insight")),
    r2mlm = as.character(packageVersion("r2mlm"))
  ),
  r2 = r2,
  emmeans = emm
)
writeLines(
  toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"),
  file.path(here, "lmm_r2_emmeans.json")
)
