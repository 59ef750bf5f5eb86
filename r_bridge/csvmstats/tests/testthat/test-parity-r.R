# R at parity with Python (issue 24): Python warnings are R warnings that suppressWarnings()
# silences, print/summary say what is certified and where the class rule falls on the
# probability scale, augment(), sample_roles(), R-worded errors, and what csvm() refuses.

small_breast_cancer <- function() {
  skip_if_not_installed("mlbench")
  env <- new.env()
  utils::data("BreastCancer", package = "mlbench", envir = env)
  set.seed(24)
  env$BreastCancer[sample(nrow(env$BreastCancer), 120), ]
}

# Run `code` in a new Rscript process (the package loaded, Python as this session's) and return
# everything it wrote to stdout and stderr, so that output Python writes past R's console is seen.
console_of_new_session <- function(code) {
  script <- tempfile(fileext = ".R")
  writeLines(c("library(csvmstats)", code), script)
  python <- reticulate::py_config()$python
  system2("env", c(paste0("RETICULATE_PYTHON=", python), file.path(R.home("bin"), "Rscript"), script),
          stdout = TRUE, stderr = TRUE)
}

test_that("suppressWarnings() leaves the console silent: every Python warning is an R warning", {
  skip_without_python()
  small <- small_breast_cancer()
  # in this session: nothing printed, no warning, no message
  expect_silent(printed <- capture.output(
    fit <- suppressWarnings(csvm(Class ~ . - Id, data = small, tpr_min = 0.9, bound = "binomial",
                                 random_state = 5L)),
    type = "output"))
  expect_length(printed, 0L)
  expect_s3_class(fit, "csvm")
  # without suppressWarnings: R warnings (the capped target, and the calibration refits' ones)
  # without file paths, line numbers or source lines
  messages <- character()
  withCallingHandlers(
    csvm(Class ~ . - Id, data = small, tpr_min = 0.9, bound = "binomial", random_state = 5L),
    warning = function(w) {
      messages <<- c(messages, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_gte(length(messages), 1L)
  expect_true(all(startsWith(messages, "csvm: ")))
  expect_false(any(grepl("\\.py:[0-9]+|Warning:|adjust_target\\(", messages)))
  expect_match(messages[1L], "tpr_min = 0.9 with bound = \"binomial\"", fixed = TRUE)
  # a new R session, seen at the level of its process: Python writes nothing past R either
  data_file <- tempfile(fileext = ".rds")
  saveRDS(small, data_file)
  console <- console_of_new_session(c(
    sprintf("small <- readRDS('%s')", data_file),
    "fit <- suppressWarnings(csvm(Class ~ . - Id, data = small, tpr_min = 0.9, bound = 'binomial', random_state = 5L))",
    "p <- suppressWarnings(suppressMessages(predict(fit, small[1:5, ], type = 'prob')))",
    "cat('END', class(fit), length(p), '\\n')"))
  expect_equal(console, "END csvm 5 ")
})

test_that("issue_python_warnings says a warning repeated with other counts once", {
  messages <- c("target 0.9 needs more than all 8 anchor points", "target 0.9 needs more than all 7 anchor points",
                "another one", "capped elsewhere")
  kinds <- c("CappedTargetWarning", "CappedTargetWarning", "DegenerateRuleWarning", "SolverFallbackWarning")
  seen <- character()
  withCallingHandlers(
    csvmstats:::issue_python_warnings(messages, kinds, reported = "SolverFallbackWarning", context = "here: "),
    warning = function(w) {
      seen <<- c(seen, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_equal(seen, c("csvm: here: target 0.9 needs more than all 8 anchor points (1 more warning like this one, with other counts)",
                       "csvm: here: another one"))
  expect_silent(suppressWarnings(csvmstats:::issue_python_warnings(messages, kinds)))
})

test_that("print and summary say when a requirement met on the anchor sample is not certified", {
  rates <- data.frame(target = c(0.9, NA, 0.8), required = c(59, NA, 40), anchor_n = c(60, 111, 50),
                      anchor_correct = c(59, 100, 39), met = c(TRUE, NA, FALSE), lower = c(0.81234, 0.95, 0.7),
                      certified = c(FALSE, NA, FALSE), row.names = c("tpr", "tnr", "acc"))
  lines <- csvmstats:::requirement_lines(rates, 0.05)
  expect_equal(lines[1L], paste("Required sensitivity (TPR) >= 0.9: met on the requirement (anchor) sample (59/60),",
                                "but the held-out data support only >= 0.8123 at 95% confidence: NOT certified."))
  expect_match(lines[2L], "^Required accuracy \\(ACC\\) >= 0.8: not met on the requirement \\(anchor\\) sample \\(39/50\\)")
  rates$certified[1L] <- TRUE
  expect_match(csvmstats:::requirement_lines(rates, 0.05)[1L], "certified on held-out data \\(lower 95% confidence bound 0.8123\\)")
  rates$target <- NA
  expect_match(csvmstats:::requirement_lines(rates, 0.05), "No rate was required")
})

test_that("BreastCancer, tpr_min = 0.9, random_state = 12345: met but not certified, said in print and summary", {
  skip_without_python()
  skip_if_not_installed("mlbench")
  env <- new.env()
  utils::data("BreastCancer", package = "mlbench", envir = env)
  fit <- csvm(Class ~ . - Id, data = env$BreastCancer, tpr_min = 0.9, bound = "binomial", random_state = 12345L)
  expect_true(fit$rates["tpr", "met"])
  expect_false(fit$rates["tpr", "certified"])
  shown <- floor(fit$rates["tpr", "lower"] * 1e4) / 1e4
  note <- paste0("the held-out data support only >= ", formatC(shown, format = "f", digits = 4L),
                 " at 95% confidence: NOT certified")
  one_line <- function(lines) gsub("\\s+", " ", paste(lines, collapse = " "))  # strwrap's breaks as spaces
  printed <- one_line(capture.output(print(fit)))
  expect_match(printed, note, fixed = TRUE)
  summarised <- capture.output(print(summary(fit)))
  expect_match(one_line(summarised), note, fixed = TRUE)
  expect_true(any(grepl("certified", summarised[grepl("joint lower", summarised)])))
  # the default split has a held-out sample large enough, so the probabilities come from a model fitted
  # beside the rule: no threshold on P, and print says on how many held-out rows rule and P >= 1/2 differ
  expect_true(is.na(fit$probability_threshold))
  expect_match(printed, "is not a threshold on P(malignant)", fixed = TRUE)
  expect_match(paste(summarised, collapse = " "), "Venn-Abers")
  p <- suppressMessages(predict(fit, env$BreastCancer, type = "prob"))
  called <- predict(fit, env$BreastCancer)
  held <- names(fit$sample_roles)[fit$sample_roles == "held-out"]
  differ <- sum(called[held] != ifelse(p[held] >= 0.5, "malignant", "benign"))
  expect_match(printed, paste0("on ", differ, " of them"), fixed = TRUE)
})

test_that("sample_roles() says which rows were training, anchor and held-out, from the Python fit", {
  skip_without_python()
  d <- make_data()
  d$dose[c(3, 10)] <- NA
  fit <- fit_example(d, na.action = na.exclude)
  roles <- fit$sample_roles
  expect_s3_class(roles, "factor")
  expect_equal(levels(roles), c("training", "anchor", "held-out"))
  expect_equal(names(roles), names(fit$fitted.values))
  expect_equal(as.vector(table(roles)), unname(fit$samples[c("train", "anchor", "holdout")]))
  padded <- sample_roles(fit)
  expect_length(padded, nrow(d))
  expect_true(all(is.na(padded[c(3, 10)])))
  # the held-out rows are those the held-out counts come from
  positive <- d$status[!is.na(d$dose)] == fit$positive
  held_out <- roles == "held-out"
  expect_equal(sum(positive & held_out), fit$rates["tpr", "heldout_n"])
  expect_equal(sum(positive & held_out & fit$fitted.class == fit$positive), fit$rates["tpr", "heldout_correct"])
  python_roles <- reticulate::import("csvm_stats.interfaces.r_values")$sample_roles(fit$python)
  expect_equal(as.character(roles), as.character(python_roles))
})

test_that("sample roles from Python become a factor with the three samples first, never silently NA", {
  roles <- csvmstats:::sample_role_factor(c("anchor", "", "training", "held-out"), c("a", "b", "c", "d"))
  expect_equal(levels(roles), c("training", "anchor", "held-out"))
  expect_equal(names(roles), c("a", "b", "c", "d"))
  expect_true(is.na(roles[["b"]]))
  expect_equal(levels(csvmstats:::sample_role_factor(c("anchor", "unused"), 1:2)),
               c("training", "anchor", "held-out", "unused"))
})

test_that("augment() adds .fitted, .prob, .decision and .sample; new data get the predictions", {
  skip_without_python()
  skip_if_not_installed("broom")
  d <- make_data()
  d$dose[5] <- NA
  fit <- fit_example(d)
  augmented <- suppressMessages(broom::augment(fit))
  expect_equal(nrow(augmented), nrow(d) - 1L)
  expect_true(all(c(".fitted", ".prob", ".decision", ".sample") %in% names(augmented)))
  expect_equal(augmented$.fitted, unname(fit$fitted.class))
  expect_equal(augmented$.decision, unname(fit$fitted.values))
  expect_equal(augmented$.sample, unname(fit$sample_roles))
  expect_equal(augmented$.prob, unname(suppressMessages(predict(fit, type = "prob"))), tolerance = 1e-12)
  with_data <- suppressMessages(broom::augment(fit, data = d))
  expect_equal(nrow(with_data), nrow(d))
  expect_true(is.na(with_data$.fitted[5]) && is.na(with_data$.sample[5]) && is.na(with_data$.prob[5]))
  expect_equal(with_data$.decision[-5], unname(fit$fitted.values), tolerance = 1e-12)
  newdata <- make_data(5, seed = 2)
  fresh <- suppressMessages(broom::augment(fit, newdata = newdata))
  expect_equal(fresh$.decision, unname(predict(fit, newdata, type = "decision")))
  expect_false(".sample" %in% names(fresh))
  expect_error(broom::augment(fit, se_fit = TRUE), "unknown argument \"se_fit\"")
})

test_that("augment() of a multiclass fit has one .prob_ and .decision_ column per class", {
  skip_without_python()
  skip_if_not_installed("broom")
  fit <- suppressWarnings(csvm(Species ~ ., data = iris, recall_min = c(virginica = 0.8), bound = "binomial",
                               fractions = c(0.4, 0.3, 0.3), time_limit = 60, random_state = 1L))
  augmented <- suppressMessages(broom::augment(fit))
  expect_true(all(paste0(".prob_", levels(iris$Species)) %in% names(augmented)))
  expect_equal(rowSums(as.matrix(augmented[, paste0(".prob_", levels(iris$Species))])), rep(1, 150),
               tolerance = 1e-8)
  expect_equal(table(augmented$.sample)[["held-out"]], fit$samples[["holdout"]])
})

test_that("0 +, - 1, offset() and unknown predict() arguments are refused with the reason", {
  d <- make_data()
  expect_error(csvm(status ~ 0 + dose, data = d, tpr_min = 0.8), "always has an intercept b")
  expect_error(csvm(status ~ dose - 1, data = d, tpr_min = 0.8), "removes the intercept")
  expect_error(csvm(status ~ dose + offset(age), data = d, tpr_min = 0.8), "offsets are not supported")
  expect_error(csvm(status ~ dose, data = d, tpr_min = 0.8, offset = d$age), "offsets are not supported")
  skip_without_python()
  fit <- fit_example()
  expect_error(predict(fit, d[1:3, ], probability = TRUE),
               "unknown argument \"probability\" to predict().*use type = \"prob\"")
  expect_error(predict(fit, d[1:3, ], se.fit = TRUE), "no standard errors")
  expect_error(predict(fit, d[1:3, ], "class", TRUE), "unnamed argument")
})

test_that("errors are in R's words: unknown arguments, missing and infinite values, Python lists", {
  d <- make_data()
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, probability = TRUE),
               "csvm() has no counterpart: predict(fit, newdata, type = \"prob\") gives probabilities", fixed = TRUE)
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, cost = 2), "did you mean C")
  skip_without_python()
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, gama = 1), "unknown argument \"gama\"; did you mean \"gamma\"?",
               fixed = TRUE)
  d$age[4] <- Inf
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8), "`data` has infinite values (Inf or -Inf) in age", fixed = TRUE)
  d$age[4] <- NA
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, na.action = na.pass), "`data` has missing values in age",
               fixed = TRUE)
  expect_equal(csvmstats:::r_wording("columns ['a', 'b'] with alpha=0.05"), "columns \"a\", \"b\" with alpha = 0.05")
})

