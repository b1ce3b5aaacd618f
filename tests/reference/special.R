# Reference values for pairbench.stats._special, from R's own distribution functions.
#
#   Rscript tests/reference/special.R > tests/reference/special_reference.json
#
# Generated with R 4.2.2 (the R installed on the build machine; nmath's pbeta is TOMS 708, qbeta
# AS 109 with R's refinements, qt Hill's algorithm with Newton steps, pbinom pbeta, qbinom a
# Cornish-Fisher start with a search and R's fuzz, pchisq pgamma, qnorm AS 241). No packages
# needed: the JSON is written by hand, numbers with 17 significant digits so that doubles
# round-trip exactly; +-Inf as the strings "Inf", "-Inf". Each row is its arguments, then R's value.

num <- function(v) {
  if (is.infinite(v)) return(if (v > 0) "\"Inf\"" else "\"-Inf\"")
  sprintf("%.17g", v)
}
row <- function(...) paste0("[", paste(vapply(c(...), num, ""), collapse = ","), "]")
rows <- function(r) paste0("[\n", paste(r, collapse = ",\n"), "\n]")

shapes <- c(0.5, 1, 2.5, 10, 31, 100, 1000, 1e4, 1e5)
xs <- c(1e-300, 1e-20, 1e-5, 0.001, 0.02, 0.1, 0.25, 0.5, 0.7, 0.9, 0.98, 0.999, 1 - 1e-5)
pbeta_rows <- c()
for (a in shapes) for (b in shapes) for (x in xs) pbeta_rows <- c(pbeta_rows, row(a, b, x, pbeta(x, a, b)))

ys <- c(1e-300, 1e-15, 1e-5, 0.025, 0.5, 0.975, 0.999)
qbeta_rows <- c()
for (a in shapes) for (b in shapes) for (y in ys) qbeta_rows <- c(qbeta_rows, row(a, b, y, qbeta(y, a, b)))

dfs <- c(1, 2, 3, 4.5, 10, 28, 100, 1000, 1e4, 1e5, 1e6)
ps <- c(1e-300, 1e-20, 1e-10, 0.05 / 30, 0.025, 0.1, 0.4, 0.6, 0.975, 0.999999)
qt_rows <- c()
for (df in dfs) for (p in ps) qt_rows <- c(qt_rows, row(df, p, qt(p, df)))

# pbinom: each row k, n, p, P(X <= k), P(X > k)
ns <- c(1, 2, 5, 10, 30, 100, 1000, 1e4, 1e5)
probs <- c(0.001, 0.1, 0.5, 0.9, 0.999)
pbinom_rows <- c()
for (n in ns) for (p in probs) {
  ks <- unique(pmin(n - 1, pmax(0, round(c(0, n * p - 3 * sqrt(n * p * (1 - p)) - 1, n * p - 1, n * p,
                                           n * p + 2 * sqrt(n * p * (1 - p)) + 1, n - 1)))))
  for (k in ks) pbinom_rows <- c(pbinom_rows, row(k, n, p, pbinom(k, n, p), pbinom(k, n, p, lower.tail = FALSE)))
}

# qbinom at the targets a shift function's order-statistic intervals ask for: each row target, n, p, k
targets <- c(0.025, 0.975, 0.05 / 36, 1 - 0.05 / 36, 0.005, 0.995)
qps <- c(0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
qns <- c(1, 2, 3, 7, 30, 31, 100, 999, 1000, 12345, 1e5)
qbinom_rows <- c()
for (t in targets) for (n in qns) for (p in qps) qbinom_rows <- c(qbinom_rows, row(t, n, p, qbinom(t, n, p)))

# pchisq upper tail: each row df, q, P(X > q)
cdfs <- c(1, 2, 3, 4, 5, 10, 11, 50, 101, 1000, 10001, 1e6)
pchisq_rows <- c()
for (df in cdfs) for (f in c(1e-6, 0.01, 0.3, 0.8, 1, 1.2, 2, 5)) {
  q <- f * df + (if (f >= 1) 3 * sqrt(2 * df) * (f - 1) else 0)
  pchisq_rows <- c(pchisq_rows, row(df, q, pchisq(q, df, lower.tail = FALSE)))
}

qnorm_rows <- c()
for (p in c(1e-300, 1e-20, 1e-10, 0.001, 0.025, 0.1, 0.5, 0.75, 0.9, 0.975, 0.999, 1 - 1e-10))
  qnorm_rows <- c(qnorm_rows, row(p, qnorm(p)))

cat("{\n")
cat(sprintf("\"generated_by\":\"%s\",\n", "Rscript tests/reference/special.R"))
cat(sprintf("\"r_version\":\"%s\",\n", R.version.string))
cat("\"pbeta\":", rows(pbeta_rows), ",\n", sep = "")
cat("\"qbeta\":", rows(qbeta_rows), ",\n", sep = "")
cat("\"qt\":", rows(qt_rows), ",\n", sep = "")
cat("\"pbinom\":", rows(pbinom_rows), ",\n", sep = "")
cat("\"qbinom\":", rows(qbinom_rows), ",\n", sep = "")
cat("\"pchisq_upper\":", rows(pchisq_rows), ",\n", sep = "")
cat("\"qnorm\":", rows(qnorm_rows), "\n", sep = "")
cat("}\n")
