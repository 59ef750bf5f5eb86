# csvm() with a response of more than two classes: the multiclass CSVM of
# csvm_stats.multiclass, with per-class required recalls (recall_min).

multiclass_fit <- function(...) {
  csvm(Species ~ ., data = iris, recall_min = c(virginica = 0.8), bound = "binomial",
       fractions = c(0.4, 0.3, 0.3), time_limit = 60, random_state = 1L, ...)
}

test_that("a factor of three levels fits the multiclass CSVM: coefficient matrix, recall table, confusion", {
  skip_without_python()
  fit <- multiclass_fit()
  expect_s3_class(fit, c("csvm_multiclass", "csvm"), exact = TRUE)
  classes <- levels(iris$Species)
  expect_equal(fit$classes, classes)
  expect_equal(dim(coef(fit)), c(5L, 3L))
  expect_equal(dimnames(coef(fit)), list(c("(Intercept)", names(iris)[1:4]), classes))
  expect_equal(rownames(fit$rates), classes)
  expect_equal(fit$rates["virginica", "target"], 0.8)
  expect_true(is.na(fit$rates["setosa", "target"]))
  expect_false(any(vapply(fit$rates, function(v) is.numeric(v) && any(is.nan(v)), logical(1L))))
  expect_equal(fit$recall_min, c(virginica = 0.8))
  expect_equal(dimnames(fit$confusion), list(true = classes, predicted = classes))
  expect_equal(sum(fit$confusion), unname(fit$samples[["holdout"]]))
  expect_equal(unname(diag(fit$confusion)), fit$rates$heldout_correct)
  expect_equal(names(fit$statements), classes)
  expect_equal(nobs(fit), 150L)
})

test_that("the R fit is the Python fit of the same formula, data and seed", {
  skip_without_python()
  fit <- multiclass_fit()
  csvm_class <- reticulate::import("csvm_stats", convert = FALSE)$CSVM
  python_fit <- csvm_class$from_formula("Species ~ .", reticulate::r_to_py(iris),
                                        recall_min = reticulate::dict(virginica = 0.8), bound = "binomial",
                                        fractions = c(0.4, 0.3, 0.3))$fit(random_state = 1L, time_limit = 60)
  # features x classes, intercept row last; read as arrays without conversion, as test-csvm.R does: reticulate
  # 1.28 converts a pandas DataFrame through the deprecated Index.format (a FutureWarning with pandas >= 2.2)
  params <- reticulate::py_to_r(python_fit$params$to_numpy())
  colnames(params) <- reticulate::py_to_r(python_fit$params$columns$astype("str")$tolist())
  python_coef <- params[c(nrow(params), seq_len(nrow(params) - 1L)), , drop = FALSE]
  expect_equal(unname(python_coef), unname(coef(fit)), tolerance = 1e-6)
  expect_equal(colnames(python_coef), colnames(coef(fit)))
})

test_that("print and summary show the classes, the recall statements and the confusion matrix", {
  skip_without_python()
  fit <- multiclass_fit()
  expect_output(print(fit), "3 classes \\(setosa, versicolor, virginica\\)")
  printed <- capture.output(print(summary(fit)))
  expect_true(any(grepl("Held-out confusion matrix", printed)))
  expect_true(any(grepl("virginica: With 95% confidence the recall of class 'virginica'", printed)))
  expect_true(any(grepl("Joint:", printed)))
  expect_false(any(grepl("NaN|NA/", printed)))
  expect_s3_class(summary(fit), "summary.csvm_multiclass")
})

test_that("predict gives classes, a decision matrix and probabilities, NA rows in place", {
  skip_without_python()
  fit <- multiclass_fit()
  newdata <- iris[c(1, 51, 101, 2), ]
  newdata$Sepal.Length[4] <- NA
  classes <- predict(fit, newdata)
  expect_s3_class(classes, "factor")
  expect_equal(levels(classes), levels(iris$Species))
  expect_equal(names(classes), rownames(newdata))
  expect_true(is.na(classes[4]))
  decision <- predict(fit, newdata, type = "decision")
  expect_equal(dim(decision), c(4L, 3L))
  expect_equal(dimnames(decision), list(rownames(newdata), levels(iris$Species)))
  expect_true(all(is.na(decision[4, ])))
  expect_equal(as.character(classes[1:3]), colnames(decision)[apply(decision[1:3, ], 1L, which.max)])
  # the decision matrix of the training rows is fitted()
  expect_equal(predict(fit, iris[1:5, ], type = "decision"), fitted(fit)[1:5, ], tolerance = 1e-8)
  expect_equal(predict(fit), fit$fitted.class)
  prob <- suppressMessages(predict(fit, newdata, type = "prob"))
  expect_equal(dimnames(prob), list(rownames(newdata), levels(iris$Species)))
  expect_equal(unname(rowSums(prob[1:3, ])), rep(1, 3), tolerance = 1e-8)
  expect_true(all(prob[1:3, ] >= 0 & prob[1:3, ] <= 1))
  expect_true(all(is.na(prob[4, ])))
  expect_equal(predict(fit, newdata, type = "probabilities"), prob)
})

