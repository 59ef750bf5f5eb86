# Access to the Python side: the module csvm_stats.r_api, loaded lazily.

# The entry-point version this package speaks (csvm_stats.r_api.API_VERSION).
.csvm_api_version <- 1L

.csvm_env <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  .csvm_env$api <- reticulate::import("csvm_stats.r_api", delay_load = TRUE)
}

# Is the Python package csvm_stats usable from R?
# 
# @return TRUE when reticulate finds a Python with the module
#   \code{csvm_stats.r_api}, FALSE otherwise.
csvm_python_available <- function() {
  reticulate::py_module_available("csvm_stats.r_api")
}

# Stop with a clear message when a Python module cannot be imported.
require_python_module <- function(module) {
  if (!reticulate::py_module_available(module)) {
    python <- tryCatch(reticulate::py_config()$python, error = function(e) "none found")
    stop("csvm: the Python module '", module, "' is not available in the Python that ",
         "reticulate uses (", python, "). Install it there (pip install csvm-stats) ",
         "or point RETICULATE_PYTHON to a Python that has it.", call. = FALSE)
  }
  invisible(TRUE)
}

# The r_api module, after checking that it exists and speaks our version.
csvm_api <- function() {
  require_python_module("csvm_stats.r_api")
  api <- .csvm_env$api
  version <- as.integer(api$api_version())
  if (!identical(version, .csvm_api_version)) {
    stop("csvm: the Python package speaks entry-point version ", version,
         " but this R package needs version ", .csvm_api_version,
         "; install matching versions of csvmstats and csvm-stats.", call. = FALSE)
  }
  api
}

# Is the Python object behind a fit still alive (it is not after saveRDS/readRDS)?
python_handle_alive <- function(handle) {
  !is.null(handle) && inherits(handle, "python.builtin.object") &&
    !reticulate::py_is_null_xptr(handle)
}
