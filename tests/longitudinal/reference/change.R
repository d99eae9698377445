# Reference values for longitudinal/change.py (pre/mid/post change analysis).
#
# Run from the repository root:
#     Rscript tests/longitudinal/reference/change.R
# Writes tests/longitudinal/reference/change_reference.csv with the columns
#     dataset, analysis, term, quantity, value
# (value printed with format(x, digits = 15)); header lines start with "#".
#
# Data (tests/data/, see tests/data/README.md): carData::OBrienKaiser (wide and long),
# datasets::sleep, MASS::anorexia, psychTools::affect; and growth_simulated.csv beside this
# script (ten simulated three-wave data sets written by simulate() in
# tests/longitudinal/change/test_change.py, whose test checks that the file still matches it).

suppressPackageStartupMessages({
  library(car)
  library(psych)
  library(lme4)
  library(lmerTest)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))
out_file <- file.path(here, "change_reference.csv")

rows <- list()
add <- function(dataset, analysis, term, quantity, value) {
  rows[[length(rows) + 1]] <<- data.frame(
    dataset = dataset, analysis = analysis, term = term, quantity = quantity,
    value = format(as.numeric(value), digits = 15), stringsAsFactors = FALSE
  )
}

# ---------------------------------------------------------------------------------------------
# One within factor: car::Anova on lm(cbind(...) ~ 1), univariate tests + sphericity.
# ---------------------------------------------------------------------------------------------
rm_reference <- function(dataset, Y, levels) {
  colnames(Y) <- levels
  fit <- lm(Y ~ 1)
  idata <- data.frame(wave = factor(levels, levels = levels))
  av <- Anova(fit, idata = idata, idesign = ~wave, type = "III")
  s <- summary(av, multivariate = FALSE)
  u <- s$univariate.tests["wave", ]
  add(dataset, "rm_anova", "wave", "ss_effect", u[["Sum Sq"]])
  add(dataset, "rm_anova", "wave", "ss_error", u[["Error SS"]])
  add(dataset, "rm_anova", "wave", "df1", u[["num Df"]])
  add(dataset, "rm_anova", "wave", "df2", u[["den Df"]])
  add(dataset, "rm_anova", "wave", "F", u[["F value"]])
  add(dataset, "rm_anova", "wave", "p_value", u[["Pr(>F)"]])
  add(dataset, "rm_anova", "wave", "n", nrow(Y))
  # subject stratum of the univariate split-plot ANOVA (for generalized eta squared)
  long <- data.frame(id = factor(rep(seq_len(nrow(Y)), times = ncol(Y))),
                     wave = factor(rep(levels, each = nrow(Y)), levels = levels),
                     y = as.vector(Y))
  strata <- summary(aov(y ~ wave + Error(id / wave), data = long))
  add(dataset, "rm_anova", "wave", "ss_subjects", strata[["Error: id"]][[1]][["Sum Sq"]][1])
  if (ncol(Y) > 2) {
    sph <- s$sphericity.tests["wave", ]
    adj <- s$pval.adjustments["wave", ]
    add(dataset, "rm_anova", "wave", "mauchly_W", sph[["Test statistic"]])
    add(dataset, "rm_anova", "wave", "mauchly_p", sph[["p-value"]])
    add(dataset, "rm_anova", "wave", "gg_epsilon", adj[["GG eps"]])
    add(dataset, "rm_anova", "wave", "gg_p_value", adj[["Pr(>F[GG])"]])
    add(dataset, "rm_anova", "wave", "hf_epsilon", adj[["HF eps"]])
    add(dataset, "rm_anova", "wave", "hf_p_value", adj[["Pr(>F[HF])"]])
    # stats::mauchly.test on the same multivariate fit (contrasts orthogonal to the mean)
    mt <- mauchly.test(fit, X = ~1)
    add(dataset, "rm_anova", "wave", "stats_mauchly_W", mt$statistic)
    add(dataset, "rm_anova", "wave", "stats_mauchly_p", mt$p.value)
    # chi-square statistic of Mauchly's test as computed inside stats/car:
    # -df * rho * log(W), rho = 1 - (2p^2 + p + 2) / (6 p df), p = k - 1, df = n - 1
    p <- ncol(Y) - 1
    df <- nrow(Y) - 1
    rho <- 1 - (2 * p^2 + p + 2) / (6 * p * df)
    add(dataset, "rm_anova", "wave", "mauchly_chi2", -df * rho * log(mt$statistic))
    add(dataset, "rm_anova", "wave", "mauchly_df", p * (p + 1) / 2 - 1)
  }
  ft <- friedman.test(Y)
  add(dataset, "friedman", "wave", "statistic", ft$statistic)
  add(dataset, "friedman", "wave", "df", ft$parameter)
  add(dataset, "friedman", "wave", "p_value", ft$p.value)
  add(dataset, "friedman", "wave", "kendall_w", ft$statistic / (nrow(Y) * (ncol(Y) - 1)))
  add(dataset, "friedman", "wave", "n", nrow(Y))
}

