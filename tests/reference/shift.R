# Reference values for tests/stats/test_shift.py (quantile_ranks, quantile_ci, shift_function).
#
# Regenerate (R 4.2.2, base R only) from the repository root:
#   Rscript tests/reference/shift.R > tests/reference/shift_reference.json
#
# Numbers are written with 17 significant digits so the JSON round-trips doubles.
#
# Definitions (from the textbook, not from pairbench):
#   ranks      l = qbinom(a/2, n, p), u = qbinom(1 - a/2, n, p) + 1 (1-based order
#              statistics; l = 0 / u = n + 1 mean "unbounded"), a = 1 - conf, and the
#              exact coverage P(l <= B <= u - 1) = pbinom(u - 1) - pbinom(l - 1),
#              B ~ Binomial(n, p) (Conover, Practical Nonparametric Statistics,
#              3rd ed., 3.2).
#   estimate   quantile(x, p, type = 7)
#   shift      for each decile q: d_q = Q_q(y) - Q_q(x), interval
#              [y_(l) - x_(u), y_(u) - x_(l)] with each interval at
#              1 - (1 - conf) / 18 (Bonferroni over 9 deciles and 2 samples);
#              "pure_shift_excluded" when max(lower) > min(upper).
options(digits = 17)

num <- function(x) {
  if (length(x) == 1 && is.na(x)) return("null")
  if (length(x) == 1) return(sprintf("%.17g", x))
  paste0("[", paste(ifelse(is.na(x), "null", sprintf("%.17g", x)), collapse = ", "), "]")
}
ints <- function(x) paste0("[", paste(sprintf("%d", as.integer(x)), collapse = ", "), "]")
obj <- function(kv) paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")

ranks <- function(n, p, conf) {
  a <- 1 - conf
  l <- qbinom(a / 2, n, p)
  u <- qbinom(1 - a / 2, n, p) + 1
  below <- if (l >= 1) pbinom(l - 1, n, p) else 0
  upto <- if (u <= n) pbinom(u - 1, n, p) else 1
  list(n = n, p = p, conf = conf, low = l, high = u, achieved = upto - below)
}

ns <- c(1, 2, 3, 5, 9, 10, 19, 20, 30, 47, 50, 100, 101, 1000, 12345, 1000000)
ps <- c(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.05, 0.99)
confs <- c(0.95, 0.99, 1 - 0.05 / 18, 1 - 0.01 / 18)
rank_rows <- c()
for (n in ns) for (p in ps) for (conf in confs) {
  r <- ranks(n, p, conf)
  rank_rows <- c(rank_rows, obj(list(n = sprintf("%d", r$n), p = num(r$p), conf = num(r$conf),
                                     low = sprintf("%d", r$low), high = sprintf("%d", r$high),
                                     achieved = num(r$achieved))))
}

shift_case <- function(name, x, y, conf) {
  qs <- seq(0.1, 0.9, by = 0.1)
  each <- 1 - (1 - conf) / (2 * length(qs))
  xs <- sort(x); ys <- sort(y)
  os <- function(v, k) if (k >= 1 && k <= length(v)) v[k] else NA
  d <- lo <- hi <- xl <- xh <- yl <- yh <- numeric(length(qs))
  for (i in seq_along(qs)) {
    rx <- ranks(length(x), qs[i], each); ry <- ranks(length(y), qs[i], each)
    xl[i] <- os(xs, rx$low); xh[i] <- os(xs, rx$high)
    yl[i] <- os(ys, ry$low); yh[i] <- os(ys, ry$high)
    d[i] <- quantile(y, qs[i], type = 7, names = FALSE) - quantile(x, qs[i], type = 7, names = FALSE)
    lo[i] <- yl[i] - xh[i]; hi[i] <- yh[i] - xl[i]
  }
  excluded <- if (all(is.na(lo)) || all(is.na(hi))) FALSE else max(lo, na.rm = TRUE) > min(hi, na.rm = TRUE)
  obj(list(name = sprintf("\"%s\"", name), conf = num(conf), x = num(x), y = num(y),
           baseline_estimate = num(quantile(x, qs, type = 7, names = FALSE)),
           candidate_estimate = num(quantile(y, qs, type = 7, names = FALSE)),
           baseline_low = num(xl), baseline_high = num(xh),
           candidate_low = num(yl), candidate_high = num(yh),
           difference = num(d), low = num(lo), high = num(hi),
           pure_shift_excluded = if (excluded) "true" else "false"))
}

set.seed(20261122)
x1 <- round(1000 + rlnorm(300, 5, 0.3), 3)
y1 <- round(1020 + rlnorm(300, 5, 0.3), 3)            # a pure shift of 20
x2 <- round(1000 + rlnorm(400, 5, 0.2), 3)
y2 <- round(c(950 + rlnorm(300, 5, 0.2), 1400 + rlnorm(100, 5, 0.2)), 3)  # faster body, slow tail
x3 <- c(5, 1, 4, 2, 3, 9, 7)                          # too few: unbounded ends
y3 <- c(6, 2, 8, 3, 3, 10)
x4 <- rep(c(100, 101, 102), times = c(40, 30, 30))   # heavy ties
y4 <- rep(c(100, 101, 103), times = c(30, 30, 40))
cases <- c(shift_case("pure_shift", x1, y1, 0.95), shift_case("tail_change", x2, y2, 0.95),
           shift_case("tiny", x3, y3, 0.95), shift_case("ties", x4, y4, 0.99))

cat("{\n")
cat(sprintf("\"generated_by\": \"%s, tests/reference/shift.R\",\n", R.version.string))
cat("\"ranks\": [\n", paste(rank_rows, collapse = ",\n"), "\n],\n")
cat("\"shift\": [\n", paste(cases, collapse = ",\n"), "\n]\n")
cat("}\n")
