# Latent-scale R-squared and estimated marginal means of OrdinalMixedModel (models/ordinal/_r2.py,
# models/ordinal/_emmeans.py), written to ordinal_r2_emmeans.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/ordinal_r2_emmeans.R
#
# Data: ordinal's wine and soup (tests/data) and the simulated random-slope design of clmm.R
# (clmm_slopes.csv). Fits: ordinal::clmm (Laplace) with its numerical Hessian (Hess = TRUE).
# R-squared: performance::r2_nakagawa (insight::get_variance), which supports clmm: fixed-effect
# variance var(X beta) over the rows used (thresholds left out), random-effect variance, and the
# link's distribution variance (pi^2/3 logit, 1 probit). Marginal means: emmeans with
# mode = "latent" (the linear predictor minus the mean threshold) and mode = "prob" (category
# probabilities averaged over the reference grid), asymptotic (z) inference, delta-method SEs.

suppressPackageStartupMessages({
  library(ordinal)
  library(performance)
  library(emmeans)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

# ucminf with a tight gradient tolerance (max|gradient| of each fit kept in the JSON; clmm
# falls back to nlminb for the random slope). The tight nlminb controls of clmm.R stop on soup
# with "singular convergence" at gradients of 6e-4, where clmm's finite-difference Hessian
# moves the SEs by 3e-3; a tighter inner gradTol does the same.
ctrl <- clmm.control(method = "ucminf", grtol = 1e-10)
num <- function(x) unname(as.numeric(x))

wine <- read.csv(file.path(data_dir, "ordinal_wine.csv"))
wine$rating <- factor(wine$rating, ordered = TRUE)
wine$temp <- factor(wine$temp)
wine$contact <- factor(wine$contact)
wine$judge <- factor(wine$judge)

soup <- read.csv(file.path(data_dir, "ordinal_soup.csv"))
soup$SURENESS <- factor(soup$SURENESS, ordered = TRUE)
soup$PROD <- factor(soup$PROD)
soup$SOUPTYPE <- factor(soup$SOUPTYPE)
soup$RESP <- factor(soup$RESP)

slopes <- read.csv(file.path(here, "clmm_slopes.csv"))
slopes$y <- factor(slopes$y, ordered = TRUE)
slopes$g <- factor(slopes$g)

fits <- list(
  wine_logit = list(data = "wine", formula = "rating ~ temp + contact + (1 | judge)",
                    link = "logit", threshold = "flexible"),
  wine_probit = list(data = "wine", formula = "rating ~ temp + contact + (1 | judge)",
                     link = "probit", threshold = "flexible"),
  wine_equidistant = list(data = "wine", formula = "rating ~ temp + contact + (1 | judge)",
                          link = "logit", threshold = "equidistant"),
  soup_type = list(data = "soup", formula = "SURENESS ~ PROD + SOUPTYPE + (1 | RESP)",
                   link = "logit", threshold = "flexible"),
  slopes = list(data = "slopes", formula = "y ~ x + w + (1 + x | g)",
                link = "logit", threshold = "flexible")
)
datasets <- list(wine = wine, soup = soup, slopes = slopes)

models <- lapply(fits, function(f) {
  clmm(as.formula(f$formula), data = datasets[[f$data]], link = f$link,
       threshold = f$threshold, control = ctrl, Hess = TRUE)
})

r2 <- lapply(names(fits), function(k) {
  m <- models[[k]]
  r <- r2_nakagawa(m)
  v <- insight::get_variance(m)
  list(
    formula = fits[[k]]$formula, data = fits[[k]]$data, link = fits[[k]]$link,
    threshold = fits[[k]]$threshold,
    marginal = num(r$R2_marginal), conditional = num(r$R2_conditional),
    var_fixed = num(v$var.fixed), var_random = num(v$var.random),
    var_residual = num(v$var.residual),
    max_gradient = max(abs(num(m$gradient)))
  )
})
names(r2) <- names(fits)

# emmeans cases: fit, specs, by, mode, contrast method (NULL for none), adjust
emm_cases <- list(
  wine_latent_temp = list(fit = "wine_logit", specs = "temp", by = NULL, mode = "latent",
                          method = "pairwise", adjust = "tukey"),
  wine_latent_temp_by_contact = list(fit = "wine_logit", specs = "temp", by = "contact",
                                     mode = "latent", method = "pairwise", adjust = "tukey"),
  wine_equidistant_latent = list(fit = "wine_equidistant", specs = "temp", by = NULL,
                                 mode = "latent", method = NULL, adjust = NULL),
  wine_prob_temp = list(fit = "wine_logit", specs = "temp", by = NULL, mode = "prob",
                        method = "pairwise", adjust = "tukey"),
  wine_probit_prob_contact = list(fit = "wine_probit", specs = "contact", by = NULL,
                                  mode = "prob", method = NULL, adjust = NULL),
  soup_latent_type = list(fit = "soup_type", specs = "SOUPTYPE", by = NULL, mode = "latent",
                          method = "pairwise", adjust = "tukey"),
  soup_latent_type_holm = list(fit = "soup_type", specs = "SOUPTYPE", by = NULL,
                               mode = "latent", method = "trt.vs.ctrl", adjust = "dunnettx"),
  soup_prob_type = list(fit = "soup_type", specs = "SOUPTYPE", by = NULL, mode = "prob",
                        method = "consec", adjust = "holm")
)

table_of <- function(s, cols) {
  out <- list()
  for (col in cols) {
    out[[col]] <- if (is.factor(s[[col]]) || is.character(s[[col]])) as.character(s[[col]])
                  else num(s[[col]])
  }
  out
}

emm <- lapply(names(emm_cases), function(k) {
  e <- emm_cases[[k]]
  m <- models[[e$fit]]
  resp <- all.vars(as.formula(fits[[e$fit]]$formula))[1]
  if (e$mode == "prob") {
    # the response's categories act as a by-variable: the means of specs per category
    spec <- as.formula(paste("~", e$specs, "|", paste(c(resp, e$by), collapse = "+")))
  } else if (is.null(e$by)) {
    spec <- as.formula(paste("~", e$specs))
  } else {
    spec <- as.formula(paste("~", e$specs, "|", e$by))
  }
  g <- emmeans(m, spec, mode = e$mode)
  s <- as.data.frame(summary(g))
  est <- if (e$mode == "prob") "prob" else "emmean"
  out <- list(
    fit = e$fit, specs = e$specs, by = e$by, mode = e$mode,
    means = c(table_of(s, c(e$specs, if (e$mode == "prob") resp, e$by)),
              list(emmean = num(s[[est]]), se = num(s$SE), ci_low = num(s$asymp.LCL),
                   ci_high = num(s$asymp.UCL)))
  )
  if (!is.null(e$method)) {
    cs <- as.data.frame(summary(contrast(g, method = e$method, adjust = e$adjust),
                                infer = c(TRUE, TRUE)))
    out$method <- e$method
    out$adjust <- e$adjust
    out$contrasts <- list(contrast = as.character(cs$contrast), estimate = num(cs$estimate),
                          se = num(cs$SE), statistic = num(cs$z.ratio),
                          p_value = num(cs$p.value), ci_low = num(cs$asymp.LCL),
                          ci_high = num(cs$asymp.UCL))
    if (e$mode == "prob") out$contrasts[[resp]] <- as.character(cs[[resp]])
  }
  out
})
names(emm) <- names(emm_cases)

versions <- list(R = R.version.string, ordinal = as.character(packageVersion("ordinal")),
                 performance = as.character(packageVersion("performance")),
                 insight = as.character(packageVersion("insight")),
                 emmeans = as.character(packageVersion("emmeans")))
writeLines(toJSON(list(versions = versions, r2 = r2, emmeans = emm), digits = NA, auto_unbox = TRUE,
                  null = "null", pretty = TRUE),
           file.path(here, "ordinal_r2_emmeans.json"))
