# Access to the Python side: the module csvm_stats.interfaces.r_api, loaded lazily, in
# the virtualenv made by install_python() unless the user chose a Python.

# The entry-point version this package speaks (csvm_stats.interfaces.r_api.API_VERSION).
.csvm_api_version <- 3L
# The first reticulate release that reads numpy 2 arrays (its NEWS: "Internal updates for NumPy 2.0").
.reticulate_numpy2 <- "1.38.0"
# The virtualenv install_python() makes (a name under reticulate's WORKON_HOME, or a path).
.default_virtualenv <- "r-csvmstats"

.csvm_env <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  use_csvm_virtualenv()
  .csvm_env$api <- reticulate::import("csvm_stats.interfaces.r_api", delay_load = TRUE)
}

# The virtualenv of install_python(): CSVMSTATS_VIRTUALENV, else "r-csvmstats".
csvm_virtualenv <- function() {
  Sys.getenv("CSVMSTATS_VIRTUALENV", .default_virtualenv)
}

# Point reticulate at that virtualenv when it exists and the user has not chosen a Python
# (RETICULATE_PYTHON, or a Python already started in this session).
use_csvm_virtualenv <- function() {
  if (nzchar(Sys.getenv("RETICULATE_PYTHON")) || reticulate::py_available(initialize = FALSE)) {
    return(invisible(FALSE))
  }
  envname <- csvm_virtualenv()
  if (!reticulate::virtualenv_exists(envname)) return(invisible(FALSE))
  reticulate::use_virtualenv(envname, required = FALSE)
  invisible(TRUE)
}

# Is the Python package csvm_stats usable from R?
csvm_python_available <- function() {
  reticulate::py_module_available("csvm_stats.interfaces.r_api")
}

# How to get a working Python, for the end of error messages.
install_advice <- function() {
  paste0("Run csvmstats::install_python() once (it makes the virtualenv '", csvm_virtualenv(),
         "' with csvm-stats and a numpy this reticulate can read) and restart R; ",
         "or point RETICULATE_PYTHON to a Python that has csvm-stats")
}

# Stop with a clear message when a Python module cannot be imported.
require_python_module <- function(module) {
  if (!reticulate::py_module_available(module)) {
    python <- tryCatch(reticulate::py_config()$python, error = function(e) "none found")
    stop("csvm: the Python module '", module, "' is not available in the Python that ",
         "reticulate uses (", python, "). ", install_advice(), ".", call. = FALSE)
  }
  invisible(TRUE)
}

# The version of numpy in the Python that reticulate runs, asked of that Python (as a string, so
# that no array crosses: reticulate may be unable to read numpy's arrays); NULL when it cannot import
# numpy. reticulate's py_config() is only the fallback: it can miss a numpy that imports (reticulate
# 1.28 with a pyenv shim reports "numpy: [NOT FOUND]").
python_numpy_version <- function(config = tryCatch(reticulate::py_config(), error = function(e) NULL)) {
  version <- tryCatch(as.character(reticulate::py_eval("__import__('numpy').__version__", convert = TRUE)),
                      error = function(e) NULL)
  if (length(version) == 1L && !is.na(version) && nzchar(version)) return(version)
  version <- config$numpy$version
  if (is.null(version)) NULL else as.character(version)
}

# Stop when reticulate cannot read the numpy of its Python (numpy 2 needs reticulate >= 1.38.0).
# Called after require_python_module(), so the Python is running and can be asked.
check_numpy <- function(reticulate_version = packageVersion("reticulate"),
                        numpy_version = python_numpy_version(),
                        python = tryCatch(reticulate::py_config()$python, error = function(e) "unknown")) {
  if (is.null(numpy_version)) {
    stop("csvm: the Python that reticulate uses (", python, ") cannot import numpy. ", install_advice(), ".",
         call. = FALSE)
  }
  # "2.1.0rc1" and the like: the release numbers only
  numpy_version <- numeric_version(sub("^([0-9]+(\\.[0-9]+)*).*$", "\\1", as.character(numpy_version)))
  if (reticulate_version < .reticulate_numpy2 && numpy_version >= "2") {
    stop("csvm: reticulate ", reticulate_version, " cannot read arrays of numpy ", numpy_version,
         " (numpy 2 needs reticulate >= ", .reticulate_numpy2, "), the numpy of ", python, ". ",
         "Fix: csvmstats::install_python() makes a virtualenv with numpy < 2 (then restart R), ",
         "or run pip install 'numpy<2' in that Python, or upgrade reticulate.", call. = FALSE)
  }
  invisible(TRUE)
}

# The r_api module, after checking that it exists, that reticulate reads its numpy,
# and that it speaks our version (checked once per session).
csvm_api <- function() {
  if (isTRUE(.csvm_env$checked)) return(.csvm_env$api)
  require_python_module("csvm_stats.interfaces.r_api")
  check_numpy()
  api <- .csvm_env$api
  version <- as.integer(api$api_version())
  if (!identical(version, .csvm_api_version)) {
    stop("csvm: the Python package speaks entry-point version ", version,
         " but this R package needs version ", .csvm_api_version,
         "; install matching versions of csvmstats and csvm-stats (csvmstats::install_python()).",
         call. = FALSE)
  }
  .csvm_env$checked <- TRUE
  api
}

# Call the entry point `entry` of r_api (csvm_stats.interfaces.r_api.call: fit, anchor_check, export,
# load, predict, fit_multiclass, anchor_check_multiclass, fit_np, predict_np) and return its value. Every Python warning
# raised during the call comes back as a string and is re-issued here as an R warning in R's wording
# (issue_python_warnings), except the kinds in `reported` (said already in R's words), so that nothing
# reaches the console from Python and suppressWarnings() silences them all. `context` starts each
# warning's message (e.g. "probability calibration: "). A Python exception becomes an R error
# "csvm: <its message>" in R's wording, without the exception's class path and the traceback.
# `caller` names the R function in errors and warnings ("csvm", or "np_classifier").
py_call <- function(entry, ..., reported = character(), context = "", caller = "csvm") {
  api <- csvm_api()
  out <- tryCatch(api$call(entry, ...), error = function(e) {
    stop(caller, ": ", python_error_message(conditionMessage(e)), call. = FALSE)
  })
  issue_python_warnings(out$warnings, out$warning_kinds, reported = reported, context = context,
                        caller = caller)
  out$value
}

python_error_message <- function(text) {
  text <- sub("\n\\s*(Detailed traceback|Run `reticulate::py_last_error\\(\\)`).*$", "", text)
  text <- sub("^[^\n]*py_call_impl[^\n]*:\\s*", "", text)
  text <- sub("^\\s*([A-Za-z_][A-Za-z0-9_]*\\.)*[A-Za-z_]*(Error|Exception|Warning):\\s*", "", text)
  r_wording(trimws(text))
}

# Is the Python object behind a fit still alive (it is not after saveRDS/readRDS)?
python_handle_alive <- function(handle) {
  !is.null(handle) && inherits(handle, "python.builtin.object") &&
    !reticulate::py_is_null_xptr(handle)
}
