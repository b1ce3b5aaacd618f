# Reference values for tests/stats/test_regression.py (line_fit, trend_fit).
#
# Regenerate (R 4.2.2, base R only) from the repository root:
#   Rscript tests/reference/regression.R > tests/reference/regression_reference.json
#
# Every number is written with 17 significant digits; the inputs are stored beside
# the outputs. The cases are shaped like benchmark validation: iteration counts at
# 1/8, 1/4, 1/2 and all of a sample (x, repeated: ties), times in ns (y).
#   line   lm(y ~ x): slope, intercept, their standard errors, 95% half-widths
#          qt(0.975, n - 2) * se, r.squared; the slope's p-value two-sided and, from
#          the same t statistic, one-sided (pt) for "greater" and "less"
#   trend  Theil-Sen: the median of the slopes (y_j - y_i) / (x_j - x_i) over pairs
#          i < j with x_i != x_j; Sen's (1968, eq. 2.6) 95% interval: with N slopes,
#          sigma^2 = (n(n-1)(2n+5) - sum over tied groups of x and of y of
#          t(t-1)(2t+5)) / 18, C = qnorm(0.975) sigma, the sorted slopes' ranks
#          round((N - C) / 2) and round((N + C) / 2) + 1 (clamped to 1..N), written
#          here from the paper, not from any library's code;
#          cor.test(x, y, method = "kendall", alternative = "greater"): tau (tau-b) and
#          its p-value (normal approximation where there are ties, exact without)
options(digits = 17)

num <- function(x) {
  if (length(x) == 1) return(sprintf("%.17g", x))
  paste0("[", paste(sprintf("%.17g", x), collapse = ", "), "]")
}
obj <- function(kv) {
  paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")
}

ties_term <- function(v) {
  t <- table(v)
  t <- t[t > 1]
  sum(t * (t - 1) * (2 * t + 5))
}

sen <- function(x, y) {
  n <- length(x)
  slopes <- c()
  for (i in 1:(n - 1)) for (j in (i + 1):n) if (x[i] != x[j]) slopes <- c(slopes, (y[j] - y[i]) / (x[j] - x[i]))
  slopes <- sort(slopes)
  N <- length(slopes)
  sigma <- sqrt((n * (n - 1) * (2 * n + 5) - ties_term(x) - ties_term(y)) / 18)
  C <- qnorm(0.975) * sigma
  lo <- max(round((N - C) / 2), 1)
  hi <- min(round((N + C) / 2) + 1, N)
  list(slope = median(slopes), low = slopes[lo], high = slopes[hi])
}

one_case <- function(name, x, y) {
  fit <- summary(lm(y ~ x))
  co <- fit$coefficients
  df <- length(x) - 2
  t_slope <- co["x", "t value"]
  q <- qt(0.975, df)
  ts <- sen(x, y)
  kt <- suppressWarnings(cor.test(x, y, method = "kendall", alternative = "greater"))
  obj(list(
    name = sprintf("\"%s\"", name), x = num(x), y = num(y),
    slope = num(co["x", "Estimate"]), intercept = num(co["(Intercept)", "Estimate"]),
    slope_se = num(co["x", "Std. Error"]), intercept_se = num(co["(Intercept)", "Std. Error"]),
    slope_ci = num(q * co["x", "Std. Error"]), intercept_ci = num(q * co["(Intercept)", "Std. Error"]),
    r_squared = num(fit$r.squared), p_two_sided = num(co["x", "Pr(>|t|)"]),
    p_greater = num(pt(t_slope, df, lower.tail = FALSE)), p_less = num(pt(t_slope, df)),
    theil_slope = num(ts$slope), theil_low = num(ts$low), theil_high = num(ts$high),
    tau = num(unname(kt$estimate)), tau_p = num(kt$p.value)
  ))
}

set.seed(20261126)
counts <- rep(c(125, 250, 500, 1000), each = 5)
growing <- round(3000 + 2.5 * counts + rnorm(20, 0, 40), 1)
preempted <- growing
preempted[c(3, 14)] <- preempted[c(3, 14)] * 20
flat <- round(5000 + rnorm(20, 0, 30), 1)
fixed_cost <- round(90000 + 1.2 * counts + rnorm(20, 0, 25), 1)
medians_x <- c(125, 250, 500, 1000)
medians_y <- c(3301.5, 3622.25, 4259, 5503.75)
tied_y <- c(10, 10, 12, 12, 12, 15, 15, 18, 18, 18, 20, 20, 21, 21, 21, 30, 30, 29, 29, 29)
cases <- c(
  one_case("growing", counts, growing),
  one_case("preempted", counts, preempted),
  one_case("flat", counts, flat),
  one_case("fixed_cost", counts, fixed_cost),
  one_case("medians", medians_x, medians_y),
  one_case("tied_times", counts, tied_y)
)
cat(paste0("{\"r_version\": \"", R.version$major, ".", R.version$minor, "\", \"cases\": [\n",
           paste(cases, collapse = ",\n"), "\n]}\n"))
