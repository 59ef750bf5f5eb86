# Small two-class data with a factor predictor, and one fit shared by the tests.

skip_without_python <- function() {
  if (!csvm_python_available()) {
    skip("the Python module csvm_stats is not available to reticulate (set RETICULATE_PYTHON)")
  }
}

make_data <- function(n = 240, seed = 42) {
  set.seed(seed)
  d <- data.frame(
    dose = rnorm(n),
    age = rnorm(n, 50, 10),
    site = factor(sample(c("north", "south", "west"), n, replace = TRUE))
  )
  score <- 1.5 * d$dose + 0.04 * (d$age - 50) + 0.8 * (d$site == "south") + rnorm(n, sd = 0.7)
  d$status <- factor(ifelse(score > 0, "case", "control"), levels = c("control", "case"))
  d
}

fit_example <- function(data = make_data(), ...) {
  csvm(status ~ ., data = data, tpr_min = 0.8, time_limit = 20, bound = "binomial",
       random_state = 7L, ...)
}

# Run `code` (lines of R) in a new R session (a separate Rscript process) with the package
# loaded and `saved` bound to the list `objects` read back with readRDS; the code puts its result
# into `out`, which is returned (an error showing the session's log when there is none).
in_new_r_session <- function(objects, code) {
  folder <- tempfile("rds")
  dir.create(folder)
  saveRDS(objects, file.path(folder, "objects.rds"))
  script <- file.path(folder, "session.R")
  writeLines(c("library(csvmstats)",
               "saved <- readRDS(file.path(commandArgs(TRUE)[1], 'objects.rds'))",
               code,
               "saveRDS(out, file.path(commandArgs(TRUE)[1], 'out.rds'))"), script)
  log <- system2(file.path(R.home("bin"), "Rscript"), c(script, folder), stdout = TRUE, stderr = TRUE)
  if (!file.exists(file.path(folder, "out.rds"))) {
    stop("the new R session gave no result:\n", paste(log, collapse = "\n"), call. = FALSE)
  }
  readRDS(file.path(folder, "out.rds"))
}