test_that("the package's srbct.R example prints no raw Python warning", {
  skip_without_python()
  source <- csvmstats:::python_source()
  data_file <- Sys.getenv("CSVM_SRBCT_PATH")
  if (!nzchar(data_file) && !is.null(source)) {
    data_file <- file.path(dirname(source), "shared", "data", "srbct", "SRBCT.rda")
  }
  skip_if_not(nzchar(data_file) && file.exists(data_file),
              "SRBCT.rda not found (CSVM_SRBCT_PATH, or ../shared/data/srbct beside the csvm-stats source)")
  example <- system.file("examples", "srbct.R", package = "csvmstats")
  python <- reticulate::py_config()$python
  console <- system2("env", c(paste0("RETICULATE_PYTHON=", python), file.path(R.home("bin"), "Rscript"),
                              example, data_file), stdout = TRUE, stderr = TRUE)
  text <- paste(console, collapse = "\n")
  expect_match(text, "Resubstitution table")
  expect_false(grepl("\\.py:[0-9]+|UserWarning|CappedTargetWarning|DegenerateRuleWarning", text))
  # the warnings it gives are R's, starting with csvm:
  warned <- console[grepl("^Warning", console)]
  expect_true(all(grepl("csvm: ", warned) | grepl("^Warning messages?:$", warned)))
})

