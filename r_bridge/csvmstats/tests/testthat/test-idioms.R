# The R idioms users type without thinking: update, subset, weights, na.exclude,
# model.matrix, formula, terms, fitted, residuals, csvm(x, y), broom, vcov/confint.

with_missing <- function() {
  d <- make_data()
  d$dose[c(3, 10)] <- NA
  d
}

test_that("update() keeps the split: the seed drawn at fit time is in the call", {
  skip_without_python()
  d <- make_data()
  set.seed(11)
  fit <- csvm(status ~ ., data = d, tpr_min = 0.8, bound = "binomial", time_limit = 20)
  expect_true(is.numeric(fit$call$random_state))
  expect_identical(fit$call$random_state, fit$random_state)
  tighter <- update(fit, tpr_min = 0.85)
  expect_identical(tighter$random_state, fit$random_state)
  expect_identical(tighter$call$tpr_min, 0.85)
  expect_equal(tighter$samples, fit$samples)
  expect_equal(tighter$rates$heldout_n, fit$rates$heldout_n)
  expect_equal(tighter$rates$anchor_n, fit$rates$anchor_n)
  same <- update(fit)
  expect_equal(coef(same), coef(fit), tolerance = 1e-6)
})

test_that("subset= is evaluated in the data, as in lm()", {
  skip_without_python()
  d <- make_data()
  fit <- csvm(status ~ ., data = d, tpr_min = 0.8, bound = "binomial", time_limit = 20, random_state = 7L,
              subset = site != "west")
  expect_equal(fit$nobs, sum(d$site != "west"))
  expect_equal(fit$xlevels$site, c("north", "south"))
  expect_named(coef(fit), c("(Intercept)", "dose", "age", "sitesouth"))
})

test_that("weights= is refused in R with the reason", {
  skip_without_python()
  d <- make_data()
  d$w <- runif(nrow(d)) + 0.5
  expect_error(csvm(status ~ dose + age, data = d, tpr_min = 0.8, weights = w),
               "weights are not supported: the rate constraints and the confidence statements count")
})

test_that("fitted(), predict() and model.matrix() follow na.exclude; residuals() says why there are none", {
  skip_without_python()
  d <- with_missing()
  fit <- fit_example(d, na.action = na.exclude)
  expect_equal(fit$nobs, nrow(d) - 2L)
  expect_length(fitted(fit), nrow(d))
  expect_true(all(is.na(fitted(fit)[c(3, 10)])))
  expect_length(predict(fit), nrow(d))
  expect_length(predict(fit, type = "decision"), nrow(d))
  expect_equal(predict(fit, type = "decision"), fitted(fit))
  expect_equal(fitted(fit, type = "class"), predict(fit))
  expect_error(residuals(fit), "no residuals")
  omitted <- fit_example(d)
  expect_length(fitted(omitted), nrow(d) - 2L)
  mm <- model.matrix(fit)
  expect_equal(dim(mm), c(nrow(d) - 2L, 5L))
  expect_equal(colnames(mm), c("(Intercept)", "dose", "age", "sitesouth", "sitewest"))
  expect_equal(unname(drop(mm %*% coef(fit))), unname(fit$fitted.values), tolerance = 1e-8)
  expect_equal(nrow(model.frame(fit)), nrow(d) - 2L)
})

test_that("formula() is the formula and terms() the terms", {
  skip_without_python()
  fit <- fit_example()
  expect_s3_class(formula(fit), "formula")
  expect_null(attr(formula(fit), "term.labels"))
  expect_equal(deparse(formula(fit)), "status ~ dose + age + site")
  expect_s3_class(terms(fit), "terms")
})

test_that("csvm(x, y) fits a numeric matrix; bad x gets an R error without the data", {
  skip_without_python()
  d <- make_data()
  x <- cbind(dose = d$dose, age = d$age)
  fit <- csvm(x, d$status, tpr_min = 0.8, bound = "binomial", time_limit = 20, random_state = 7L)
  expect_s3_class(fit, "csvm")
  expect_named(coef(fit), c("(Intercept)", "dose", "age"))
  expect_equal(fit$call[[1L]], quote(csvm))
  expect_equal(predict(fit, x[1:5, ]), predict(fit)[1:5], ignore_attr = TRUE)
  by_formula <- csvm(status ~ dose + age, data = d, tpr_min = 0.8, bound = "binomial", time_limit = 20,
                     random_state = 7L)
  expect_equal(unname(coef(fit)), unname(coef(by_formula)), tolerance = 1e-6)
  unnamed <- unname(x)
  fit2 <- csvm(unnamed, d$status, tpr_min = 0.8, bound = "binomial", time_limit = 20, random_state = 7L)
  expect_named(coef(fit2), c("(Intercept)", "x1", "x2"))
  expect_equal(predict(fit2, unnamed[1:3, ]), predict(fit2)[1:3], ignore_attr = TRUE)
  again <- update(fit2, tpr_min = 0.85)
  expect_identical(again$random_state, fit2$random_state)
  character_x <- matrix(as.character(round(x, 2)), ncol = 2)
  error <- tryCatch(csvm(character_x, d$status), error = conditionMessage)
  expect_match(error, "x is a character matrix")
  expect_lt(nchar(error), 200)
  expect_error(csvm(x, d$status[-1]), "y has 239 values but x has 240 rows")
  expect_error(csvm(x), "give the classes as y")
})

