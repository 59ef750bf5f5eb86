# Small two-class data with a factor predictor, and one fit shared by the tests.

skip_without_python <- function() {
  if (!csvm_python_available()) {
    skip("the Python module csvm_stats is not available to reticulate (set RETICULATE_PYTHON)")
  }
}

make_data <- function(n = 240, seed = 42) {
  set.seed(seed)
  d <- data.frame(
    dose = rnorm(n),
    age = rnorm(n, 50, 10),
    site = factor(sample(c("north", "south", "west"), n, replace = TRUE))
  )
  score <- 1.5 * d$dose + 0.04 * (d$age - 50) + 0.8 * (d$site == "south") + rnorm(n, sd = 0.7)
  d$status <- factor(ifelse(score > 0, "case", "control"), levels = c("control", "case"))
  d
}

fit_example <- function(data = make_data(), ...) {
  csvm(status ~ ., data = data, tpr_min = 0.8, time_limit = 20, bound = "binomial",
       random_state = 7L, ...)
}
