# Reference values for models/panel.py, written to panel.json beside this script.
#
# Run from the repository root:  Rscript tests/models/reference/panel.R
#
# plm fits of (1) the Riesby depression data (unbalanced: missing weeks) and (2) a simulated
# balanced panel (written to panel_sim.csv) in which x1 is correlated with the entity effect,
# so the Hausman test rejects.

suppressPackageStartupMessages({
  library(plm)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
here <- dirname(script)
data_dir <- normalizePath(file.path(here, "..", "..", "data"))

num <- function(x) unname(as.numeric(x))
coefs <- function(m, vc = NULL) {
  co <- summary(m, vcov = vc)$coefficients
  list(term = rownames(co), estimate = num(co[, 1]), se = num(co[, 2]),
       statistic = num(co[, 3]), p_value = num(co[, 4]))
}

riesby <- read.csv(file.path(data_dir, "riesby.csv"))
riesby$time <- riesby$week
pr <- pdata.frame(riesby, index = c("id", "time"))
fe_r <- plm(hamdep ~ week, data = pr, model = "within")
re_r <- plm(hamdep ~ week + endog, data = pr, model = "random")
be_r <- plm(hamdep ~ week + endog, data = pr, model = "between")

set.seed(20240503)
n_id <- 40
n_t <- 5
id <- rep(seq_len(n_id), each = n_t)
t <- rep(seq_len(n_t), n_id)
u <- rnorm(n_id)
x1 <- round(0.8 * u[id] + rnorm(n_id * n_t), 6)
x2 <- round(rnorm(n_id * n_t), 6)
y <- round(1 + 0.5 * x1 - 0.3 * x2 + u[id] + rnorm(n_id * n_t), 6)
sim <- data.frame(id = id, t = t, y = y, x1 = x1, x2 = x2)
write.csv(sim, file.path(here, "panel_sim.csv"), row.names = FALSE)
sim <- read.csv(file.path(here, "panel_sim.csv"))
ps <- pdata.frame(sim, index = c("id", "t"))
fe_s <- plm(y ~ x1 + x2, data = ps, model = "within")
re_s <- plm(y ~ x1 + x2, data = ps, model = "random")
be_s <- plm(y ~ x1 + x2, data = ps, model = "between")

hausman <- function(fe, re) {
  h <- phtest(fe, re)
  list(statistic = num(h$statistic), df = num(h$parameter), p_value = num(h$p.value))
}
ercomp_list <- function(re) {
  e <- ercomp(re)
  list(idiosyncratic = num(e$sigma2["idios"]), individual = num(e$sigma2["id"]))
}

out <- list(
  meta = list(
    generated = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"),
    r_version = R.version.string,
    plm = as.character(packageVersion("plm")),
    script = "tests/models/reference/panel.R"
  ),
  riesby = list(
    within = coefs(fe_r),
    within_cluster_hc0 = coefs(fe_r, vcovHC(fe_r, method = "arellano", type = "HC0",
                                            cluster = "group")),
    within_cluster_hc1 = coefs(fe_r, vcovHC(fe_r, method = "arellano", type = "HC1",
                                            cluster = "group")),
    within_df = num(df.residual(fe_r)),
    random = coefs(re_r),
    random_ercomp = ercomp_list(re_r),
    between = coefs(be_r),
    between_df = num(df.residual(be_r)),
    hausman = hausman(fe_r, re_r)
  ),
  simulated = list(
    within = coefs(fe_s),
    within_cluster_hc1 = coefs(fe_s, vcovHC(fe_s, method = "arellano", type = "HC1",
                                            cluster = "group")),
    within_df = num(df.residual(fe_s)),
    random = coefs(re_s),
    random_ercomp = ercomp_list(re_s),
    between = coefs(be_s),
    hausman = hausman(fe_s, re_s)
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           file.path(here, "panel.json"))
cat("wrote", file.path(here, "panel.json"), "\n")