test_that("predict() refuses infinite values in newdata, naming the data column and row; NaN gives NA", {
  skip_without_python()
  fit <- fit_example()
  expect_match(fit$summary_text, "Formula +status ~ \\.")  # R's formula in the stored Python summary
  new <- make_data()[1:3, ]
  new$age[2] <- Inf
  for (type in c("class", "prob", "decision", "probabilities")) {
    expect_error(predict(fit, new, type = type), "csvm: `newdata` has infinite values (Inf or -Inf) in age (row 2)",
                 fixed = TRUE)
  }
  new$age[2] <- NaN
  decision <- predict(fit, new, type = "decision")
  expect_true(is.na(decision[2]))
  expect_false(anyNA(decision[-2]))
})

test_that("infinite values are named by data column, or by design column when only the coding makes them", {
  frame <- data.frame(a = c(1, Inf, 3), b = c(-Inf, 1, 1), f = c("x", "y", "z"), row.names = c("r1", "r2", "r3"))
  expect_error(csvmstats:::refuse_infinite(frame, "`newdata`", "csvm"), "in a, b (rows r1, r2)", fixed = TRUE)
  expect_error(csvmstats:::refuse_infinite(frame, "`newdata`", "np_classifier"),
               "np_classifier() refuses infinite values in the data too", fixed = TRUE)
  expect_true(csvmstats:::refuse_infinite(frame[3, ], "`newdata`", "csvm"))
  frame$m <- cbind(c(1, 2, 3), c(4, Inf, 6))  # a matrix column, as poly() makes
  expect_error(csvmstats:::refuse_infinite(frame[c(1, 3), c("f", "m")], "`newdata`", "csvm"), NA)
  expect_error(csvmstats:::refuse_infinite(frame[, c("f", "m")], "`newdata`", "csvm"), "in m (row r2)", fixed = TRUE)
})