# ---------------------------------------------------------------------------------------------
# Paired comparisons: t.test(later, earlier, paired = TRUE), Holm, d_z and g_av with CIs.
# ---------------------------------------------------------------------------------------------
dz_ci <- function(t, df, level = 0.95) {
  # Noncentral-t inversion (Steiger & Fouladi 1997): ncp with P(T <= t | ncp) = 1 - a/2 and a/2.
  a <- 1 - level
  width <- 10 + 2 * abs(t)
  # pt() with a noncentrality parameter (AS 243) may warn that "full precision may not have
  # been achieved" in the far tail while the root is searched; the warnings are counted and
  # written out so the test can choose its tolerance.
  n_warn <- 0
  pt_count <- function(ncp) withCallingHandlers(pt(t, df, ncp), warning = function(w) {
    n_warn <<- n_warn + 1
    invokeRestart("muffleWarning")
  })
  f <- function(ncp, target) pt_count(ncp) - target
  lo <- uniroot(f, c(t - width, t + width), target = 1 - a / 2, tol = 1e-14)$root
  hi <- uniroot(f, c(t - width, t + width), target = a / 2, tol = 1e-14)$root
  # precision of pt() at the two roots themselves
  n_warn <- 0
  invisible(pt_count(lo))
  invisible(pt_count(hi))
  c(c(lo, hi) / sqrt(df + 1), n_warn)
}

hedges_j <- function(df) exp(lgamma(df / 2) - 0.5 * log(df / 2) - lgamma((df - 1) / 2))

pair_reference <- function(dataset, earlier, later, term, level = 0.95) {
  tt <- t.test(later, earlier, paired = TRUE, conf.level = level)
  d <- later - earlier
  n <- length(d)
  add(dataset, "pairwise", term, "estimate", tt$estimate)
  add(dataset, "pairwise", term, "se", tt$stderr)
  add(dataset, "pairwise", term, "df", tt$parameter)
  add(dataset, "pairwise", term, "statistic", tt$statistic)
  add(dataset, "pairwise", term, "p_value", tt$p.value)
  add(dataset, "pairwise", term, "ci_low", tt$conf.int[1])
  add(dataset, "pairwise", term, "ci_high", tt$conf.int[2])
  add(dataset, "pairwise", term, "n", n)
  dz <- mean(d) / sd(d)
  ci <- dz_ci(unname(tt$statistic), n - 1, level)
  add(dataset, "d_z", term, "estimate", dz)
  add(dataset, "d_z", term, "ci_low", ci[1])
  add(dataset, "d_z", term, "ci_high", ci[2])
  add(dataset, "d_z", term, "pt_precision_warnings_at_root", ci[3])
  # g_av = J(n - 1) * mean(d) / ((s1 + s2) / 2); delta-method SE (normal theory):
  # var(d_av) = s_d^2 / (n s_av^2) + d_av^2 (s1^2 + s2^2 + 2 r^2 s1 s2) / (8 (n - 1) s_av^2)
  s1 <- sd(earlier)
  s2 <- sd(later)
  r <- cor(earlier, later)
  sav <- (s1 + s2) / 2
  dav <- mean(d) / sav
  v <- var(d) / (n * sav^2) + dav^2 * (s1^2 + s2^2 + 2 * r^2 * s1 * s2) / (8 * (n - 1) * sav^2)
  j <- hedges_j(n - 1)
  g <- j * dav
  se <- j * sqrt(v)
  z <- qnorm(1 - (1 - level) / 2)
  add(dataset, "g_av", term, "estimate", g)
  add(dataset, "g_av", term, "se", se)
  add(dataset, "g_av", term, "ci_low", g - z * se)
  add(dataset, "g_av", term, "ci_high", g + z * se)
  tt$p.value
}