test_that("e1071 and kernlab names get a 'did you mean'", {
  d <- make_data()
  expect_error(csvm(status ~ ., data = d, kernel = "radial"), "did you mean kernel = \"rbf\"")
  expect_error(csvm(status ~ ., data = d, kernel = "polynomial"), "did you mean kernel = \"poly\"")
  expect_error(csvm(status ~ ., data = d, kernel = "sigmoid"), "kernel must be one of")
  expect_error(csvm(status ~ ., data = d, cost = 10), "did you mean C .*C = 2 \\* c")
  expect_error(csvm(status ~ ., data = d, sigma = 0.1), "did you mean gamma")
})

test_that("time_limit, threads and other options are checked in R, in R's words", {
  d <- make_data()
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, time_limit = -1),
               "time_limit must be a positive number of seconds, not -1")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, threads = "a"),
               "threads must be a whole number >= 1, not \"a\"")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, threads = 1.5), "whole number")
  expect_error(csvm(status ~ ., data = d, tpr_min = 1.2), "tpr_min must be a required rate strictly between 0 and 1")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, bound = "exact"), "bound must be one of")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, C = -1), "C must be a positive number")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, gamma = "wide"), "gamma must be one of")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, standardize = "yes"), "TRUE or FALSE")
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, fractions = c(0.5, 0.5)), "three shares")
})

test_that("errors Python raises reach R without the exception's class path", {
  expect_equal(csvmstats:::python_error_message(
    "csvm_stats.exceptions.DataError: fractions must sum to 1.\n\nDetailed traceback:\n  File \"x.py\""),
    "fractions must sum to 1.")
  skip_without_python()
  error <- tryCatch(fit_example(fractions = c(0.5, 0.3, 0.3)), error = conditionMessage)
  expect_match(error, "^csvm: ")
  expect_false(grepl("csvm_stats.exceptions", error, fixed = TRUE))
  expect_false(grepl("Traceback", error, fixed = TRUE))
})

test_that("type = 'probabilities' gives kernlab's two-column matrix; probabilities come without a message", {
  skip_without_python()
  fit <- fit_example()
  newdata <- make_data(6, seed = 9)
  newdata$dose[2] <- NA
  expect_silent(p <- predict(fit, newdata, type = "prob"))  # the calibration was made with the fit (model file)
  expect_silent(p_again <- predict(fit, newdata, type = "prob"))
  expect_equal(p_again, p)
  m <- predict(fit, newdata, type = "probabilities")
  expect_equal(dim(m), c(6L, 2L))
  expect_equal(colnames(m), c("control", "case"))
  expect_equal(unname(m[, "case"]), unname(p))
  expect_equal(unname(rowSums(m)[-2]), rep(1, 5))
  expect_true(all(is.na(m[2, ])))
})

test_that("vcov, confint, logLik/AIC and anova say why a CSVM has none", {
  skip_without_python()
  fit <- fit_example()
  expect_error(vcov(fit), "no variance-covariance matrix: its coefficients solve a constrained optimisation")
  expect_error(confint(fit), "no confidence intervals for coefficients")
  expect_error(AIC(fit), "no log-likelihood")
  expect_error(anova(fit), "no analysis of deviance")
  expect_equal(nobs(fit), 240L)
})

test_that("broom's tidy() and glance() work on a fit", {
  skip_without_python()
  skip_if_not_installed("broom")
  fit <- fit_example()
  tidied <- broom::tidy(fit)
  expect_equal(tidied$term, names(coef(fit)))
  expect_equal(tidied$estimate, unname(coef(fit)))
  expect_true(is.na(tidied$std.estimate[1]))
  glanced <- broom::glance(fit)
  expect_equal(nrow(glanced), 1L)
  expect_equal(glanced$nobs, 240L)
  expect_equal(glanced$tpr.lower, fit$rates["tpr", "lower"])
  expect_identical(glanced$tpr.certified, fit$rates["tpr", "certified"])
  expect_equal(glanced$bound, "binomial")
})
