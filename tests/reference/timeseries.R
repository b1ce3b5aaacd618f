# Reference values for tests/stats/test_timeseries.py (autocovariance, autocorrelation,
# ljung_box, mean_error).
#
# Regenerate (R 4.2.2; sandwich 3.0-2 from the Debian package r-cran-sandwich,
# installed with `apt-get install -y r-cran-sandwich`) from the repository root:
#   Rscript tests/reference/timeseries.R > tests/reference/timeseries_reference.json
#
# Every number is written with 17 significant digits; the inputs are stored
# beside the outputs. The error-of-the-mean estimators are written below as plain
# loops straight from their definitions, independently of pairbench's numpy code:
#   batch means    b = floor(sqrt(n)) values per batch, a = floor(n / b) batches
#                  taken from the start; se = sd(batch means) / sqrt(a); t_{a-1}
#   truncated-lag  seed 001: (g0 + 2 sum_{k=1}^{L} (1 - k/n) g_k) / n, L = floor(sqrt(n)),
#                  g_k = (1/n) sum_{t=1}^{n-k} (x_t - xbar)(x_{t+k} - xbar); normal quantile
#   newey-west     Bartlett weights 1 - j/(b+1), j = 1..floor(b); automatic bandwidth of
#                  Newey & West (1994): m = ceil(4 (n/100)^(2/9)) pilot lags,
#                  s0 = g0 + 2 sum_{j<=m} g_j, s1 = 2 sum_{j<=m} j g_j,
#                  b = 1.1447 ((s1/s0)^2 n)^(1/3); normal quantile
#   iid            sd(x) / sqrt(n); t_{n-1}
#   autoregressive ar(x, aic = TRUE) (Yule-Walker; order.max = floor(10 log10 n)):
#                  Omega = var.pred / (1 - S)^2 with S = sum(ar), which is
#                  coda::spectrum0.ar(x)$spec (checked below when coda is installed);
#                  then S corrected to S + (1 + 4 S) / n when the order is > 0;
#                  se = sqrt(Omega / n), n_eff = var(x) / se^2, t quantile on n_eff / 2 df;
#                  n_eff < 4: no interval; n_eff > n with the lag-1 autocorrelation
#                  not below -qnorm(0.975) / sqrt(n): se = sd(x) / sqrt(n), n_eff = n
# and, for the Bartlett kernel at integer lags L, sandwich::NeweyWest(lm(x ~ 1),
# lag = L, prewhite = FALSE, adjust = FALSE), an implementation nobody here wrote.
# acf(), Box.test() and qt()/qnorm() are base R.
options(digits = 17)
have_sandwich <- requireNamespace("sandwich", quietly = TRUE)
have_coda <- requireNamespace("coda", quietly = TRUE)  # Debian r-cran-coda 0.19-4

num <- function(x) {
  if (is.null(x) || length(x) == 0) return("[]")
  if (length(x) == 1 && is.na(x)) return("null")
  if (length(x) == 1) return(sprintf("%.17g", x))
  paste0("[", paste(sprintf("%.17g", x), collapse = ", "), "]")
}
obj <- function(kv) {
  paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")
}

gamma_k <- function(x, k) {
  n <- length(x)
  d <- x - mean(x)
  total <- 0
  for (t in seq_len(n - k)) total <- total + d[t] * d[t + k]
  total / n
}

batch_means <- function(x, shift, conf = 0.95) {
  n <- length(x)
  b <- floor(sqrt(n))
  a <- floor(n / b)
  means <- numeric(a)
  for (i in seq_len(a)) means[i] <- mean(x[((i - 1) * b + 1):(i * b)])
  se <- sd(means) / sqrt(a)
  q <- qt(0.5 + conf / 2, a - 1)
  list(se = num(se), df = a - 1, bandwidth = b, low = num(shift + mean(x) - q * se),
       high = num(shift + mean(x) + q * se), n_eff = num(var(x) / se^2))
}