pairs_reference <- function(dataset, Y) {
  k <- ncol(Y)
  lv <- colnames(Y)
  combos <- list()
  for (gap in seq_len(k - 1)) for (i in seq_len(k - gap)) combos[[length(combos) + 1]] <- c(i, i + gap)
  p <- numeric(0)
  terms <- character(0)
  for (cb in combos) {
    term <- paste(lv[cb[2]], "-", lv[cb[1]])
    ok <- complete.cases(Y[, cb])
    p <- c(p, pair_reference(dataset, Y[ok, cb[1]], Y[ok, cb[2]], term))
    terms <- c(terms, term)
  }
  holm <- p.adjust(p, method = "holm")
  for (i in seq_along(terms)) add(dataset, "pairwise", terms[i], "p_holm", holm[i])
}

# ---------------------------------------------------------------------------------------------
# carData::OBrienKaiser: average over hour -> one-factor phase design (pre, post, fup); average
# over phase -> one-factor hour design (5 levels). No between-subject factors.
# ---------------------------------------------------------------------------------------------
okw <- read.csv(file.path(data_dir, "carData_OBrienKaiser.csv"))
phase_levels <- c("pre", "post", "fup")
Yphase <- sapply(phase_levels, function(ph) rowMeans(okw[, paste0(ph, ".", 1:5)]))
Yhour <- sapply(1:5, function(h) rowMeans(okw[, paste0(phase_levels, ".", h)]))
colnames(Yhour) <- paste0("h", 1:5)

rm_reference("obk_phase", Yphase, phase_levels)
rm_reference("obk_hour", Yhour, colnames(Yhour))
pairs_reference("obk_phase", Yphase)

# Same phase design with subject 1 missing 'fup' and subject 5 missing 'post':
# complete cases are the other 14 subjects; pairwise tests use every complete pair.
Ymiss <- Yphase
Ymiss[1, "fup"] <- NA
Ymiss[5, "post"] <- NA
rm_reference("obk_phase_missing", Ymiss[complete.cases(Ymiss), ], phase_levels)
pairs_reference("obk_phase_missing", Ymiss)

# Long data check: the long file averaged over hour must equal the wide one.
okl <- read.csv(file.path(data_dir, "carData_OBrienKaiserLong.csv"))
agg <- aggregate(score ~ id + phase, data = okl, FUN = mean)
stopifnot(isTRUE(all.equal(
  agg$score[order(agg$id, match(agg$phase, phase_levels))], as.vector(t(Yphase))
)))

