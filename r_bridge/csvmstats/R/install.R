# install_python(): one command that makes the Python side, in the style of
# reticulate's virtualenv_create() / py_install().

install_python <- function(path = python_source(), envname = csvm_virtualenv(), python = NULL,
                           numpy = numpy_requirement(), force = FALSE) {
  if (is.null(path)) {
    stop("csvm: install_python() needs the csvm-stats Python source (the folder with pyproject.toml, ",
         "or a wheel): give it as path = \"/path/to/csvm-stats\". csvm-stats is not on PyPI.",
         call. = FALSE)
  }
  if (!is.character(path) || length(path) != 1L || is.na(path)) {
    stop("csvm: path must be one file or folder name", call. = FALSE)
  }
  source_ok <- (dir.exists(path) && file.exists(file.path(path, "pyproject.toml"))) ||
    (file.exists(path) && !dir.exists(path) && grepl("\\.(whl|tar\\.gz|zip)$", path))
  if (!source_ok) {
    stop("csvm: path = '", path, "' is not the csvm-stats source (a folder with pyproject.toml) ",
         "nor a wheel or source archive", call. = FALSE)
  }
  path <- normalizePath(path)
  if (is.null(python)) python <- default_python()
  if (isTRUE(force) && reticulate::virtualenv_exists(envname)) {
    reticulate::virtualenv_remove(envname, confirm = FALSE)
  }
  if (!reticulate::virtualenv_exists(envname)) {
    reticulate::virtualenv_create(envname, python = python, packages = numpy)
  }
  reticulate::virtualenv_install(envname, c(path, numpy, .python_extras))
  env_python <- reticulate::virtualenv_python(envname)
  versions <- system2(env_python, c("-c", shQuote(paste(
    "import csvm_stats.interfaces.r_api as a, numpy, rdata, r_bridge;",
    "print(a.environment()['csvm_stats'], numpy.__version__, rdata.__version__)"))), stdout = TRUE)
  message("csvm: csvm-stats ", versions[length(versions)], " (csvm-stats, numpy, rdata) installed into ",
          env_python)
  if (!reticulate::py_available(initialize = FALSE)) {
    reticulate::use_virtualenv(envname, required = TRUE)
  } else if (!identical(normalizePath(reticulate::py_config()$python), normalizePath(env_python))) {
    message("csvm: this R session already runs another Python (", reticulate::py_config()$python,
            "); restart R and library(csvmstats) uses the new virtualenv")
  }
  invisible(env_python)
}

# What the Python side of r_bridge needs beyond csvm-stats itself: rdata reads and writes .rds and
# .rda files without R (r_bridge.load_rds, save_rds, srbct()). rpy2, which r_bridge needs only to run
# R from Python, is not installed: from R it is not needed.
.python_extras <- "rdata>=0.11"

# numpy < 2 for a reticulate that cannot read numpy 2 arrays, else any numpy.
numpy_requirement <- function(reticulate_version = packageVersion("reticulate")) {
  if (reticulate_version < .reticulate_numpy2) "numpy<2" else "numpy"
}

# The csvm-stats source this package was installed from (recorded by ./configure
# when it is installed from the csvm-stats repository), or CSVMSTATS_SOURCE, or NULL.
python_source <- function() {
  given <- Sys.getenv("CSVMSTATS_SOURCE")
  if (nzchar(given)) return(given)
  recorded <- system.file("python-source", package = "csvmstats")
  if (!nzchar(recorded)) return(NULL)
  path <- readLines(recorded, n = 1L, warn = FALSE)
  if (length(path) && dir.exists(path)) path else NULL
}

# A Python 3 to build the virtualenv from.
default_python <- function() {
  found <- Sys.which(c("python3", "python"))
  found <- found[nzchar(found)]
  if (!length(found)) {
    stop("csvm: no python3 on the PATH; install Python 3.10 or later (with its venv module) ",
         "or give install_python(python = \"/path/to/python3\")", call. = FALSE)
  }
  unname(found[[1L]])
}