test_that("csvm() refuses unknown arguments listing every argument it takes, and gamma = \"auto\", in R", {
  d <- make_data()
  message <- tryCatch(csvm(status ~ ., data = d, tpr_min = 0.8, samples = list()), error = conditionMessage)
  expect_match(message, "unknown argument \"samples\"; csvm() takes", fixed = TRUE)
  for (name in c("positive", "recall_min", "tpr_min", "gamma", "time_limit", "fractions", "na.action")) {
    expect_match(message, paste0("[ ,]", name, "[ ,]"))
  }
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, kernel = "rbf", gamma = "auto"),
               "csvm: gamma must be a positive number or \"scale\" (1 / (p var(x)), the default), not \"auto\"",
               fixed = TRUE)
  expect_error(csvm(status ~ ., data = d, tpr_min = 0.8, kernel = "rbf", gamma = "Scale"), "not \"Scale\"")
  expect_equal(csvmstats:::r_wording("enlarge the held-out share (fractions=) or pass samples=."),
               "enlarge the held-out share (fractions) or give more data.")
  skip_without_python()
  api <- reticulate::import("csvm_stats.interfaces.r_api")
  python_options <- c(names(api$MODEL_OPTIONS), names(api$FIT_OPTIONS))
  expect_equal(setdiff(python_options, csvmstats:::.csvm_arguments), character(0))
  tiny <- data.frame(dose = c(1:6, 2.5, 3.5),
                     status = factor(c(rep("control", 6), "case", "case"), levels = c("control", "case")))
  message <- tryCatch(csvm(status ~ dose, data = tiny, tpr_min = 0.8, random_state = 1), error = conditionMessage)
  expect_match(message, "share (fractions) or give more data.", fixed = TRUE)
  expect_false(grepl("samples", message))
})

