# One-command install: install_python() in a fresh R session, then a new session that
# uses it without any Python setting; and the numpy/reticulate check.

test_that("the numpy check names the fix when reticulate cannot read numpy 2", {
  expect_error(csvmstats:::check_numpy(package_version("1.28"), "2.4.0", "/venv/bin/python"),
               "reticulate 1.28 cannot read arrays of numpy 2.4.0 \\(numpy 2 needs reticulate >= 1.38.0\\)")
  expect_error(csvmstats:::check_numpy(package_version("1.28"), "2.4.0", "/venv/bin/python"),
               "csvmstats::install_python\\(\\) makes a virtualenv with numpy < 2")
  expect_error(csvmstats:::check_numpy(package_version("1.28"), NULL, "/venv/bin/python"), "cannot import numpy")
  expect_error(csvmstats:::check_numpy(package_version("1.28"), "2.1.0rc1", "/venv/bin/python"),
               "cannot read arrays of numpy 2.1.0")
  expect_true(csvmstats:::check_numpy(package_version("1.28"), "1.26.4", "/venv/bin/python"))
  expect_true(csvmstats:::check_numpy(package_version("1.38.0"), "2.1.0", "/venv/bin/python"))
  expect_equal(csvmstats:::numpy_requirement(package_version("1.28")), "numpy<2")
  expect_equal(csvmstats:::numpy_requirement(package_version("1.38.0")), "numpy")
})

test_that("the numpy version is asked of the running Python, not of py_config() (review r8 F20)", {
  skip_without_python()
  csvmstats:::require_python_module("csvm_stats.interfaces.r_api")
  running <- reticulate::py_eval("__import__('numpy').__version__")
  # reticulate 1.28's py_config() reports no numpy for a pyenv shim although numpy imports
  expect_equal(csvmstats:::python_numpy_version(config = list(python = "/shim/python3", numpy = NULL)), running)
  expect_true(csvmstats:::check_numpy(package_version("1.38.0"),
                                      csvmstats:::python_numpy_version(config = list(numpy = NULL)), "/shim/python3"))
  # the numpy-2 diagnosis holds for the version so found
  if (numeric_version(running) >= "2") {
    expect_error(csvmstats:::check_numpy(package_version("1.28"),
                                         csvmstats:::python_numpy_version(config = list(numpy = NULL)), "/shim"),
                 "cannot read arrays of numpy 2")
  }
})

test_that("install_python() refuses a path that is not the csvm-stats source", {
  expect_error(install_python(path = tempdir()), "is not the csvm-stats source")
  expect_error(install_python(path = NULL), "csvm-stats is not on PyPI")
})

test_that("install_python() in a fresh R session; a new session then reaches summary(fit) with nothing set", {
  skip_if(is.null(csvmstats:::python_source()),
          "csvmstats was not installed from the csvm-stats repository (no recorded Python source)")
  home <- tempfile("workon")
  dir.create(home)
  on.exit(unlink(home, recursive = TRUE), add = TRUE)
  rscript <- file.path(R.home("bin"), "Rscript")
  run <- function(code) {
    script <- tempfile(fileext = ".R")
    writeLines(code, script)
    # A session as a new user has it: no RETICULATE_PYTHON, no PYTHONPATH; the virtualenv goes
    # under a temporary WORKON_HOME instead of ~/.virtualenvs.
    system2("env", c("-u", "RETICULATE_PYTHON", "-u", "PYTHONPATH", "-u", "CSVMSTATS_VIRTUALENV",
                     paste0("WORKON_HOME=", home), rscript, script), stdout = TRUE, stderr = TRUE)
  }
  installed <- run("csvmstats::install_python()")
  expect_true(any(grepl("installed into", installed)), info = paste(installed, collapse = "\n"))
  expect_true(dir.exists(file.path(home, "r-csvmstats")))
  session <- run(c(
    "library(csvmstats)",
    "d <- data.frame(x = c(seq(-2, 2, length.out = 100), seq(-1, 3, length.out = 100)),",
    "                y = factor(rep(c('no', 'yes'), each = 100)))",
    "fit <- csvm(y ~ x, data = d, tpr_min = 0.8, bound = 'binomial', random_state = 1)",
    "print(summary(fit))",
    "cat('rdata:', reticulate::py_module_available('rdata'), '\\n')",
    "cat('python:', reticulate::py_config()$python, '\\n')"))
  text <- paste(session, collapse = "\n")
  expect_match(text, "Confidence statements")
  expect_match(text, "rdata: TRUE")  # what r_bridge needs to read and write R files
  expect_match(text, paste0("python: ", normalizePath(home), "/r-csvmstats/bin/python"), fixed = TRUE)
})
