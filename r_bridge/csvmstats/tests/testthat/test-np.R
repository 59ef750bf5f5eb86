# np_classifier(): the Neyman-Pearson route from R, its statements, roles and predictions.

test_that("np_classifier guarantees the TPR, reports the CSVM's rate table and predicts", {
  skip_without_python()
  d <- make_data()
  fit <- np_classifier(status ~ ., data = d, learner = "logistic", tpr_min = 0.8, random_state = 7L)
  expect_s3_class(fit, "np_classifier")
  expect_equal(rownames(fit$rates), c("tpr", "tnr", "acc", "bacc"))
  expect_equal(fit$rates["tpr", "method"], "order statistic")
  expect_equal(fit$rates["tpr", "lower"], 0.8)
  expect_true(fit$rates["tnr", "lower"] <= fit$rates["tnr", "heldout_rate"])
  expect_equal(sort(unique(fit$sample_roles)), c("held-out", "training"))
  expect_equal(names(fit$sample_roles), rownames(d))
  expect_match(fit$statements[["tpr"]], "at least 0.8")
  expect_output(print(summary(fit)), "Neyman-Pearson route Results")
  # print() names the rate of each statement, as summary() of a csvm() fit (review r7 F4)
  printed <- capture.output(print(fit))
  for (rate in names(fit$statements)) {
    expect_true(any(startsWith(trimws(printed), paste0(toupper(rate), ": "))), info = rate)
  }
  cls <- predict(fit, d[1:10, ])
  expect_equal(levels(cls), levels(d$status))
  p <- predict(fit, d[1:10, ], type = "prob")
  expect_true(all(p >= 0 & p <= 1))
  dec <- predict(fit, d[1:10, ], type = "decision")
  expect_equal(as.character(cls), unname(ifelse(dec >= 0, "case", "control")))
})

test_that("np_classifier uses the same held-out rows as csvm() with the same seed", {
  skip_without_python()
  d <- make_data()
  fit <- np_classifier(status ~ ., data = d, learner = "svc", tnr_min = 0.8, random_state = 3L)
  csvm_split <- reticulate::import("csvm_stats.preprocessing.design")$split_samples
  y <- ifelse(d$status == "case", 1, -1)
  holdout <- as.integer(csvm_split(reticulate::np_array(y), c(0.5, 0.25, 0.25), 3L)$holdout) + 1L
  expect_equal(unname(which(fit$sample_roles == "held-out")), holdout)
})

test_that("np_classifier takes several classes and refuses bad input with the fix", {
  skip_without_python()
  fit <- np_classifier(Species ~ ., data = iris, learner = "logistic", recall_min = c(virginica = 0.8),
                       fractions = c(0.3, 0.2, 0.5), random_state = 1L)
  expect_equal(fit$rates["virginica", "method"], "order statistic")
  expect_equal(dim(predict(fit, iris[1:4, ], type = "prob")), c(4L, 3L))
  expect_error(np_classifier(status ~ ., data = make_data(), learner = "forest", tpr_min = 0.9),
               "should be one of")
  expect_error(np_classifier(status ~ ., data = make_data(60), tpr_min = 0.99, random_state = 1L),
               "needs at least 299 held-out")
  expect_error(np_classifier(Species ~ ., data = iris, recall_min = c(rose = 0.9)), "named vector")
})

test_that("np_classifier predicts as csvm() does: na.exclude pads, incomplete new rows get NA, Inf is refused", {
  skip_without_python()
  d <- make_data()
  d$age[c(3, 7)] <- NA
  fit <- np_classifier(status ~ ., data = d, tpr_min = 0.8, random_state = 7L, na.action = na.exclude)
  classes <- predict(fit)
  expect_length(classes, 240L)
  expect_equal(unname(which(is.na(classes))), c(3L, 7L))
  expect_length(predict(fit, type = "decision"), 240L)
  new <- predict(fit, d[1:5, ])
  expect_equal(names(new), rownames(d)[1:5])
  expect_equal(unname(which(is.na(new))), 3L)
  prob <- predict(fit, d[1:5, ], type = "prob")
  expect_true(is.na(prob[3]))
  expect_true(all(prob[-3] >= 0 & prob[-3] <= 1))
  d$age[2] <- Inf
  expect_error(predict(fit, d[1:3, ]), "np_classifier: `newdata` has infinite values (Inf or -Inf) in age (row 2)",
               fixed = TRUE)
})