test_that("the help pages, the README and the R vignettes say what the code does", {
  rd <- tools::Rd_db("csvmstats")
  help_text <- function(name) gsub("\\s+", " ", paste(as.character(rd[[name]]), collapse = ""))
  predict_help <- help_text("predict.csvm.Rd")
  expect_false(grepl("says so with a message", predict_help, fixed = TRUE))  # calibration is done at fit time
  expect_false(grepl("on the training and anchor rows and recalibrated", predict_help, fixed = TRUE))
  expect_match(predict_help, "fitted on all the fit's rows (training, anchor and held-out)", fixed = TRUE)
  expect_match(predict_help, "An infinite value", fixed = TRUE)
  csvm_help <- help_text("csvm.Rd")
  expect_match(csvm_help, "collation of the locale", fixed = TRUE)
  expect_match(csvm_help, "\"auto\"}, \\eqn{1/p}, is not a value here", fixed = TRUE)
  expect_match(help_text("summary.csvm.Rd"), "fit$solver$fit_wall_time", fixed = TRUE)
  source <- csvmstats:::python_source()
  skip_if(is.null(source), "csvmstats was not installed from the csvm-stats repository")
  readme <- paste(readLines(file.path(source, "r_bridge", "README.md")), collapse = "\n")
  expect_false(grepl("one per data row", readme, fixed = TRUE))
  expect_false(grepl("aligned with the data rows", readme, fixed = TRUE))
  vignette <- function(name) gsub("\\s+", " ", paste(readLines(file.path(source, "vignettes", name)), collapse = " "))
  expect_false(grepl("the first call fits the probability model", vignette("csvmstats-session.Rmd"), fixed = TRUE))
  expect_false(grepl("beside the rule on the training and anchor rows, recalibrated",
                     vignette("csvmstats-intro.Rmd"), fixed = TRUE))
})
