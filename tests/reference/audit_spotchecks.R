# Reference values for tests/stats/test_r_spotchecks.py: the third statistics audit's spot-checks
# of pairbench against R, kept as regression tests (Holm, wilcox.test, ar()).
#
# Regenerate (R 4.2.2 from Debian, `apt-get install -y r-base-core`; no other package) from the
# repository root:
#   Rscript tests/reference/audit_spotchecks.R > tests/reference/audit_spotchecks_reference.json
#
# Every number is written with 17 significant digits and every case stores its input, so the
# tests need no R. set.seed(20261129), R's default generators (Mersenne-Twister, Inversion).
#
#   holm      20 vectors of length 20-192: uniform, uniform rounded to 0.01 (ties), log-uniform
#             down to 1e-10, each with an exact 0 and an exact 1 put in; p.adjust(p, "holm").
#   wilcox    20 cases, n and m in 3..79, times lognormal around 1 ms (5 of them rounded to 0.01 ms:
#             ties; all to 8 significant digits), the candidate scaled by 0.97-1.03, conf.level in 0.90..0.995;
#             wilcox.test(x, y) for W and the p-value (exact when n, m < 50 and no ties, else the
#             normal approximation with continuity correction, R's defaults), and
#             wilcox.test(log(x), log(y), conf.int = TRUE, conf.level = conf) for the Hodges-Lehmann
#             interval. R finds the normal route's interval ends by uniroot (tol.root 1e-4).
#   ar        20 series of n 50-800, one of 1500 and one of 3000, AR(1) phi 0-0.9 (four with exponential noise added);
#             ar(x - mean(x), aic = TRUE) (Yule-Walker, order.max = floor(10 log10 n)) for the order,
#             and the variance of the mean: var.pred / (1 - S')^2 / n, S = sum(ar), with
#             S' = S + (1 + 4 S) / n when the order is > 0 (coda::spectrum0.ar's fit plus the
#             documented bias correction).
options(digits = 17)
set.seed(20261129)

num <- function(x) {
  if (length(x) == 1 && is.na(x)) return("null")
  if (length(x) == 1) return(sprintf("%.17g", x))
  paste0("[", paste(sprintf("%.17g", x), collapse = ", "), "]")
}
# inputs: rounded to 8 significant digits before R computes on them, so that "%.8g" stores them exactly
num8 <- function(x) paste0("[", paste(sprintf("%.8g", x), collapse = ", "), "]")
obj <- function(kv) paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")

holm_cases <- character(0)
for (i in 1:20) {
  m <- sample(20:192, 1)
  kind <- (i - 1) %% 3
  p <- if (kind == 0) runif(m) else if (kind == 1) round(runif(m), 2) else 10^runif(m, -10, 0)
  p[sample(m, 2)] <- c(0, 1)
  holm_cases <- c(holm_cases, obj(list(p = num(p), holm = num(p.adjust(p, "holm")))))
}

wilcox_cases <- character(0)
for (i in 1:20) {
  n <- sample(3:79, 1); m <- sample(3:79, 1)
  x <- rlnorm(n, log(1), 0.05); y <- rlnorm(m, log(1), 0.05) * runif(1, 0.97, 1.03)
  x <- signif(x, 8); y <- signif(y, 8)
  if (i %% 4 == 0) { x <- round(x, 2); y <- round(y, 2) }
  conf <- round(runif(1, 0.90, 0.995), 3)
  t1 <- suppressWarnings(wilcox.test(x, y))
  t2 <- suppressWarnings(wilcox.test(log(x), log(y), conf.int = TRUE, conf.level = conf))
  exact <- n < 50 && m < 50 && !any(duplicated(c(x, y)))
  wilcox_cases <- c(wilcox_cases, obj(list(
    x = num8(x), y = num8(y), conf = num(conf), W = num(unname(t1$statistic)), p = num(t1$p.value),
    exact = if (exact) "true" else "false", low = num(t2$conf.int[1]), high = num(t2$conf.int[2]),
    estimate = num(unname(t2$estimate)))))
}

ar_cases <- character(0)
for (i in 1:20) {
  n <- if (i == 10) 3000 else if (i == 20) 1500 else sample(50:800, 1)
  phi <- if (i == 1) 0 else round(runif(1, 0, 0.9), 2)
  x <- if (phi == 0) rnorm(n) else as.numeric(arima.sim(list(ar = phi), n))
  if (i %% 5 == 0) x <- x + rexp(n)
  x <- signif(x, 8)
  fit <- ar(x - mean(x), aic = TRUE, method = "yule-walker", demean = FALSE)
  S <- sum(fit$ar)
  if (fit$order > 0) S <- S + (1 + 4 * S) / n
  ar_cases <- c(ar_cases, obj(list(x = num8(x), phi = num(phi), order = num(fit$order),
                                   var_mean = num(fit$var.pred / (1 - S)^2 / n))))
}

cat("{\n  \"generator\": \"tests/reference/audit_spotchecks.R, R ", R.version$major, ".", R.version$minor,
    "\",\n", sep = "")
cat("  \"holm\": [\n    ", paste(holm_cases, collapse = ",\n    "), "\n  ],\n", sep = "")
cat("  \"wilcox\": [\n    ", paste(wilcox_cases, collapse = ",\n    "), "\n  ],\n", sep = "")
cat("  \"ar\": [\n    ", paste(ar_cases, collapse = ",\n    "), "\n  ]\n}\n", sep = "")
