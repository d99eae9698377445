# Reference values for surveys.reliability and surveys.scoring on psych's bfi data.
#
# Run from anywhere:  Rscript tests/surveys/reference/psych_bfi.R
# Needs R >= 4.2 with psych (and GPArotation, which psych::omega loads).
#
# Inputs  (tests/data/): psych_bfi.csv (2,800 x 25 items, 1-6), psych_bfi_keys.csv (psych key notation)
# Outputs (next to this script), every number written with format(x, digits = 15):
#   psych_bfi_scores.csv  person scores of psych::scoreItems(keys, items, impute = "none", min = 1, max = 6)
#   psych_bfi_scales.csv  one row per scale: alphas, Feldt intervals, omega
#   psych_bfi_items.csv   one row per scale x item: psych::alpha item statistics, one-factor loadings
# Each output starts with "# " header lines (date, R version, psych version).

suppressMessages(library(psych))

script_dir <- local({
  arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(arg) == 1) dirname(normalizePath(sub("^--file=", "", arg))) else getwd()
})
data_dir <- normalizePath(file.path(script_dir, "..", "..", "data"))

bfi <- read.csv(file.path(data_dir, "psych_bfi.csv"), row.names = 1)
items <- bfi[, 1:25]
key_table <- read.csv(file.path(data_dir, "psych_bfi_keys.csv"), row.names = 1,
                      stringsAsFactors = FALSE)
keys <- lapply(as.list(key_table), function(v) v[nzchar(v)])
scale_names <- names(keys)
resp_min <- 1
resp_max <- 6

num <- function(x) vapply(x, function(v) format(v, digits = 15), character(1))

write_with_header <- function(df, name, note) {
  path <- file.path(script_dir, name)
  header <- c(
    paste0("# ", note),
    paste0("# date: ", format(Sys.Date())),
    paste0("# R: ", R.version.string),
    paste0("# psych: ", as.character(packageVersion("psych"))),
    "# source: tests/surveys/reference/psych_bfi.R"
  )
  writeLines(header, path)
  suppressWarnings(write.table(df, path, sep = ",", row.names = FALSE, quote = FALSE,
                               append = TRUE, col.names = TRUE))
}

# Reverse-keyed item matrix of one scale (max + min - x for "-" items), columns named without "-".
keyed_items <- function(key) {
  names <- sub("^-", "", key)
  x <- items[, names, drop = FALSE]
  rev <- startsWith(key, "-")
  x[, rev] <- resp_max + resp_min - x[, rev]
  x
}

# ---- person scores and scale alphas: psych::scoreItems ------------------------------------------
si <- scoreItems(keys, items, impute = "none", min = resp_min, max = resp_max)
# psych's default imputation (median) reproduces the alphas printed in reference_values_R.txt
# (.701237 etc.); with impute = "none" the alphas equal psych::alpha's raw_alpha.
si_median <- scoreItems(keys, items, min = resp_min, max = resp_max)

scores <- data.frame(id = rownames(items), stringsAsFactors = FALSE)
for (s in scale_names) scores[[s]] <- num(si$scores[, s])
write_with_header(scores, "psych_bfi_scores.csv",
                  "psych::scoreItems(keys, items, impute = 'none', min = 1, max = 6)$scores")

# Exact one-factor unweighted least squares (= minres) fit: iterated principal axes run to
# convergence (min.err = 0); its fixed point is the stationary point of the minres criterion.
uls_loadings <- function(r) {
  f <- fa(r, nfactors = 1, fm = "pa", min.err = 0, max.iter = 100000, warnings = FALSE)
  l <- as.vector(f$loadings)
  if (sum(l) < 0) l <- -l
  l
}

scale_rows <- list()
item_rows <- list()
for (s in scale_names) {
  key <- keys[[s]]
  x <- keyed_items(key)
  k <- ncol(x)
  n <- nrow(x)
  a <- alpha(x, warnings = FALSE)
  ci90 <- alpha.ci(a$total$raw_alpha, n.obs = n, n.var = k, p.val = 0.10)
  xc <- na.omit(x)
  a_complete <- alpha(xc, warnings = FALSE)
  r <- cor(x, use = "pairwise")
  lam <- uls_loadings(r)
  om <- suppressWarnings(suppressMessages(omega(x, nfactors = 1, plot = FALSE)))
  scale_rows[[s]] <- data.frame(
    scale = s,
    n_items = k,
    n = n,
    scoreitems_alpha = num(si$alpha[1, s]),
    scoreitems_alpha_median_imputed = num(si_median$alpha[1, s]),
    raw_alpha = num(a$total$raw_alpha),
    std_alpha = num(a$total$std.alpha),
    feldt_low_95 = num(a$feldt$lower.ci),
    feldt_high_95 = num(a$feldt$upper.ci),
    feldt_low_90 = num(ci90$lower.ci),
    feldt_high_90 = num(ci90$upper.ci),
    n_complete = nrow(xc),
    raw_alpha_complete = num(a_complete$total$raw_alpha),
    std_alpha_complete = num(a_complete$total$std.alpha),
    feldt_low_95_complete = num(a_complete$feldt$lower.ci),
    feldt_high_95_complete = num(a_complete$feldt$upper.ci),
    omega_uls = num(sum(lam)^2 / sum(r)),
    psych_omega_h = num(om$omega_h),
    psych_omega_tot = num(om$omega.tot),
    stringsAsFactors = FALSE
  )
  st <- a$item.stats
  item_rows[[s]] <- data.frame(
    scale = s,
    item = colnames(x),
    reversed = startsWith(key, "-"),
    n = st$n,
    mean = num(st$mean),
    sd = num(st$sd),
    r_drop = num(st$r.drop),
    alpha_drop = num(a$alpha.drop$raw_alpha),
    r_drop_complete = num(a_complete$item.stats$r.drop),
    alpha_drop_complete = num(a_complete$alpha.drop$raw_alpha),
    loading_uls = num(lam),
    loading_psych_omega = num(om$schmid$sl[, 1]),
    stringsAsFactors = FALSE
  )
}
write_with_header(
  do.call(rbind, scale_rows), "psych_bfi_scales.csv",
  paste("per scale on reverse-keyed items: psych::scoreItems alpha, psych::alpha,",
        "psych::alpha.ci (Feldt), one-factor ULS omega = sum(l)^2 / sum(R), psych::omega(nfactors = 1)")
)
write_with_header(
  do.call(rbind, item_rows), "psych_bfi_items.csv",
  "per item: psych::alpha item.stats (n, mean, sd, r.drop), alpha.drop raw_alpha, ULS loadings"
)
