# Reference values for tests/stats/test_power.py and tests/stats/test_multiple.py.
#
# Regenerate (R 4.2.2, base R only) from the repository root:
#   Rscript tests/reference/power_multiple.R > tests/reference/power_multiple_reference.json
#
# power.t.test: two-sided, strict = FALSE (R's defaults); type "two.sample"
# (n per group) and "paired" (n pairs, sd = SD of the differences).
# For each case "n_r" is R's printed n (uniroot, tol = .Machine$double.eps^0.25,
# so within ~1.2e-4 of the root) and "n_exact" the same call with tol = 1e-12.
# p.adjust: methods "holm" and "BH".
options(digits = 17)

num <- function(x) sprintf("%.17g", x)
vec <- function(x) paste0("[", paste(sprintf("%.17g", x), collapse = ", "), "]")
obj <- function(...) {
  kv <- list(...)
  paste0("{", paste(sprintf("\"%s\": %s", names(kv), unlist(kv)), collapse = ", "), "}")
}
str <- function(s) sprintf("\"%s\"", s)

solve_n <- expand.grid(
  delta = c(0.3, 1, 2.5, 10), sd = c(1, 1912 / 50), sig.level = c(0.05, 0.01, 0.001),
  power = c(0.8, 0.9, 0.95), type = c("two.sample", "paired"), stringsAsFactors = FALSE
)
solve_n$delta <- solve_n$delta * solve_n$sd  # the same effect sizes in sd units
n_cases <- character(0)
for (i in seq_len(nrow(solve_n))) {
  r <- solve_n[i, ]
  n_r <- power.t.test(delta = r$delta, sd = r$sd, sig.level = r$sig.level, power = r$power,
                      type = r$type)$n
  n_exact <- power.t.test(delta = r$delta, sd = r$sd, sig.level = r$sig.level, power = r$power,
                          type = r$type, tol = 1e-12)$n
  n_cases <- c(n_cases, obj(effect = num(r$delta), sd = num(r$sd), alpha = num(r$sig.level),
                            power = num(r$power), type = str(r$type), n_r = num(n_r),
                            n_exact = num(n_exact)))
}
# seed 000's own call: power.t.test(delta=50, sd=1912, sig.level=0.01, power=0.95) -> 52100.88
seed <- power.t.test(delta = 50, sd = 1912, sig.level = 0.01, power = 0.95)
seed_exact <- power.t.test(delta = 50, sd = 1912, sig.level = 0.01, power = 0.95, tol = 1e-12)
n_cases <- c(n_cases, obj(effect = num(50), sd = num(1912), alpha = num(0.01), power = num(0.95),
                          type = str("two.sample"), n_r = num(seed$n),
                          n_exact = num(seed_exact$n)))

solve_power <- expand.grid(
  n = c(2, 3.5, 6, 20, 100, 1000), delta = c(0.1, 0.5, 1, -1), sd = c(1, 2),
  sig.level = c(0.05, 0.01), type = c("two.sample", "paired"), stringsAsFactors = FALSE
)
p_cases <- character(0)
for (i in seq_len(nrow(solve_power))) {
  r <- solve_power[i, ]
  p <- power.t.test(n = r$n, delta = r$delta, sd = r$sd, sig.level = r$sig.level,
                    type = r$type)$power
  p_cases <- c(p_cases, obj(n = num(r$n), effect = num(r$delta), sd = num(r$sd),
                            alpha = num(r$sig.level), type = str(r$type), power = num(p)))
}

pv <- list(
  c(0.01, 0.04, 0.03, 0.005, 0.20),                       # statistics.md section 8
  c(0.5),
  c(0.01, 0.01, 0.02, 0.02, 0.5, 1),                      # ties
  c(1e-10, 0.049, 0.051, 0.3, 0.7, 0.9, 0.001, 0.0002),
  c(0.9, 0.8, 0.7, 0.6),                                  # all large
  c(0, 0.2, 0.04, 1)
)
adj_cases <- character(0)
for (p in pv) {
  adj_cases <- c(adj_cases, obj(p = vec(p), holm = vec(p.adjust(p, "holm")),
                                bh = vec(p.adjust(p, "BH"))))
}

cat("{\n")
cat(sprintf("  \"generator\": %s,\n", str(paste(R.version.string, "- tests/reference/power_multiple.R"))))
cat("  \"uniroot_tol\": ", num(.Machine$double.eps^0.25), ",\n", sep = "")
cat("  \"solve_n\": [\n    ", paste(n_cases, collapse = ",\n    "), "\n  ],\n", sep = "")
cat("  \"solve_power\": [\n    ", paste(p_cases, collapse = ",\n    "), "\n  ],\n", sep = "")
cat("  \"p_adjust\": [\n    ", paste(adj_cases, collapse = ",\n    "), "\n  ]\n", sep = "")
cat("}\n")