truncated_lag <- function(x, shift, conf = 0.95) {
  n <- length(x)
  L <- floor(sqrt(n))
  v <- gamma_k(x, 0)
  for (k in seq_len(L)) v <- v + 2 * (1 - k / n) * gamma_k(x, k)
  v <- v / n
  out <- list(var_mean = num(v), bandwidth = L)
  if (v > 0) {
    se <- sqrt(v)
    q <- qnorm(0.5 + conf / 2)
    out <- c(out, list(se = num(se), low = num(shift + mean(x) - q * se),
                       high = num(shift + mean(x) + q * se), n_eff = num(var(x) / v)))
  }
  out
}

newey_west <- function(x, shift, conf = 0.95) {
  n <- length(x)
  m <- min(ceiling(4 * (n / 100)^(2 / 9)), n - 1)
  g <- sapply(0:m, function(k) gamma_k(x, k))
  s0 <- g[1] + 2 * sum(g[-1])
  s1 <- 2 * sum((1:m) * g[-1])
  bw <- min(1.1447 * ((s1 / s0)^2 * n)^(1 / 3), n - 1)
  omega <- gamma_k(x, 0)
  if (floor(bw) >= 1) {
    for (j in 1:floor(bw)) omega <- omega + 2 * (1 - j / (bw + 1)) * gamma_k(x, j)
  }
  se <- sqrt(omega / n)
  q <- qnorm(0.5 + conf / 2)
  list(pilot = m, bandwidth = num(bw), se = num(se), low = num(shift + mean(x) - q * se),
       high = num(shift + mean(x) + q * se), n_eff = num(var(x) / se^2))
}

autoregressive <- function(x, shift, conf = 0.95) {
  n <- length(x)
  fit <- ar(x, aic = TRUE, method = "yule-walker")
  S <- sum(fit$ar)
  raw <- fit$var.pred / (1 - S)^2
  out <- list(order = fit$order, var_pred = num(fit$var.pred), sum_ar = num(S),
              spectrum0 = num(raw))
  if (have_coda) out$coda_spectrum0 <- num(unname(coda::spectrum0.ar(x)$spec))
  if (fit$order > 0) S <- S + (1 + 4 * S) / n
  se <- sqrt(fit$var.pred / (1 - S)^2 / n)
  n_eff <- var(x) / se^2
  if (S >= 1 || n_eff < 4) return(obj(c(out, list(refused = "true", n_eff = num(if (S >= 1) 0 else n_eff)))))
  note <- "false"
  if (n_eff > n) {
    lag1 <- acf(x, lag.max = 1, plot = FALSE)$acf[2]
    if (lag1 >= -qnorm(0.975) / sqrt(n)) {
      se <- sd(x) / sqrt(n)
      n_eff <- n
    } else note <- "true"
  }
  q <- qt(0.5 + conf / 2, n_eff / 2)
  obj(c(out, list(refused = "false", se = num(se), n_eff = num(n_eff), df = num(n_eff / 2),
                  low = num(shift + mean(x) - q * se), high = num(shift + mean(x) + q * se),
                  alternating_note = note)))
}

iid <- function(x, shift, conf = 0.95) {
  n <- length(x)
  se <- sd(x) / sqrt(n)
  q <- qt(0.5 + conf / 2, n - 1)
  list(se = num(se), low = num(shift + mean(x) - q * se),
       high = num(shift + mean(x) + q * se))
}

sandwich_rows <- function(x) {
  if (!have_sandwich) return("[]")
  fm <- lm(x ~ 1)
  rows <- sapply(c(0, 1, 3, 7), function(L) {
    v <- sandwich::NeweyWest(fm, lag = L, prewhite = FALSE, adjust = FALSE)
    obj(list(lag = L, se = num(sqrt(v[1, 1]))))
  })
  paste0("[", paste(rows, collapse = ", "), "]")
}

