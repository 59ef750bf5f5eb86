# One classifier on both sides: R codes factors with options("contrasts") and sends its
# numeric design; Python's formulas code unordered factors with treatment contrasts and ordered
# ones with treatment (the default) or R's polynomial contrasts (ordered_contrasts = "poly").
# With the same coding, data and seed, the two fits are the same classifier.

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

# Fit BreastCancer (Class ~ . - Id) in a separate Python process and return its coefficients under
# R's names (Python's x[T.a] is R's xa, x[.L] is x.L, x[^4] is x^4). The data cross as an .rds file
# read by r_bridge.load_rds (the rdata package, which install_python() installs; no rpy2 needed).
python_breast_cancer_coef <- function(data, ordered_contrasts) {
  skip_if_not(reticulate::py_module_available("rdata"),
              "the Python package rdata (r_bridge's .rds reader) is not installed; install_python() installs it")
  rds <- tempfile(fileext = ".rds")
  saveRDS(data, rds)
  script <- tempfile(fileext = ".py")
  writeLines(c(
    "import sys",
    "from r_bridge import load_rds",
    "from csvm_stats import CSVM",
    "data = load_rds(sys.argv[1]).dropna()",
    paste0("model = CSVM.from_formula('Class ~ . - Id', data, tpr_min=0.9, bound='binomial', ",
           "ordered_contrasts='", ordered_contrasts, "')"),
    "fit = model.fit(random_state=1, time_limit=120)",
    "for name, value in fit.params.items():",
    "    sys.stdout.write(f'{name}\\t{value!r}\\n')"), script)
  python <- reticulate::py_config()$python
  output <- system2(python, c(script, rds), stdout = TRUE, stderr = FALSE)
  if (!length(output)) stop("the Python fit gave no coefficients (run the script by hand to see why)", call. = FALSE)
  result <- utils::read.delim(text = output, header = FALSE, col.names = c("name", "value"),
                              colClasses = c("character", "numeric"), quote = "")
  names <- sub("\\[T\\.(.*)\\]$", "\\1", result$name)
  names <- sub("\\[([.^][^]]*)\\]$", "\\1", names)
  names[names == "Intercept"] <- "(Intercept)"
  stats::setNames(result$value, names)
}

test_that("BreastCancer under R's default contrasts, from R and from Python (the data read by r_bridge): the same coefficients to 1e-5", {
  skip_without_python()
  skip_if_not_installed("mlbench")
  d <- breast_cancer()
  old <- options(contrasts = c(unordered = "contr.treatment", ordered = "contr.poly"))  # R's default
  on.exit(options(old))
  fit <- csvm(Class ~ . - Id, data = d, tpr_min = 0.9, bound = "binomial", random_state = 1L,
              time_limit = 120)
  options(old)
  expect_equal(fit$nobs, 683L)
  expect_true(all(c("Cl.thickness.L", "Cl.thickness^9", "Bare.nuclei10") %in% names(coef(fit))))
  python_coef <- python_breast_cancer_coef(d, "poly")
  expect_setequal(names(python_coef), names(coef(fit)))
  expect_equal(python_coef[names(coef(fit))], coef(fit), tolerance = 1e-5)
})

test_that("BreastCancer with treatment contrasts on both sides: the same coefficients to 1e-5", {
  skip_without_python()
  skip_if_not_installed("mlbench")
  d <- breast_cancer()
  old <- options(contrasts = c("contr.treatment", "contr.treatment"))
  on.exit(options(old))
  fit <- csvm(Class ~ . - Id, data = d, tpr_min = 0.9, bound = "binomial", random_state = 1L,
              time_limit = 120)
  options(old)
  python_coef <- python_breast_cancer_coef(d, "treatment")
  expect_setequal(names(python_coef), names(coef(fit)))
  expect_equal(python_coef[names(coef(fit))], coef(fit), tolerance = 1e-5)
})
