# One classifier on both sides: R codes factors with options("contrasts") and sends its
# numeric design; Python's formulas code every factor with treatment contrasts. With the same
# coding, data and seed, the two fits are the same classifier.

breast_cancer <- function() {
  skip_if_not_installed("mlbench")
  env <- new.env()
  utils::data("BreastCancer", package = "mlbench", envir = env)
  env$BreastCancer
}

test_that("R's options('contrasts') decides how ordered factors are coded", {
  skip_without_python()
  d <- breast_cancer()
  fit <- csvm(Class ~ Cl.thickness + Cell.size, data = d, tpr_min = 0.9, bound = "binomial",
              random_state = 1L, time_limit = 60)
  expect_true("Cl.thickness.L" %in% names(coef(fit)))
  expect_equal(fit$contrasts$Cl.thickness, "contr.poly")
  old <- options(contrasts = c("contr.treatment", "contr.treatment"))
  on.exit(options(old))
  treatment <- csvm(Class ~ Cl.thickness + Cell.size, data = d, tpr_min = 0.9, bound = "binomial",
                    random_state = 1L, time_limit = 60)
  expect_true("Cl.thickness2" %in% names(coef(treatment)))
  options(old)
  # predict() codes new data with the fit's contrasts, whatever the options are now
  expect_equal(predict(treatment, d[1:20, ], type = "decision"), treatment$fitted.values[1:20],
               tolerance = 1e-8)
})

test_that("BreastCancer fitted from R and from Python through r_bridge: the same coefficients to 1e-5", {
  skip_without_python()
  d <- breast_cancer()
  old <- options(contrasts = c("contr.treatment", "contr.treatment"))
  on.exit(options(old))
  fit <- csvm(Class ~ . - Id, data = d, tpr_min = 0.9, bound = "binomial", random_state = 1L,
              time_limit = 120)
  options(old)
  expect_equal(fit$nobs, 683L)
  script <- tempfile(fileext = ".py")
  writeLines(c(
    "import sys",
    "from r_bridge import load_dataset",
    "from csvm_stats import CSVM",
    "data = load_dataset('BreastCancer', package='mlbench').dropna()",
    "fit = CSVM.from_formula('Class ~ . - Id', data, tpr_min=0.9, bound='binomial').fit(random_state=1, time_limit=120)",
    "for name, value in fit.params.items():",
    "    sys.stdout.write(f'{name}\\t{value!r}\\n')"), script)
  python <- reticulate::py_config()$python
  output <- system2(python, script, stdout = TRUE, stderr = FALSE, env = "RPY2_CFFI_MODE=ABI")
  result <- utils::read.delim(text = output, header = FALSE, col.names = c("name", "value"),
                              colClasses = c("character", "numeric"))
  python_coef <- stats::setNames(result$value, sub("\\[T\\.(.*)\\]$", "\\1", result$name))
  names(python_coef)[names(python_coef) == "Intercept"] <- "(Intercept)"
  expect_setequal(names(python_coef), names(coef(fit)))
  expect_equal(python_coef[names(coef(fit))], coef(fit), tolerance = 1e-5)
})

