# saveRDS keeps everything a prediction needs: the fit carries the Python model file's bytes,
# and a new R session (a separate Rscript process) re-creates the Python model on demand.

test_that("linear and RBF fits predict classes, decision values and probabilities after readRDS in a new R session", {
  skip_without_python()
  d <- make_data(160)
  fits <- list(
    linear = fit_example(d),
    rbf = csvm(status ~ ., data = d, tpr_min = 0.8, kernel = "rbf", gamma = 0.5, bound = "binomial",
               time_limit = 20, random_state = 7L)
  )
  newdata <- make_data(30, seed = 5)
  newdata$dose[4] <- NA
  predictions <- in_new_r_session(list(fits = fits, newdata = newdata), c(
    "out <- lapply(saved$fits, function(fit) list(",
    "  alive = csvmstats:::python_handle_alive(fit$python),",
    "  decision = predict(fit, saved$newdata, type = 'decision'),",
    "  class = predict(fit, saved$newdata),",
    "  prob = tryCatch(predict(fit, saved$newdata, type = 'prob'), error = conditionMessage)))"))
  for (kind in names(fits)) {
    expect_false(predictions[[kind]]$alive)
    expect_equal(predictions[[kind]]$decision, predict(fits[[kind]], newdata, type = "decision"),
                 tolerance = 1e-10)
    expect_equal(predictions[[kind]]$class, predict(fits[[kind]], newdata))
    expect_true(is.na(predictions[[kind]]$class[4]))
    # Probabilities after readRDS need the probability model in the model file (its calibration).
    saved_model <- reticulate::import("csvm_stats.interfaces.persistence")$SavedModel
    if (reticulate::py_has_attr(saved_model, "predict_proba")) {
      expect_equal(predictions[[kind]]$prob, suppressMessages(predict(fits[[kind]], newdata, type = "prob")),
                   tolerance = 1e-10)
    } else {
      expect_match(predictions[[kind]]$prob, "carries no probability model")
    }
  }
})
