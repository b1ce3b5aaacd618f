# Reference values for tests/stats/test_describe.py (describe, median_ci, grubbs_critical).
#
# Regenerate (R 4.2.2, base R only) from the repository root:
#   Rscript tests/reference/describe.R > tests/reference/describe_reference.json
#
# Every number is written with 17 significant digits, so the JSON round-trips
# doubles exactly; the inputs are stored beside the outputs.
#
# Definitions (written here from the textbook formulas, not from pairbench):
#   quantiles      quantile(x, type = 7)            (numpy's default "linear")
#   sd             sd(x)                            (n - 1 denominator)
#   mad            mad(x, constant = 1)             (raw median absolute deviation)
#   mad_normal     mad(x, constant = 1 / qnorm(3/4)) (scipy scale="normal"; R's default
#                                                    constant 1.4826 is this rounded)
#   skewness       m3 / m2^1.5 with m_k = mean((x - mean(x))^k): the biased
#                  Fisher-Pearson g1 that scipy.stats.skew(bias=True) returns.
#                  Base R has no skewness function, so it is computed by formula.
#   fences         Q1 - 1.5 IQR, Q3 + 1.5 IQR; indices are 0-based (R's which() - 1)
#   grubbs         G = (n - 1) / sqrt(n) * sqrt(t^2 / (n - 2 + t^2)),
#                  t = qt(alpha / n, n - 2, lower.tail = FALSE)   (one-sided test)
#   median CI      the distribution-free sign-test interval [x_(k), x_(n-k+1)]:
#                  k - 1 is the largest j with pbinom(j, n, 1/2) <= alpha / 2, and
#                  the exact coverage is 1 - 2 pbinom(k - 1, n, 1/2). This is the
#                  order-statistic interval of Conover (Practical Nonparametric
#                  Statistics, 3rd ed., 3.2); benchstat's median interval is of the
#                  same binomial kind ("need >= 6 samples" at 0.95). It needs no
#                  wilcox.test (which would give the Hodges-Lehmann pseudo-median
#                  instead). When n is too small: "ok": false.
options(digits = 17)

num <- function(x) {
  if (is.null(x) || length(x) == 0) return("[]")
  if (length(x) == 1 && is.na(x)) return("null")
  if (length(x) == 1) return(sprintf("%.17g", x))
  paste0("[", paste(sprintf("%.17g", x), collapse = ", "), "]")
}
ints <- function(x) paste0("[", paste(sprintf("%d", as.integer(x)), collapse = ", "), "]")
obj <- function(kv) {
  paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")
}

grubbs <- function(n, alpha = 0.05) {
  t <- qt(alpha / n, n - 2, lower.tail = FALSE)
  (n - 1) / sqrt(n) * sqrt(t^2 / (n - 2 + t^2))
}

median_ci <- function(x, conf) {
  n <- length(x)
  alpha <- 1 - conf
  ok <- which(pbinom(0:n, n, 0.5) <= alpha / 2) - 1  # the j = 0..n that qualify
  if (length(ok) == 0) return(list(conf = num(conf), ok = "false"))
  k <- max(ok) + 1
  if (k > n - k + 1) return(list(conf = num(conf), ok = "false"))
  s <- sort(x)
  list(conf = num(conf), ok = "true", estimate = num(median(x)),
       low = num(s[k]), high = num(s[n - k + 1]), low_rank = k, high_rank = n - k + 1,
       achieved = num(1 - 2 * pbinom(k - 1, n, 0.5)))
}

describe_case <- function(name, x) {
  n <- length(x)
  q <- quantile(x, c(0.25, 0.5, 0.75), type = 7, names = FALSE)
  m <- mean(x)
  s <- sd(x)
  iqr <- q[3] - q[1]
  lower <- q[1] - 1.5 * iqr
  upper <- q[3] + 1.5 * iqr
  # Distances from the mean are taken on y = x - min(x) (exact for these data):
  # mean(x) on the 1e9-offset case is rounded to 1.2e-7, which would cost R 7 digits
  # of (max - mean), (mean - min) and the third moment.
  y <- x - min(x)
  m2 <- mean((y - mean(y))^2)
  m3 <- mean((y - mean(y))^3)
  cis <- sapply(c(0.90, 0.95, 0.99), function(cf) obj(median_ci(x, cf)))
  kv <- list(
    name = sprintf("\"%s\"", name), x = num(x), n = n,
    min = num(min(x)), q1 = num(q[1]), median = num(q[2]), q3 = num(q[3]), max = num(max(x)),
    mean = num(m), sd = num(s), cv = if (m != 0) num(s / m) else "null", iqr = num(iqr),
    mad = num(mad(x, constant = 1)), mad_normal = num(mad(x, constant = 1 / qnorm(0.75))),
    skewness = num(m3 / m2^1.5),
    mean_min_gap = if (min(x) > 0) num(mean(y) / m) else "null",
    max_sigma = num((max(y) - mean(y)) / s), min_sigma = num(mean(y) / s),
    grubbs_critical = num(grubbs(n)),
    lower_fence = num(lower), upper_fence = num(upper),
    below_fence = ints(which(x < lower) - 1), above_fence = ints(which(x > upper) - 1),
    median_ci = paste0("[", paste(cis, collapse = ", "), "]")
  )
  obj(kv)
}

cases <- list()
set.seed(1)
cases$lognormal_30 <- round(rlnorm(30, log(2e6), 0.25))
set.seed(2)
cases$ties_50 <- sample(c(100, 101, 102, 103, 105, 110, 150), 50, replace = TRUE,
                        prob = c(10, 20, 30, 20, 10, 5, 5))
set.seed(3)
cases$bimodal_80 <- round(c(rnorm(40, 1e6, 1e4), rnorm(40, 1.3e6, 1e4)))
cases$small_6 <- c(12.5, 11.9, 13.1, 12.2, 30.4, 12.0)
set.seed(4)
spikes <- round(rnorm(200, 5e5, 5e3))
spikes[c(17, 88, 150)] <- c(9e5, 1.2e6, 2e5)
cases$spikes_200 <- spikes
cases$signed_8 <- c(-3.2, 1.5, 0.4, -0.7, 2.2, 0.9, -1.1, 0.3)
set.seed(5)
cases$offset_1e9_40 <- 1e9 + rpois(40, 20)

out <- sapply(names(cases), function(nm) describe_case(nm, cases[[nm]]))
grubbs_rows <- c()
for (alpha in c(0.05, 0.01)) {
  for (n in c(3, 5, 10, 30, 100, 1000, 10000)) {
    grubbs_rows <- c(grubbs_rows, obj(list(n = n, alpha = num(alpha), value = num(grubbs(n, alpha)))))
  }
}
min_n <- sapply(c(0.80, 0.90, 0.95, 0.99, 0.999), function(cf) {
  n <- 1
  while (median_ci(seq_len(n), cf)$ok == "false") n <- n + 1
  obj(list(confidence = num(cf), n = n))
})
cat("{\n")
cat(sprintf("  \"generated_by\": \"tests/reference/describe.R with %s\",\n", R.version.string))
cat(sprintf("  \"cases\": [\n    %s\n  ],\n", paste(out, collapse = ",\n    ")))
cat(sprintf("  \"grubbs\": [\n    %s\n  ],\n", paste(grubbs_rows, collapse = ",\n    ")))
cat(sprintf("  \"median_ci_min_n\": [%s]\n", paste(min_n, collapse = ", ")))
cat("}\n")