# Linear growth, REML: score ~ time + (1 + time | id), time = 0, 1, 2 (lme4 + lmerTest).
growth_reference <- function(dataset, Y) {
  long <- data.frame(
    id = rep(seq_len(nrow(Y)), each = ncol(Y)),
    time = rep(seq_len(ncol(Y)) - 1, times = nrow(Y)),
    score = as.vector(t(Y))
  )
  long <- long[!is.na(long$score), ]
  m <- lmerTest::lmer(score ~ time + (1 + time | id), data = long, REML = TRUE,
                      control = lmerControl(optimizer = "bobyqa",
                                            optCtrl = list(maxfun = 1e5)))
  add(dataset, "growth", "model", "singular", as.numeric(isSingular(m)))
  cf <- summary(m)$coefficients
  for (term in rownames(cf)) {
    nm <- if (term == "(Intercept)") "Intercept" else term
    add(dataset, "growth", nm, "estimate", cf[term, "Estimate"])
    add(dataset, "growth", nm, "se", cf[term, "Std. Error"])
    add(dataset, "growth", nm, "df", cf[term, "df"])
    add(dataset, "growth", nm, "statistic", cf[term, "t value"])
    add(dataset, "growth", nm, "p_value", cf[term, "Pr(>|t|)"])
  }
  vc <- as.data.frame(VarCorr(m))
  is_id <- vc$grp == "id"
  add(dataset, "growth", "id: Intercept", "variance",
      vc$vcov[which(is_id & vc$var1 == "(Intercept)" & is.na(vc$var2))])
  add(dataset, "growth", "id: time", "variance",
      vc$vcov[which(is_id & vc$var1 == "time" & is.na(vc$var2))])
  add(dataset, "growth", "id: Intercept, time", "correlation",
      vc$sdcor[which(is_id & !is.na(vc$var2))])
  add(dataset, "growth", "Residual", "variance", vc$vcov[which(vc$grp == "Residual")])
  add(dataset, "growth", "model", "reml_criterion", -2 * as.numeric(logLik(m)))
  add(dataset, "growth", "model", "n_obs", nrow(long))
  add(dataset, "growth", "model", "n_subjects", length(unique(long$id)))
}
growth_reference("obk_phase", Yphase)
growth_reference("obk_phase_missing", Ymiss)

# Singular fits on simulated three-wave data (growth_simulated.csv, written by the Python test
# helper simulate(); seeds 0-9): isSingular() of the random-slope model and, for each seed, the
# fixed effects of the model that growth_model() keeps (random slope unless singular, else
# random intercept).
sim <- read.csv(file.path(here, "growth_simulated.csv"), comment.char = "#")
sim$time <- match(sim$wave, c("pre", "mid", "post")) - 1
ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(maxfun = 1e5),
                    check.conv.singular = "ignore")
for (s in sort(unique(sim$seed))) {
  d <- sim[sim$seed == s, ]
  m <- lmerTest::lmer(score ~ time + (1 + time | pid), data = d, REML = TRUE, control = ctrl)
  sing <- isSingular(m)
  ds <- paste0("sim_seed", s)
  add(ds, "growth", "model", "singular", as.numeric(sing))
  if (sing) {
    m <- lmerTest::lmer(score ~ time + (1 | pid), data = d, REML = TRUE, control = ctrl)
  }
  cf <- summary(m)$coefficients
  for (term in rownames(cf)) {
    nm <- if (term == "(Intercept)") "Intercept" else term
    add(ds, "growth", nm, "estimate", cf[term, "Estimate"])
    add(ds, "growth", nm, "se", cf[term, "Std. Error"])
    add(ds, "growth", nm, "df", cf[term, "df"])
  }
  add(ds, "growth", "model", "reml_criterion", -2 * as.numeric(logLik(m)))
}

# Reliable change (Jacobson & Truax 1991), pre -> fup, reliability = Cronbach's alpha of the
# five hourly pre scores (psych::alpha), SD of the pre scale score (mean of the five hours).
items_pre <- okw[, paste0("pre.", 1:5)]
alpha_pre <- psych::alpha(items_pre, warnings = FALSE)$total$raw_alpha
add("obk_phase", "reliable_change", "alpha_pre", "estimate", alpha_pre)
sd_pre <- sd(Yphase[, "pre"])
s_diff <- sd_pre * sqrt(2) * sqrt(1 - alpha_pre)
add("obk_phase", "reliable_change", "s_diff", "estimate", s_diff)
rci <- (Yphase[, "fup"] - Yphase[, "pre"]) / s_diff
zc <- qnorm(0.975)
for (i in seq_along(rci)) add("obk_phase", "reliable_change", paste0("id", i), "rci", rci[i])
add("obk_phase", "reliable_change", "improved", "n", sum(rci > zc))
add("obk_phase", "reliable_change", "unchanged", "n", sum(abs(rci) <= zc))
add("obk_phase", "reliable_change", "deteriorated", "n", sum(rci < -zc))

