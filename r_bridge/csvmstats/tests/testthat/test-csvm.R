test_that("csvm fits y ~ . with a factor column and keeps R's formula bookkeeping", {
  skip_without_python()
  fit <- fit_example()
  expect_s3_class(fit, "csvm")
  expect_named(coef(fit), c("(Intercept)", "dose", "age", "sitesouth", "sitewest"))
  expect_equal(fit$xlevels$site, c("north", "south", "west"))
  expect_equal(fit$positive, "case")
  expect_equal(fit$negative, "control")
  expect_s3_class(fit$rates, "data.frame")
  expect_equal(rownames(fit$rates), c("tpr", "tnr", "acc", "bacc"))
  expect_type(fit$rates$met, "logical")
  expect_equal(sum(fit$samples), 240L)
  expect_true(coef(fit)[["dose"]] > 0)
})

test_that("the rate table says NA, not NaN, and shows bounds rounded outwards", {
  skip_without_python()
  fit <- fit_example()
  expect_false(any(vapply(fit$rates, function(v) is.numeric(v) && any(is.nan(v)), logical(1L))))
  expect_true(is.na(fit$rates["tnr", "target"]))
  expect_equal(csvmstats:::bound_text(c(0.89876, NA, 0.9), floor), c("0.8987", "", "0.9000"))
  expect_equal(csvmstats:::bound_text(0.93641, ceiling), "0.9365")
  expect_equal(csvmstats:::count_text(c(58, NA), c(60, 171)), c("58/60", ""))
  printed <- capture.output(print(summary(fit)))
  expect_false(any(grepl("NaN|NA/", printed)))
  table_line <- printed[grepl("^TPR ", printed)][1L]
  shown_lower <- floor(fit$rates["tpr", "lower"] * 1e4) / 1e4
  expect_match(table_line, formatC(shown_lower, format = "f", digits = 4L), fixed = TRUE)
})

test_that("print and summary print from R vectors", {
  skip_without_python()
  fit <- fit_example()
  expect_output(print(fit), "positive class 'case'")
  s <- summary(fit)
  expect_s3_class(s, "summary.csvm")
  expect_output(print(s), "Confidence statements")
  expect_output(print(s), "TPR: With 95% confidence")
  expect_output(print(s), "sitesouth")
  expect_match(fit$summary_text, "Response +status")
  expect_output(returned <- print(fit))
  expect_identical(returned, fit)
})

test_that("predict handles new data with factor levels, missing rows and all types", {
  skip_without_python()
  fit <- fit_example()
  newdata <- data.frame(dose = c(2, -2, NA, 0.1), age = c(50, 50, 40, 60),
                        site = factor(c("west", "north", "south", "south")))
  classes <- predict(fit, newdata)
  expect_s3_class(classes, "factor")
  expect_equal(levels(classes), c("control", "case"))
  expect_equal(as.character(classes[1:2]), c("case", "control"))
  expect_true(is.na(classes[3]))
  decision <- predict(fit, newdata, type = "decision")
  expect_equal(unname(decision[1:2] > 0), c(TRUE, FALSE))
  manual <- coef(fit)[["(Intercept)"]] + coef(fit)[["dose"]] * 0.1 + coef(fit)[["age"]] * 60 +
    coef(fit)[["sitesouth"]]
  expect_equal(unname(decision[4]), manual, tolerance = 1e-8)
  expect_length(predict(fit), 240L)
  expect_error(predict(fit, data.frame(dose = 1, age = 50, site = "east")), "new level")
  prob <- predict(fit, newdata, type = "prob")
  expect_length(prob, 4L)
  expect_true(is.na(prob[3]))
  expect_true(all(prob[-3] >= 0 & prob[-3] <= 1))
  expect_gt(prob[1], prob[2])  # the case-side point is more likely a case
})

