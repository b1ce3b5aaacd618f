# Reference values for pairbench.stats.ranks, from R's own wilcox.test.
#
#   Rscript tests/reference/ranks.R > tests/reference/ranks_reference.json
#
# Generated with R 4.2.2 (the R installed on the build machine; its
# wilcox.test.default is the one pairbench reproduces). No packages needed:
# the JSON is written by hand, numbers with 17 significant digits so that
# doubles round-trip exactly; NaN and +-Inf are written as the strings
# "NaN", "Inf", "-Inf". Every case stores its input data, so tests need no R.
#
# Data: the three distributions of seed 000's appendix (rlnorm(n, 5, 0.2);
# 1000 + rmixed(n), the 70/20/10 lognormal mixture; routlier(n), 1% outliers),
# coarse-timer data (values rounded to a timer tick: heavy ties), small
# integers, and symmetric data for the one-sample test.

rmixed <- function(n, shape = 0.2, scale = 2000) {
  g1 <- rlnorm(0.7 * n, sdlog = shape)
  g2 <- 1.0 + rlnorm(0.2 * n, sdlog = shape)
  g3 <- 3.0 + rlnorm(0.1 * n, sdlog = shape)
  v <- scale * append(append(g1, g2), g3)
  sample(v)
}

routlier <- function(n, scale = 2000, s1 = 0.2, l1 = 0, s2 = 0.1, l2 = 1.0, fraction = 0.01) {
  g1 <- l1 + rlnorm((1.0 - fraction) * n, sdlog = s1)
  g2 <- l2 + rlnorm(fraction * n, sdlog = s2)
  v <- scale * append(g1, g2)
  sample(v)
}

draw <- function(dist, n) {
  switch(dist,
    lnorm = rlnorm(n, 5, 0.2),
    mixed = 1000 + rmixed(n),
    outlier = routlier(n),
    coarse = round(rlnorm(n, 5, 0.2)),            # 1-unit timer tick
    coarse10 = 10 * round(rlnorm(n, 5, 0.2) / 10), # 10-unit tick: very heavy ties
    smallint = as.double(sample(1:6, n, replace = TRUE)),
    normal = rnorm(n, 0.3, 1),
    skewed = rlnorm(n, 0, 1) - 1,
    stop("unknown dist ", dist))
}

# --- JSON by hand -----------------------------------------------------------------
num <- function(v) {
  if (length(v) == 0 || is.null(v)) return("null")
  if (is.na(v) && !is.nan(v)) return("\"NaN\"")
  if (is.nan(v)) return("\"NaN\"")
  if (is.infinite(v)) return(if (v > 0) "\"Inf\"" else "\"-Inf\"")
  sprintf("%.17g", v)
}
vec <- function(v) paste0("[", paste(vapply(v, num, ""), collapse = ","), "]")
str <- function(s) paste0("\"", gsub("\"", "\\\\\"", s), "\"")
strs <- function(s) paste0("[", paste(vapply(s, str, ""), collapse = ","), "]")
obj <- function(...) {
  kv <- list(...)
  paste0("{", paste(sprintf("\"%s\":%s", names(kv), unlist(kv)), collapse = ","), "}")
}

# wilcox.test with its warnings captured as data
run <- function(...) {
  w <- character(0)
  res <- withCallingHandlers(wilcox.test(...), warning = function(cond) {
    w <<- c(w, conditionMessage(cond))
    invokeRestart("muffleWarning")
  })
  list(res = res, warnings = w)
}

two_sample_case <- function(name, x, y, conf) {
  r <- run(x, y, conf.int = TRUE, conf.level = conf)
  t <- r$res
  obj(name = str(name), conf = num(conf), n = num(length(x)), m = num(length(y)),
      W = num(unname(t$statistic)), p = num(t$p.value),
      low = num(t$conf.int[1]), high = num(t$conf.int[2]),
      conf_level = num(attr(t$conf.int, "conf.level")),
      r_estimate = num(unname(t$estimate)),
      hl_median = num(median(outer(x, y, "-"))),
      method = str(t$method), warnings = strs(r$warnings),
      x = vec(x), y = vec(y))
}

