# Golden tests of print() and summary() of a two-class fit: the printed text of a fit built from
# fixed R vectors (the numbers of BreastCancer, tpr_min = 0.9, random_state = 12345: met on the
# anchor sample but not certified on the held-out one) against the committed text in golden/.
# print and summary work from R vectors only, so this needs no Python and is exact.

golden_fit <- function() {
  rates <- data.frame(
    target = c(0.9, NA, NA, NA), adjusted = c(0.9, NA, NA, NA), bound = c("binomial", "", "", ""),
    required = c(59, NA, NA, NA), anchor_n = c(60, 111, 171, NA), anchor_correct = c(59, 109, 168, NA),
    anchor_rate = c(59 / 60, 109 / 111, 168 / 171, NA), met = c(TRUE, NA, NA, NA),
    heldout_n = c(60, 111, 171, NA), heldout_correct = c(54, 110, 164, NA),
    heldout_rate = c(0.9, 110 / 111, 164 / 171, 0.94550), lower = c(0.812134, 0.950812, 0.917436, 0.861438),
    upper = c(NA, 0.999772, 0.983371, 0.983847), joint_lower = c(0.812134, NA, NA, NA),
    method = c("clopper-pearson", "clopper-pearson 2-sided", "clopper-pearson 2-sided", "mean of TPR, TNR"),
    certified = c(FALSE, NA, NA, NA), row.names = c("tpr", "tnr", "acc", "bacc"), stringsAsFactors = FALSE)
  structure(list(
    call = quote(csvm(formula = Class ~ . - Id, data = bc, tpr_min = 0.9, bound = "binomial", random_state = 12345)),
    kernel = "linear", is_linear = TRUE, positive = "malignant", negative = "benign", C = 1, alpha = 0.05,
    bound = "binomial", nobs = 683L, samples = c(train = 341L, anchor = 171L, holdout = 171L),
    na.action = structure(1:16, class = "omit"),
    coefficients = c("(Intercept)" = -0.06494, Cl.thickness = 1.37457, Cell.size = 0.89309),
    coef_standardized = c(Cl.thickness = 0.4255, Cell.size = 0.3055),
    rates = rates,
    statements = c(tpr = "With 95% confidence the true positive rate of this classifier is at least 0.81.",
                   tnr = "With 95% confidence the true negative rate lies between 0.95 and 1.00.",
                   acc = "With 95% confidence the accuracy lies between 0.91 and 0.99.",
                   bacc = "With 95% confidence the balanced accuracy lies between 0.86 and 0.99."),
    joint_statement = "true positive rate >= 0.81.",
    solver = list(backend = "bnb", backend_version = "csvm-stats 0.1.0", formulation = "branch-and-bound",
                  status = "optimal", objective = 2.07116, gap = 5.19e-6, wall_time = 0.0993, cpu_time = 0.0146,
                  fit_wall_time = 0.412, fit_cpu_time = 0.305),
    warnings = character(0), options = list(tpr_min = 0.9, bound = "binomial", random_state = 12345),
    selected = numeric(0), probability_threshold = 0.444,
    probability_rule = paste("This classifier calls a point malignant when P(malignant) >= 0.444: the",
                             "Venn-Abers probability is monotone in f(x)"),
    calibration = "Venn-Abers, held-out (171 held-out points, 60 positive)"
  ), class = "csvm")
}

expect_golden <- function(lines, name) {
  path <- test_path("golden", name)
  expect_true(file.exists(path), info = paste("no golden file", path))
  expect_identical(lines, readLines(path, encoding = "UTF-8"))
}

test_that("print() of a fit: rates, the certification note and the probability threshold, as in golden/", {
  lines <- capture.output(print(golden_fit()))
  expect_golden(lines, "print-csvm.txt")
  expect_true(any(grepl("NOT certified", lines)))
  expect_true(any(grepl("P(malignant) >= 0.444", lines, fixed = TRUE)))
})

test_that("summary() of a fit: the certified column, the note, the time limit and its clock, as in golden/", {
  lines <- capture.output(print(summary(golden_fit())))
  expect_golden(lines, "summary-csvm.txt")
  expect_true(any(grepl("time_limit = 300 s, counted on the wall clock", lines, fixed = TRUE)))
  expect_false(any(grepl("branch-and-bound|bnb", lines)))  # solver internals only with verbose = TRUE
  detailed <- capture.output(print(summary(golden_fit()), verbose = TRUE))
  expect_equal(setdiff(detailed, lines),
               "Solver: bnb csvm-stats 0.1.0, branch-and-bound, status optimal, objective 2.07116")
})

test_that("the solver's outcome is said in words: optimal within mip_gap, or stopped at the time limit", {
  expect_equal(csvmstats:::solver_outcome(list(status = "optimal", gap = 0), list()),
               "optimal (relative gap 0%, within the requested mip_gap = 0.01%)")
  expect_equal(csvmstats:::solver_outcome(list(status = "time limit (incumbent)", gap = 0.181), list(time_limit = 60)),
               "stopped at the time limit with the best solution found: NOT proven optimal (relative gap 18.1%)")
  expect_equal(csvmstats:::solver_outcome(list(status = "infeasible", gap = NaN), list()),
               "infeasible")
  # Python's sentence, when the record has one: the limit, its clock, the phase, the gap or that none is known
  outcome <- paste("time limit (5 s, wall clock) reached during the search: best classifier found kept,",
                   "gap unknown (no lower bound yet)")
  expect_equal(csvmstats:::solver_outcome(list(status = "time limit (incumbent)", gap = Inf, outcome = outcome),
                                          list(time_limit = 5)),
               paste0("NOT proven optimal: ", outcome))
})

test_that("the Time line shows the whole fit's seconds beside time_limit, the solver's own labelled", {
  fit <- golden_fit()
  lines <- capture.output(print(summary(fit)))
  expect_true(any(grepl(paste("Time: 0.412 s wall-clock, 0.305 s CPU for the whole fit (time_limit = 300 s, counted",
                              "on the wall clock); the solver alone 0.0993 s wall-clock, 0.0146 s CPU"), lines,
                        fixed = TRUE)))
  fit$solver$fit_wall_time <- fit$solver$fit_cpu_time <- NULL  # a fit made by an older csvmstats
  lines <- capture.output(print(summary(fit)))
  expect_true(any(grepl("Time: 0.0993 s wall-clock, 0.0146 s CPU in the solver (time_limit = 300 s", lines,
                        fixed = TRUE)))
})