test_that("the R fit gives the Python fit's coefficients and rates on the same split", {
  skip_without_python()
  d <- make_data()
  fit <- fit_example(d)
  x <- model.matrix(status ~ ., d)[, -1L]
  model_module <- reticulate::import("csvm_stats.models.model", convert = FALSE)
  pandas <- reticulate::import("pandas", convert = FALSE)
  python_model <- model_module$CSVM(
    pandas$Series(as.character(d$status), dtype = "object"),
    pandas$DataFrame(x, columns = colnames(x)),
    tpr_min = 0.8, bound = "binomial", positive = "case"
  )
  python_fit <- python_model$fit(random_state = 7L, time_limit = 20)
  params <- reticulate::py_to_r(python_fit$params$to_numpy())
  expect_equal(unname(coef(fit)), c(params[length(params)], params[-length(params)]), tolerance = 1e-5)
  rates <- python_fit$rates
  python_counts <- vapply(c("anchor_correct", "heldout_correct"), function(column) {
    as.numeric(reticulate::py_to_r(rates$`__getitem__`(column)$iloc$`__getitem__`(0L)))
  }, numeric(1L))
  expect_equal(c(fit$rates$anchor_correct[1L], fit$rates$heldout_correct[1L]), unname(python_counts))
})

test_that("a fit saved with saveRDS prints without Python and predicts from its model file", {
  skip_without_python()
  fit <- fit_example()
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  reloaded <- readRDS(path)
  expect_false(csvmstats:::python_handle_alive(reloaded$python))
  expect_type(reloaded$model_file, "raw")
  expect_output(print(summary(reloaded)), "Confidence statements")
  newdata <- make_data(20, seed = 3)
  expect_equal(predict(reloaded, newdata, type = "decision"),
               predict(fit, newdata, type = "decision"), tolerance = 1e-8)
  expect_equal(predict(reloaded, newdata), predict(fit, newdata))
})

test_that("a Python fit saved with r_bridge.save_rds is read in R as a csvm_fit", {
  skip_without_python()
  skip_if_not(reticulate::py_module_available("rdata"),
              "the Python package rdata (r_bridge's .rds writer) is not installed; install_python() installs it")
  fit <- fit_example()
  path <- tempfile(fileext = ".rds")
  reticulate::import("r_bridge")$save_rds(fit$python, path)
  saved <- readRDS(path)
  expect_s3_class(saved, "csvm_fit")
  expect_equal(unname(coef(saved)), unname(coef(fit)))
  expect_type(saved$rates$met, "logical")
  expect_output(print(saved), "Constrained SVM \\(CSVM\\) Results")
})

test_that("missing values are stopped in R with a clear error", {
  skip_without_python()
  d <- make_data()
  d$dose[5] <- NA
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, na.action = na.pass), "missing values in dose")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, na.action = na.fail), "missing values")
  fit <- csvm(status ~ ., data = d, tpr_min = 0.8, time_limit = 20, bound = "binomial", random_state = 7L)
  expect_equal(length(fit$na.action), 1L)
  expect_equal(fit$nobs, 239L)
  expect_error(csvm(status ~ ., data = make_data(), tpr_min = 0.8, C = NA), "C are NA")
})

test_that("a one-class response and two-class targets on three classes are clear R errors", {
  d <- make_data()
  d$status <- factor("case")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8), "only one class \\('case'\\)")
  d$status <- factor(rep(c("a", "b", "c"), length.out = nrow(d)))
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8),
               "tpr_min is for a two-class response; this one has 3 classes \\(a, b, c\\)")
  expect_error(csvm(status ~ 1, data = make_data()), "no predictors")
})

test_that("a missing Python module is a clear R error", {
  expect_error(csvmstats:::require_python_module("csvm_stats_not_installed.r_api"),
               "Python module 'csvm_stats_not_installed.r_api' is not available")
})

test_that("options unknown to Python are reported, not ignored", {
  skip_without_python()
  expect_error(fit_example(tpr_mn = 0.9), "unknown argument \"tpr_mn\"; did you mean \"tpr_min\"?", fixed = TRUE)
  expect_error(csvm(status ~ ., data = make_data(), positive = "nope"), "not a class")
})

test_that("logical and numeric responses become two-level factors", {
  skip_without_python()
  d <- make_data()
  d$status <- d$status == "case"
  fit <- csvm(status ~ dose + age, data = d, tpr_min = 0.8, time_limit = 20, bound = "binomial",
              random_state = 7L)
  expect_equal(fit$positive, "TRUE")
  expect_equal(levels(predict(fit, d[1:3, ])), c("FALSE", "TRUE"))
})

