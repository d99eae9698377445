# Reference values for models/ordinal.py (OrdinalMixedModel), written to clmm.json beside this
# script.
#
# Run from the repository root:  Rscript tests/models/reference/clmm.R
#
# Fits use ordinal::clmm with nlminb converged more tightly than clmm's default
# (rel.tol = 1e-14, inner gradTol = 1e-7), so the stored values are the optimum to about 1e-6;
# standard errors are clmm's, from its numerical Hessian (with method = "ucminf" clmm would
# report ucminf's quasi-Newton inverse Hessian instead, about 1% off for random slopes).
# The data: ordinal's `wine` and `soup` (written to tests/data as ordinal_wine.csv and
# ordinal_soup.csv) and two simulated designs generated here (seeded) and written beside this
# script: crossed random intercepts (clmm_crossed.csv) and a correlated random slope
# (clmm_slopes.csv).

suppressPackageStartupMessages({
  library(ordinal)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

ctrl <- clmm.control(method = "nlminb", rel.tol = 1e-14, x.tol = 1e-14, eval.max = 10000,
                     iter.max = 10000, gradTol = 1e-7, maxIter = 200)
num <- function(x) unname(as.numeric(x))

fit_info <- function(m) {
  co <- coef(summary(m))
  vc <- VarCorr(m)
  random <- list()
  for (g in names(vc)) {
    v <- vc[[g]]
    sds <- attr(v, "stddev")
    cr <- attr(v, "correlation")
    random[[g]] <- list(
      term = names(sds),
      sd = num(sds),
      corr = if (length(sds) > 1) num(cr[lower.tri(cr)]) else numeric(0)
    )
  }
  re <- ranef(m, condVar = TRUE)
  modes <- lapply(names(re), function(g) {
    r <- re[[g]]
    list(level = rownames(r), term = colnames(r), values = unname(as.matrix(r)))
  })
  names(modes) <- names(re)
  list(
    formula = deparse(formula(m), width.cutoff = 500L),
    link = m$link,
    threshold = m$threshold,
    nAGQ = m$nAGQ,
    n_obs = nobs(m),
    coef_names = rownames(co),
    estimate = num(co[, "Estimate"]),
    se = num(co[, "Std. Error"]),
    n_alpha = length(m$alpha),
    random = random,
    ranef = modes,
    loglik = num(logLik(m)),
    npar = num(attr(logLik(m), "df")),
    aic = num(AIC(m)),
    bic = num(BIC(m)),
    max_grad = num(max(abs(m$gradient)))
  )
}

data(wine)
data(soup)
wine_df <- wine[, c("response", "rating", "temp", "contact", "bottle", "judge")]
write.csv(wine_df, file.path(data_dir, "ordinal_wine.csv"), row.names = FALSE)
soup_df <- soup[, c("RESP", "PROD", "PRODID", "DAY", "SOUPTYPE", "SURENESS")]
write.csv(soup_df, file.path(data_dir, "ordinal_soup.csv"), row.names = FALSE)

set.seed(20261124)
n_a <- 60; n_b <- 25
crossed <- expand.grid(a = seq_len(n_a), b = seq_len(n_b))
crossed <- crossed[sample(nrow(crossed), 900), ]
crossed$x <- round(rnorm(nrow(crossed)), 4)
ua <- rnorm(n_a, 0, 0.9); ub <- rnorm(n_b, 0, 0.6)
lat <- 0.7 * crossed$x + ua[crossed$a] + ub[crossed$b] + rlogis(nrow(crossed))
crossed$y <- as.integer(cut(lat, c(-Inf, -2, -0.5, 0.5, 2, Inf)))
crossed$a <- sprintf("a%02d", crossed$a); crossed$b <- sprintf("b%02d", crossed$b)
crossed <- crossed[order(crossed$a, crossed$b), ]
write.csv(crossed, file.path(here, "clmm_crossed.csv"), row.names = FALSE)

n_g <- 80; k <- 12
slopes <- data.frame(g = sprintf("g%02d", rep(seq_len(n_g), each = k)),
                     x = round(rnorm(n_g * k), 4), w = rep(0:1, length.out = n_g * k))
L <- chol(matrix(c(1, 0.3 * 0.7, 0.3 * 0.7, 0.49), 2))
u <- matrix(rnorm(2 * n_g), n_g) %*% L
gi <- as.integer(factor(slopes$g))
lat <- 0.6 * slopes$x - 0.4 * slopes$w + u[gi, 1] + u[gi, 2] * slopes$x + rlogis(nrow(slopes))
slopes$y <- as.integer(cut(lat, c(-Inf, -1.5, 0, 1.5, Inf)))
write.csv(slopes, file.path(here, "clmm_slopes.csv"), row.names = FALSE)

wine_df <- read.csv(file.path(data_dir, "ordinal_wine.csv"))
wine_df$rating <- factor(wine_df$rating, ordered = TRUE)
soup_df <- read.csv(file.path(data_dir, "ordinal_soup.csv"))
soup_df$SURENESS <- factor(soup_df$SURENESS, ordered = TRUE)
soup_df$RESP <- factor(soup_df$RESP)
soup_df$PROD <- factor(soup_df$PROD)
crossed <- read.csv(file.path(here, "clmm_crossed.csv"))
crossed$y <- factor(crossed$y, ordered = TRUE)
slopes <- read.csv(file.path(here, "clmm_slopes.csv"))
slopes$y <- factor(slopes$y, ordered = TRUE)

fits <- list(
  wine_laplace = clmm(rating ~ temp + contact + (1 | judge), data = wine_df, control = ctrl),
  wine_agq5 = clmm(rating ~ temp + contact + (1 | judge), data = wine_df, nAGQ = 5,
                   control = ctrl),
  wine_agq10 = clmm(rating ~ temp + contact + (1 | judge), data = wine_df, nAGQ = 10,
                    control = ctrl),
  wine_probit = clmm(rating ~ temp + contact + (1 | judge), data = wine_df, link = "probit",
                     control = ctrl),
  wine_equidistant = clmm(rating ~ temp + contact + (1 | judge), data = wine_df,
                          threshold = "equidistant", control = ctrl),
  soup_nested = clmm(SURENESS ~ PROD + (1 | RESP) + (1 | RESP:PROD), data = soup_df,
                     control = ctrl),
  crossed = clmm(y ~ x + (1 | a) + (1 | b), data = crossed, control = ctrl),
  slopes = clmm(y ~ x + w + (1 + x | g), data = slopes, control = ctrl)
)

out <- list(
  r_version = R.version.string,
  ordinal_version = as.character(packageVersion("ordinal")),
  fits = lapply(fits, fit_info)
)
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           file.path(here, "clmm.json"))
