# Reference sample statistics of lavaan's WLSMV estimator for ordered-categorical items
# (tests/models/sem/test_ordinal_stats.py), written to wlsmv_stats.json beside this script.
#
# For each case lavaan::cfa(model, data, ordered = <every item>, estimator = "WLSMV") is fitted
# and its sample statistics are read back with lavInspect: "sampstat" (thresholds and
# polychoric correlations), "wls.obs", "gamma" (NACOV) and "wls.v" (the DWLS weight, a diagonal
# matrix; only its diagonal is stored). The model only decides whether the fit converges; the
# sample statistics do not depend on it.
#
# Data (real responses):
#   flat:      psychTools' sai, study FLAT, items tense, anxious, nervous, jittery (1-4) at
#              times 1, 2, 3, complete participants (tests/data/psychTools_sai_flat.csv)
#   rim:       psychTools' sai, study RIM, items calm, at.ease, relaxed, content (1-4) at
#              times 1 and 3, complete participants (tests/data/psychTools_sai_rim.csv)
#   respdis:   geepack's respdis (Miller, Davis & Landis 1993: respiratory status 1-3 of 111
#              patients at four visits), written here in long format to
#              tests/data/geepack_respdis.csv (columns id, time, y)
#   flat_top:  flat with every answer recoded to 1 for "4" and 0 otherwise (binary items;
#              31 of the 66 2x2 tables have an empty cell, so lavaan's zero.add = 0.5 applies)
#   flat_gap:  flat with tense.1's answers 3 recoded to 4, so that tense.1 has the categories
#              1, 2, 4 (lavaan keeps the observed ones: two thresholds)
#   flat_pairwise: every FLAT participant (tests/data/psychTools_sai_flat_all.csv; 3 of 170
#              miss one answer) with missing = "pairwise"
# The items are reshaped to wide format with reshape(), so the variables are `item.time`,
# items within time, as tests/models/reference/invariance.R does.
#
# Run from the repository root:  Rscript tests/models/reference/wlsmv_stats.R
suppressPackageStartupMessages({
  library(lavaan)
  library(jsonlite)
})
data(respdis, package = "geepack")
out_file <- "tests/models/reference/wlsmv_stats.json"

respdis_long <- data.frame(id = rep(seq_len(nrow(respdis)), each = 4L),
                           time = rep(1:4, times = nrow(respdis)),
                           y = as.vector(t(as.matrix(respdis[, c("y1", "y2", "y3", "y4")]))))
write.csv(respdis_long, "tests/data/geepack_respdis.csv", row.names = FALSE)

to_wide <- function(long) {
  wide <- reshape(long, idvar = "id", timevar = "time", direction = "wide")
  wide[, setdiff(names(wide), "id")]
}

one_factor_per_time <- function(names) {
  times <- unique(sub("^.*\\.", "", names))
  paste(sprintf("F%s =~ %s", times,
                sapply(times, function(t) paste(names[endsWith(names, paste0(".", t))],
                                               collapse = " + "))),
        collapse = "\n")
}

flat <- to_wide(read.csv("tests/data/psychTools_sai_flat.csv"))
flat_top <- as.data.frame(lapply(flat, function(x) as.integer(x == 4L)))
flat_gap <- flat
flat_gap$tense.1[flat_gap$tense.1 == 3L] <- 4L
cases <- list(
  flat = list(data = flat, missing = "listwise",
              model = one_factor_per_time(names(flat))),
  rim = list(data = to_wide(read.csv("tests/data/psychTools_sai_rim.csv")),
             missing = "listwise"),
  respdis = list(data = to_wide(respdis_long), missing = "listwise",
                 model = "F =~ y.1 + y.2 + y.3 + y.4"),
  flat_top = list(data = flat_top, missing = "listwise",
                  model = one_factor_per_time(names(flat))),
  flat_gap = list(data = flat_gap, missing = "listwise",
                  model = one_factor_per_time(names(flat))),
  flat_pairwise = list(data = to_wide(read.csv("tests/data/psychTools_sai_flat_all.csv")),
                       missing = "pairwise")
)
cases$rim$model <- one_factor_per_time(names(cases$rim$data))
cases$flat_pairwise$model <- one_factor_per_time(names(cases$flat_pairwise$data))

num <- function(x) unname(as.numeric(x))
rows <- function(m) lapply(seq_len(nrow(m)), function(i) num(m[i, ]))

results <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  vars <- names(case$data)
  # the binary case's one-factor models need not converge: its statistics are what is kept
  fit <- suppressWarnings(cfa(case$model, data = case$data, ordered = vars,
                              estimator = "WLSMV", missing = case$missing))
  ss <- lavInspect(fit, "sampstat")
  th <- ss$th
  th_var <- sub("\\|t[0-9]+$", "", names(th))
  wls_v <- lavInspect(fit, "wls.v")
  stopifnot(all(wls_v[upper.tri(wls_v)] == 0))
  results[[name]] <- list(
    missing = case$missing,
    names = vars,
    n = nobs(fit),
    levels = lapply(case$data, function(x) sort(unique(x[!is.na(x)]))),
    counts = lapply(case$data, function(x) as.vector(table(x))),
    thresholds = lapply(vars, function(v) I(num(th[th_var == v]))),
    polychoric = rows(ss$cov[vars, vars]),
    wls_obs_names = names(lavInspect(fit, "wls.obs")),
    wls_obs = num(lavInspect(fit, "wls.obs")),
    gamma = rows(lavInspect(fit, "gamma")),
    wls_v = num(diag(wls_v))
  )
}

# the bivariate normal CDF that lavaan uses for the cell probabilities, on a grid that reaches
# every branch of Genz's algorithm (|rho| below 0.3, 0.75 and 0.925, and above)
grid <- expand.grid(x = c(-2.5, -1, -0.3, 0, 0.7, 1.9), y = c(-2.2, -0.6, 0, 0.4, 1.3, 2.8),
                    rho = c(-0.999, -0.95, -0.8, -0.5, -0.1, 0, 0.2, 0.6, 0.9, 0.93, 0.99, 0.999))
grid$p <- mapply(function(x, y, rho) pbivnorm::pbivnorm(x, y, rho), grid$x, grid$y, grid$rho)

out <- list(
  meta = list(
    generated = format(Sys.time(), "%Y-%m-%d %H:%M:%S UTC", tz = "UTC"),
    r_version = R.version.string,
    lavaan = as.character(packageVersion("lavaan")),
    psychTools = as.character(packageVersion("psychTools")),
    geepack = as.character(packageVersion("geepack")),
    pbivnorm = as.character(packageVersion("pbivnorm")),
    script = "tests/models/reference/wlsmv_stats.R"
  ),
  cases = results,
  pbivnorm = as.list(grid)
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE), out_file)
