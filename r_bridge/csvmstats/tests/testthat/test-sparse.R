# csvm(..., penalty = "l1") and csvm(..., max_features = s): feature selection inside the CSVM
# (csvm_stats.sparse), with the selected features in fit$selected, print and summary.

sparse_data <- function(n = 200, p = 12, seed = 3) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, dimnames = list(NULL, paste0("g", seq_len(p))))
  d <- data.frame(x)
  score <- x[, 1] - x[, 2] + 0.5 * rnorm(n)
  d$status <- factor(ifelse(score > 0, "case", "control"), levels = c("control", "case"))
  d
}

sparse_fit <- function(...) {
  csvm(status ~ ., data = sparse_data(), tpr_min = 0.8, bound = "binomial", time_limit = 60,
       random_state = 1L, ...)
}

test_that("penalty = 'l1' selects features: fit$selected holds their coefficients, the others are zero", {
  skip_without_python()
  fit <- sparse_fit(penalty = "l1")
  selected <- fit$selected
  expect_type(selected, "double")
  expect_true(length(selected) >= 1L && length(selected) < 12L)
  expect_true(all(c("g1", "g2") %in% names(selected)))
  expect_equal(unname(selected), unname(coef(fit)[names(selected)]))
  expect_true(all(selected != 0))
  expect_true(all(coef(fit)[setdiff(names(coef(fit)), c("(Intercept)", names(selected)))] == 0))
  expect_true(fit$rates["tpr", "met"])
})

test_that("max_features = s keeps at most s features", {
  skip_without_python()
  fit <- sparse_fit(max_features = 2)
  expect_lte(length(fit$selected), 2L)
  expect_setequal(names(fit$selected), c("g1", "g2"))
  expect_true(all(coef(fit)[setdiff(names(coef(fit)), c("(Intercept)", names(fit$selected)))] == 0))
  expect_equal(fit$options$max_features, 2)
  # the same split as the full model (the seed is in the call), so the held-out counts match
  full <- update(fit, max_features = NULL)
  expect_equal(length(full$selected), 0L)
  expect_equal(full$rates$heldout_n, fit$rates$heldout_n)
})

test_that("print and summary name the selected features", {
  skip_without_python()
  fit <- sparse_fit(max_features = 2)
  expect_output(print(fit), "Selected features \\(2 of 12, max_features = 2\\): g[12], g[12]")
  printed <- capture.output(print(summary(fit)))
  expect_true(any(grepl("^Selected features \\(2 of 12, max_features = 2\\)", printed)))
  expect_true(any(grepl("Coefficients of the selected features", printed)))
  expect_true(any(grepl("10 more coefficients, all zero", printed)))
  l1 <- sparse_fit(penalty = "l1")
  expect_output(print(l1), "Selected features \\([0-9]+ of 12, penalty = \"l1\"\\)")
  full <- fit_example()
  expect_false(any(grepl("Selected features", capture.output(print(summary(full))))))
})

test_that("sparse options get R errors when misused", {
  skip_without_python()
  expect_error(sparse_fit(max_features = 0), "max_features must be a whole number >= 1")
  expect_error(sparse_fit(max_features = 2.5), "max_features must be a whole number")
  expect_error(sparse_fit(penalty = "lasso"), "penalty must be one of \"l1\", \"l2\"")
  expect_error(sparse_fit(penalty = "l1", kernel = "rbf"), "^csvm: .*linear")
})

test_that("clock = 'cpu' reaches the sparse fit; a bad clock is an R error", {
  skip_without_python()
  fit <- sparse_fit(max_features = 2, clock = "cpu")
  expect_setequal(names(fit$selected), c("g1", "g2"))
  expect_equal(fit$options$clock, "cpu")
  expect_equal(fit$call$clock, "cpu")
  expect_error(sparse_fit(max_features = 2, clock = "sundial"), "clock must be one of \"wall\", \"cpu\"")
})