test_that("predict() of np_classifier refuses unknown arguments and takes kernlab's type = \"probabilities\"", {
  skip_without_python()
  d <- make_data()
  fit <- np_classifier(status ~ ., data = d, tpr_min = 0.8, random_state = 7L)
  expect_error(predict(fit, d[1:2, ], se.fit = TRUE), "np_classifier: unknown argument \"se.fit\" to predict()",
               fixed = TRUE)
  expect_error(predict(fit, d[1:2, ], probability = TRUE), "use type = \"prob\"", fixed = TRUE)
  expect_error(predict(fit, d[1:2, ], "class", TRUE), "unnamed argument")
  both <- predict(fit, d[1:3, ], type = "probabilities")
  expect_equal(colnames(both), c("control", "case"))
  expect_equal(unname(both[, "case"]), unname(predict(fit, d[1:3, ], type = "prob")))
  expect_equal(unname(rowSums(both)), rep(1, 3))
  # the summary names the formula of the call, not "(arrays)"
  expect_output(print(summary(fit)), "Formula +status ~ \\.")
  expect_false(grepl("(arrays)", fit$summary_text, fixed = TRUE))
})

test_that("np_classifier checks its options in R, naming them, before anything reaches Python", {
  d <- make_data()
  expect_error(np_classifier(status ~ ., data = d, tpr_min = 0.8, alpha = NA),
               "np_classifier: option(s) alpha are NA", fixed = TRUE)
  expect_error(np_classifier(status ~ ., data = d, tpr_min = NA), "np_classifier: option(s) tpr_min are NA",
               fixed = TRUE)
  expect_error(np_classifier(status ~ ., data = d, tpr_min = 0.8, random_state = -1),
               "np_classifier: random_state must be a whole number >= 0, not -1", fixed = TRUE)
  expect_error(np_classifier(status ~ ., data = d, tpr_min = 1.2), "np_classifier: tpr_min must be a required rate")
  expect_error(np_classifier(status ~ ., data = d), "give exactly one of tpr_min, tnr_min .*got none")
  expect_error(np_classifier(status ~ ., data = d, tpr_min = 0.8, tnr_min = 0.5), "got tpr_min, tnr_min")
  expect_error(np_classifier(Species ~ ., data = iris, tpr_min = 0.9),
               paste("np_classifier: the response has 3 classes (setosa, versicolor, virginica); tpr_min and",
                     "tnr_min are for two classes"), fixed = TRUE)
  expect_error(np_classifier(Species ~ ., data = iris, tpr_min = 0.9), "recall_min = c(virginica = 0.9)", fixed = TRUE)
})

test_that("np_classifier predicts new rows whose removed column (- Id) has new values, as csvm() does", {
  # review r10 F-r-np-predict: the README's np_classifier(Class ~ . - Id, ...) stored the levels of Id
  # and predict() refused every new patient ("factor Id has new levels").
  skip_without_python()
  d <- make_data()
  d$Id <- factor(sprintf("P%03d", seq_len(nrow(d))))
  fit <- np_classifier(status ~ . - Id, data = d, learner = "logistic", tpr_min = 0.8, random_state = 7L)
  expect_false("Id" %in% names(fit$xlevels))
  expect_true("site" %in% names(fit$xlevels))
  new <- d[1:4, ]
  new$Id <- factor(c("NEW-001", "NEW-002", "NEW-003", "NEW-004"))
  expect_equal(unname(predict(fit, new)), unname(predict(fit, d[1:4, ])))
  expect_equal(unname(predict(fit, new, type = "prob")), unname(predict(fit, d[1:4, ], type = "prob")))
  # a factor the rule uses still refuses a level it has not seen
  new$site <- factor(c("east", "north", "north", "north"))
  expect_error(predict(fit, new), "new level")
  # csvm() keeps the same levels for the same formula
  ref <- csvm(status ~ . - Id, data = d, tpr_min = 0.8, time_limit = 20, bound = "binomial", random_state = 7L)
  expect_equal(fit$xlevels, ref$xlevels)
})

test_that("a factor with a non-syntactic name keeps its levels for predict (used_xlevels matches `my grp`)", {
  # review r12 F2: the terms' variables are deparsed with backquotes, xlevels' names are not, so the levels
  # of `my grp` were dropped and predict() rebuilt the factor from the new rows' own levels.
  skip_without_python()
  d <- make_data()
  names(d)[names(d) == "site"] <- "my site"
  fit <- np_classifier(status ~ ., data = d, learner = "logistic", tpr_min = 0.8, random_state = 7L)
  expect_true("my site" %in% names(fit$xlevels))
  idx <- which(d[["my site"]] == "north")[1:3]  # new data holding one level of the factor only
  full <- predict(fit, d, type = "prob")
  expect_equal(unname(predict(fit, d[idx, ], type = "prob")), unname(full[idx]))
  ref <- csvm(status ~ ., data = d, tpr_min = 0.8, time_limit = 20, bound = "binomial", random_state = 7L)
  expect_true("my site" %in% names(ref$xlevels))
})