test_that("update() keeps the split; coef() of a kernel fit is an error", {
  skip_without_python()
  fit <- multiclass_fit()
  tighter <- suppressWarnings(update(fit, recall_min = c(virginica = 0.85, versicolor = 0.8)))
  expect_equal(tighter$random_state, fit$random_state)
  expect_equal(tighter$rates$heldout_n, fit$rates$heldout_n)
  expect_equal(tighter$recall_min, c(virginica = 0.85, versicolor = 0.8))
  rbf <- csvm(Species ~ ., data = iris, kernel = "rbf", bound = "binomial", time_limit = 60, random_state = 1L)
  expect_s3_class(rbf, "csvm_multiclass")
  expect_error(coef(rbf), "kernel fit")
  expect_output(print(rbf), "Kernel solution")
  expect_equal(levels(predict(rbf, iris[1:3, ])), levels(iris$Species))
})

test_that("wrong targets for several classes get R errors", {
  skip_without_python()
  expect_error(csvm(Species ~ ., data = iris, tpr_min = 0.9),
               "tpr_min is for a two-class response; this one has 3 classes")
  expect_error(csvm(Species ~ ., data = iris, recall_min = c(virginca = 0.9)),
               "recall_min names 'virginca', not a class")
  expect_error(csvm(Species ~ ., data = iris, recall_min = 0.9), "recall_min must be a named vector")
  expect_error(csvm(Species ~ ., data = iris, recall_min = c(setosa = 1.2)), "strictly between 0 and 1")
  expect_error(csvm(status ~ ., data = make_data(), recall_min = c(case = 0.9)),
               "recall_min is for a response with more than two classes")
})

test_that("a capped class target is worded in R, once, with the anchor size it needs", {
  skip_without_python()
  messages <- character()
  withCallingHandlers(
    csvm(Species ~ ., data = iris, recall_min = c(virginica = 0.95), bound = "binomial", time_limit = 60,
         random_state = 1L),
    warning = function(w) {
      messages <<- c(messages, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  said <- grep("anchor points of class 'virginica'", messages, value = TRUE)
  expect_length(said, 1L)
  # said before the solve: a fit that fails in the solver's options still says it first
  before <- character()
  expect_error(withCallingHandlers(
    csvm(Species ~ ., data = iris, recall_min = c(virginica = 0.95), bound = "binomial", time_limit = 60,
         random_state = 1L, solver = "no-such-solver"),
    warning = function(w) {
      before <<- c(before, conditionMessage(w))
      invokeRestart("muffleWarning")
    }), "solver")
  expect_length(grep("needs at least 59 anchor points of class 'virginica'", before), 1L)
  expect_match(said, paste0("recall_min\\[\"virginica\"\\] = 0.95 with bound = \"binomial\" \\(alpha = 0.05\\) ",
                            "needs at least 59 anchor points of class 'virginica'; the anchor sample has [0-9]+"))
})

test_that("broom's tidy() gives one row per coefficient and class", {
  skip_without_python()
  skip_if_not_installed("broom")
  fit <- multiclass_fit()
  tidied <- broom::tidy(fit)
  expect_equal(nrow(tidied), 15L)
  expect_equal(tidied$estimate[tidied$class == "virginica"], unname(coef(fit)[, "virginica"]))
  expect_equal(nrow(broom::glance(fit)), 1L)
})

test_that("a multiclass fit predicts classes, scores and probabilities after readRDS in a new R session", {
  skip_without_python()
  fit <- multiclass_fit()
  newdata <- iris[c(1, 51, 101, 2), ]
  newdata$Sepal.Length[4] <- NA
  predictions <- in_new_r_session(list(fit = fit, newdata = newdata), c(
    "out <- list(alive = csvmstats:::python_handle_alive(saved$fit$python),",
    "  class = predict(saved$fit, saved$newdata),",
    "  decision = predict(saved$fit, saved$newdata, type = 'decision'),",
    "  prob = predict(saved$fit, saved$newdata, type = 'prob'),",
    "  summary = capture.output(print(summary(saved$fit))))"))
  expect_false(predictions$alive)
  expect_equal(predictions$class, predict(fit, newdata))
  expect_equal(predictions$decision, predict(fit, newdata, type = "decision"), tolerance = 1e-10)
  expect_true(any(grepl("Held-out confusion matrix", predictions$summary)))
  expect_equal(predictions$prob, suppressMessages(predict(fit, newdata, type = "prob")), tolerance = 1e-10)
})

test_that("a multiclass Python fit saved with r_bridge.save_rds is a csvm_fit with matrices (review r8 F10)", {
  skip_without_python()
  skip_if_not(reticulate::py_module_available("rdata"),
              "the Python package rdata (r_bridge's .rds writer) is not installed; install_python() installs it")
  fit <- multiclass_fit()
  path <- tempfile(fileext = ".rds")
  reticulate::import("r_bridge")$save_rds(fit$python, path)
  saved <- readRDS(path)
  expect_s3_class(saved, "csvm_fit")
  expect_true(saved$multiclass)
  expect_equal(coef(saved), coef(fit))
  expect_equal(saved$confusion, fit$confusion)
  expect_equal(rownames(saved$rates), fit$classes)
  expect_type(saved$rates$met, "logical")
  expect_equal(saved$rates$heldout_rate, fit$rates$heldout_rate)
  expect_equal(names(saved$statements), fit$classes)
  expect_output(print(saved), "Multiclass Constrained SVM")
})