series_case <- function(name, x_in) {
  # Everything below except the mean is shift invariant, so it is computed on
  # x = x_in - min(x_in): exact for the 1e9-offset case, where R would otherwise
  # centre on a mean rounded to ulp(1e9) = 1.2e-7 and lose ~9 digits.
  shift <- min(x_in)
  x <- x_in - shift
  n <- length(x)
  a <- acf(x, plot = FALSE)                       # lag.max = floor(10 log10(n))
  r <- as.numeric(a$acf)[-1]
  z <- qnorm(0.975)
  bartlett <- z * sqrt((1 + 2 * cumsum(c(0, r[-length(r)]^2))) / n)
  cov5 <- as.numeric(acf(x, lag.max = 5, type = "covariance", plot = FALSE)$acf)
  h <- min(10, n %/% 5)
  lb <- sapply(c(h, 1, 5), function(lag) {
    bt <- Box.test(x, lag = lag, type = "Ljung-Box")
    obj(list(lag = lag, statistic = num(unname(bt$statistic)), pvalue = num(bt$p.value)))
  })
  obj(list(
    name = sprintf("\"%s\"", name), x = num(x_in), n = n, shift = num(shift),
    mean = num(shift + mean(x)),
    acf = num(r), white_noise_band = num(z / sqrt(n)), bartlett_band = num(bartlett),
    autocovariance_0_5 = num(cov5),
    ljung_box = paste0("[", paste(lb, collapse = ", "), "]"),
    batch_means = obj(batch_means(x, shift)), truncated_lag = obj(truncated_lag(x, shift)),
    newey_west = obj(newey_west(x, shift)), iid = obj(iid(x, shift)),
    autoregressive = autoregressive(x, shift),
    sandwich_bartlett = sandwich_rows(x)
  ))
}

cases <- list()
set.seed(11)
cases$ar1_phi05_200 <- 100 + as.numeric(stats::filter(rnorm(200), 0.5, method = "recursive"))
set.seed(12)
cases$ar1_phi09_500 <- 50 + as.numeric(stats::filter(rnorm(500), 0.9, method = "recursive"))
set.seed(13)
cases$white_50 <- rnorm(50, 10, 2)
set.seed(14)
cases$lognormal_120 <- rlnorm(120, 0, 0.5)
set.seed(15)
# alternating signs: the truncated-lag sum ends on an odd lag (L = 9) and goes negative
cases$alternating_81 <- 5 + (-1)^(1:81) + rnorm(81, 0, 0.05)
set.seed(16)
cases$offset_1e9_300 <- 1e9 + round(20 * as.numeric(stats::filter(rnorm(300), 0.6, method = "recursive")))
set.seed(17)
# strong AR(1) on few samples: the autoregressive estimator gives no interval
cases$ar1_phi095_40 <- 10 + as.numeric(stats::filter(rnorm(40), 0.95, method = "recursive"))
set.seed(18)
# AR(1) with measurement noise (an ARMA(1,1)): the fit needs more than one lag
cases$ar1_noise_1000 <- as.numeric(stats::filter(rnorm(1000), 0.9, method = "recursive")) + rnorm(1000)
set.seed(19)
# negatively autocorrelated: n_eff above n, kept with a warning
cases$ar1_neg05_300 <- 3 + as.numeric(stats::filter(rnorm(300), -0.5, method = "recursive"))

out <- sapply(names(cases), function(nm) series_case(nm, cases[[nm]]))
cat("{\n")
cat(sprintf("  \"generated_by\": \"tests/reference/timeseries.R with %s; sandwich %s; coda %s\",\n",
            R.version.string,
            if (have_sandwich) as.character(packageVersion("sandwich")) else "not installed",
            if (have_coda) as.character(packageVersion("coda")) else "not installed"))
cat(sprintf("  \"cases\": [\n    %s\n  ]\n", paste(out, collapse = ",\n    ")))
cat("}\n")