one_sample_case <- function(name, x, y, conf) {
  r <- if (is.null(y)) run(x, conf.int = TRUE, conf.level = conf)
       else run(x, y, paired = TRUE, conf.int = TRUE, conf.level = conf)
  t <- r$res
  d <- if (is.null(y)) x else x - y
  d <- d[d != 0]
  walsh <- outer(d, d, "+")
  pm <- if (length(d)) median(walsh[!lower.tri(walsh)] / 2) else NaN
  obj(name = str(name), conf = num(conf), n = num(length(x)),
      V = num(unname(t$statistic)), p = num(t$p.value),
      low = num(t$conf.int[1]), high = num(t$conf.int[2]),
      conf_level = num(attr(t$conf.int, "conf.level")),
      r_estimate = num(unname(t$estimate)), pseudomedian = num(pm),
      method = str(t$method), warnings = strs(r$warnings),
      x = vec(x), y = if (is.null(y)) "null" else vec(y))
}

confs <- c(0.9, 0.95, 0.99)

# --- two-sample cases ---------------------------------------------------------------
sizes <- list(c(5, 5), c(7, 12), c(12, 7), c(20, 30), c(49, 49), c(30, 60), c(50, 50),
              c(100, 80), c(200, 200), c(500, 300), c(1000, 1000), c(2000, 1500))
shifts <- list(lnorm = 5, mixed = 50, outlier = 20, coarse = 4, coarse10 = 10, smallint = 1)
two <- character(0)
i <- 0
for (dist in names(shifts)) {
  for (s in seq_along(sizes)) {
    nm <- sizes[[s]]
    if (dist %in% c("smallint", "coarse10") && nm[1] > 500) next
    for (shift in c(0, shifts[[dist]])) {
      i <- i + 1
      set.seed(1000 + i)
      x <- draw(dist, nm[1])
      y <- draw(dist, nm[2]) + shift
      conf <- confs[(i %% 3) + 1]
      two <- c(two, two_sample_case(sprintf("%s n=%d m=%d shift=%g", dist, nm[1], nm[2], shift),
                                    x, y, conf))
    }
  }
}
# edge cases of R's interval: root outside the bracket, unreachable levels, tiny n
two <- c(two,
  two_sample_case("bracket: one x against 59 y", 1, as.double(2:60), 0.95),
  two_sample_case("exact: n=m=2 not achievable", c(1.5, 2.5), c(0.1, 3.7), 0.95),
  two_sample_case("exact: n=m=3 at 0.99", c(1.1, 2.3, 3.8), c(0.4, 1.7, 2.9), 0.99),
  two_sample_case("ties, tiny: x const", c(2, 2, 2, 2), c(1, 2, 3, 4, 5), 0.95),
  two_sample_case("ties: all within ties", c(1, 1, 2, 2, 3, 3), c(2, 2, 3, 3, 4, 4), 0.9))
# Timer-tick data on which R's root lands one step away from the closed-form order
# statistic (found by searching seeds: R's uniroot evaluates the tie-corrected Z(d)
# exactly at tied differences). Each case regenerates its data from its seed.
tick_case <- function(seed, pool) {
  set.seed(seed)
  n <- sample(pool, 1); m <- sample(pool, 1)
  k <- sample(2:8, 1); lo <- sample(0:3, 1)
  x <- as.double(sample(lo:(lo + k), n, replace = TRUE))
  y <- as.double(sample(0:k, m, replace = TRUE))
  conf <- c(0.9, 0.95, 0.99)[1 + seed %% 3]
  two_sample_case(sprintf("tick seed=%d n=%d m=%d", seed, n, m), x, y, conf)
}
small_pool <- c(5:30, 40, 60, 100, 200)
for (seed in c(173, 195, 196, 268, 347, 348, 359, 368, 376, 389, 391, 431, 454, 478, 496)) {
  two <- c(two, tick_case(seed, small_pool))
}
tick_case_large <- function(seed) {
  set.seed(seed)
  pool <- c(100, 150, 300, 600)
  n <- sample(pool, 1); m <- sample(pool, 1)
  k <- sample(2:6, 1); lo <- sample(0:2, 1)
  x <- as.double(sample(lo:(lo + k), n, replace = TRUE))
  y <- as.double(sample(0:k, m, replace = TRUE))
  conf <- c(0.9, 0.95, 0.99)[1 + seed %% 3]
  two_sample_case(sprintf("tick seed=%d n=%d m=%d", seed, n, m), x, y, conf)
}
for (seed in c(7, 48, 335)) two <- c(two, tick_case_large(seed))
# A binary timer (two ticks): both of R's roots sit on the step at 0 and come out in
# the wrong order (low > high by a few 1e-6)
set.seed(1)
invisible(sample(-1:1, 3000, replace = TRUE, prob = c(0.1, 0.8, 0.1)))
two <- c(two, two_sample_case("binary timer: R's roots reversed",
  as.double(sample(100:101, 1500, replace = TRUE, prob = c(0.5, 0.5))),
  as.double(sample(100:101, 1500, replace = TRUE, prob = c(0.5, 0.5))), 0.95))