test_that("Python warnings arrive as R warnings in R's wording, naming the anchor size needed", {
  skip_without_python()
  expect_warning(
    csvm(status ~ ., data = make_data(), tpr_min = 0.99, bound = "hoeffding", time_limit = 20,
         random_state = 7L),
    "tpr_min = 0.99 with bound = \"hoeffding\" \\(alpha = 0.05\\) needs at least 14979 anchor positives; the anchor sample has [0-9]+"
  )
  expect_warning(
    csvm(status ~ ., data = make_data(), tpr_min = 0.9, bound = "hoeffding", time_limit = 20,
         random_state = 7L),
    "bound = \"binomial\".* 29 anchor positives"
  )
  # said once, before the solve: a fit that fails in the solver's options still warns first
  messages <- character()
  expect_error(withCallingHandlers(
    csvm(status ~ ., data = make_data(), tpr_min = 0.99, time_limit = 20, random_state = 7L,
         solver = "no-such-solver"),
    warning = function(w) {
      messages <<- c(messages, conditionMessage(w))
      invokeRestart("muffleWarning")
    }), "solver")
  expect_length(grep("needs at least 14979 anchor positives", messages), 1L)
  expect_equal(csvmstats:::r_wording("use fractions=(0.5, 0.25) with warm_start=False or None"),
               "use fractions = (0.5, 0.25) with warm_start = FALSE or NULL")
})

test_that("an RBF fit predicts through Python, also after saveRDS/readRDS, and has no coef()", {
  skip_without_python()
  d <- make_data(160)
  fit <- csvm(status ~ dose + age, data = d, tpr_min = 0.8, kernel = "rbf", gamma = 0.5,
              bound = "binomial", time_limit = 20, random_state = 7L)
  expect_false(fit$is_linear)
  expect_output(print(fit), "Kernel solution")
  expect_output(print(summary(fit)), "Kernel solution")
  decision <- predict(fit, d[1:10, ], type = "decision")
  expect_equal(unname(decision), unname(fit$fitted.values[1:10]), tolerance = 1e-8)
  expect_error(coef(fit), "kernel fit .* has no coefficients on the predictors")
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  again <- readRDS(path)
  expect_equal(predict(again, d[1:10, ], type = "decision"), decision, tolerance = 1e-10)
  expect_equal(predict(again, d[1:10, ]), predict(fit, d[1:10, ]))
})

test_that("two design columns with one name get unique names and fit (review r8 F19)", {
  skip_without_python()
  d <- make_data()
  d$a <- factor(ifelse(d$site == "south", "b", "a0"), levels = c("a0", "b"))
  d$ab <- d$age
  expect_equal(colnames(model.matrix(~ a + ab, d)), c("(Intercept)", "ab", "ab"))
  fit <- csvm(status ~ dose + a + ab, data = d, tpr_min = 0.8, time_limit = 20, bound = "binomial",
              random_state = 7L)
  expect_equal(names(coef(fit)), c("(Intercept)", "dose", "a.b", "ab"))
  # the same fit as with the factor's column named apart in the data: same coefficients, same predictions
  renamed <- d
  names(renamed)[names(renamed) == "a"] <- "a_"
  reference <- csvm(status ~ dose + a_ + ab, data = renamed, tpr_min = 0.8, time_limit = 20, bound = "binomial",
                    random_state = 7L)
  expect_equal(unname(coef(fit)), unname(coef(reference)), tolerance = 1e-8)
  newdata <- d[1:20, ]
  expect_equal(unname(predict(fit, newdata, type = "decision")),
               unname(predict(reference, renamed[1:20, ], type = "decision")), tolerance = 1e-8)
  expect_equal(unname(predict(fit, type = "prob")), unname(predict(reference, type = "prob")), tolerance = 1e-8)
  expect_output(print(fit), "a.b")
  # a clash that is not a factor's coding is settled by make.unique
  expect_equal(csvmstats:::unique_design_names(matrix(0, 1, 3, dimnames = list(NULL, c("x", "y", "x"))),
                                               terms(~ 1)), c("x", "y", "x.1"))
})