# ---------------------------------------------------------------------------------------------
# datasets::sleep (Student 1908): group 1 -> group 2 per ID, paired t-test and 2-wave RM-ANOVA.
# ---------------------------------------------------------------------------------------------
sl <- read.csv(file.path(data_dir, "datasets_sleep.csv"))
Ysl <- cbind(g1 = sl$extra[sl$group == 1][order(sl$ID[sl$group == 1])],
             g2 = sl$extra[sl$group == 2][order(sl$ID[sl$group == 2])])
invisible(pair_reference("sleep", Ysl[, "g1"], Ysl[, "g2"], "g2 - g1"))
rm_reference("sleep", Ysl, c("g1", "g2"))

# ---------------------------------------------------------------------------------------------
# MASS::anorexia: Prewt -> Postwt within each treatment group.
# ---------------------------------------------------------------------------------------------
an <- read.csv(file.path(data_dir, "MASS_anorexia.csv"))
for (tr in c("CBT", "Cont", "FT")) {
  sub <- an[an$Treat == tr, ]
  invisible(pair_reference(paste0("anorexia_", tr), sub$Prewt, sub$Postwt, "post - pre"))
}
# Reliable change with a given test-retest r = 0.80 for the CBT group (pre -> post weight).
sub <- an[an$Treat == "CBT", ]
s_diff <- sd(sub$Prewt) * sqrt(2) * sqrt(1 - 0.80)
rci <- (sub$Postwt - sub$Prewt) / s_diff
add("anorexia_CBT", "reliable_change", "s_diff", "estimate", s_diff)
for (i in seq_along(rci)) add("anorexia_CBT", "reliable_change", paste0("row", i), "rci", rci[i])
add("anorexia_CBT", "reliable_change", "improved", "n", sum(rci > zc))
add("anorexia_CBT", "reliable_change", "unchanged", "n", sum(abs(rci) <= zc))
add("anorexia_CBT", "reliable_change", "deteriorated", "n", sum(rci < -zc))

# ---------------------------------------------------------------------------------------------
# psychTools::affect: energetic/tense arousal, positive/negative affect before (1) and after (2)
# a film clip, all 330 participants.
# ---------------------------------------------------------------------------------------------
af <- read.csv(file.path(data_dir, "psychTools_affect.csv"), na.strings = "")
for (sc in c("EA", "TA", "PA", "NA")) {
  pre <- af[[paste0(sc, "1")]]
  post <- af[[paste0(sc, "2")]]
  ok <- complete.cases(pre, post)
  invisible(pair_reference(paste0("affect_", sc), pre[ok], post[ok], "post - pre"))
  ft <- friedman.test(cbind(pre[ok], post[ok]))
  add(paste0("affect_", sc), "friedman", "wave", "statistic", ft$statistic)
  add(paste0("affect_", sc), "friedman", "wave", "p_value", ft$p.value)
}

# ---------------------------------------------------------------------------------------------
out <- do.call(rbind, rows)
header <- c(
  "# Reference values for longitudinal/change.py; generated by tests/longitudinal/reference/change.R",
  paste0("# date: ", format(Sys.Date())),
  paste0("# ", R.version.string),
  paste0("# car ", packageVersion("car"), "; psych ", packageVersion("psych"),
         "; lme4 ", packageVersion("lme4"), "; lmerTest ", packageVersion("lmerTest"))
)
writeLines(header, out_file)
suppressWarnings(write.table(out, out_file, sep = ",", row.names = FALSE, append = TRUE,
                             quote = TRUE, qmethod = "double"))
cat("wrote", nrow(out), "values to", out_file, "\n")