set.seed(77)
for (k in 1:6) {  # heavily tied integers at several sizes and levels (coarse timers)
  n <- c(8, 15, 40, 60, 120, 300)[k]
  x <- as.double(sample(3:9, n, replace = TRUE))
  y <- as.double(sample(1:7, n + 3, replace = TRUE))
  two <- c(two, two_sample_case(sprintf("tick ties n=%d", n), x, y, confs[(k %% 3) + 1]))
}

# --- one-sample and paired cases ------------------------------------------------------
one <- character(0)
j <- 0
for (dist in c("normal", "skewed", "coarse", "smallint")) {
  for (n in c(5, 9, 10, 20, 49, 50, 100, 500, 2000)) {
    if (dist == "smallint" && n > 500) next
    j <- j + 1
    set.seed(5000 + j)
    conf <- confs[(j %% 3) + 1]
    if (dist %in% c("normal", "skewed")) {
      one <- c(one, one_sample_case(sprintf("one-sample %s n=%d", dist, n), draw(dist, n), NULL, conf))
    }
    # paired: a common per-pair level (drift) plus noise, candidate shifted
    base <- draw(if (dist %in% c("normal", "skewed")) "lnorm" else dist, n)
    x <- base + draw(if (dist == "skewed") "skewed" else "normal", n)
    y <- base + draw(if (dist == "skewed") "skewed" else "normal", n)
    if (dist %in% c("coarse", "smallint")) { x <- round(x); y <- round(y) }
    one <- c(one, one_sample_case(sprintf("paired %s n=%d", dist, n), x, y, conf))
  }
}
one <- c(one,
  one_sample_case("one-sample tied: DescTools #97", c(0.7, 0.5, 0.5), NULL, 0.95),
  one_sample_case("one-sample: HypothesisTests.jl #363", c(1:8, 20, 30), NULL, 0.95),
  one_sample_case("one-sample: n=1", 2.5, NULL, 0.95),
  one_sample_case("one-sample: all tied", c(3, 3, 3, 3), NULL, 0.95),
  one_sample_case("paired: zeros and ties", c(5, 6, 7, 7, 8, 9, 10, 4), c(5, 5, 6, 8, 8, 7, 7, 4), 0.9),
  one_sample_case("paired: R ?wilcox.test depression",
                  c(1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30),
                  c(0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29), 0.95))

# One-sample timer-tick data on which R's root is a step away from the closed form
# (seeds found by the same search as the two-sample tick cases).
for (seed in c(57, 77, 97, 107, 136, 159, 202, 375)) {
  set.seed(seed)
  n <- sample(c(8:30, 40, 60, 100, 300), 1); k <- sample(1:4, 1)
  x <- as.double(sample(-k:(k + 1), n, replace = TRUE))
  conf <- c(0.9, 0.95, 0.99)[1 + seed %% 3]
  one <- c(one, one_sample_case(sprintf("one-sample tick seed=%d n=%d", seed, n), x, NULL, conf))
}

cat("{\n")
cat(sprintf("\"generated_by\":%s,\n", str("Rscript tests/reference/ranks.R")))
cat(sprintf("\"r_version\":%s,\n", str(R.version.string)))
cat("\"two_sample\":[\n", paste(two, collapse = ",\n"), "\n],\n", sep = "")
cat("\"one_sample\":[\n", paste(one, collapse = ",\n"), "\n]\n", sep = "")
cat("}\n")
