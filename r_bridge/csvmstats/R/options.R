# R-side checks of csvm()'s options, so that a bad value gets an R error naming
# the argument (not a Python traceback or the solver's C-level messages), and
# e1071 / kernlab names get a "did you mean".

# Arguments of e1071::svm and kernlab::ksvm users type, with what to write here.
.foreign_arguments <- c(
  cost = "C (here the objective is w'w + C sum(xi), so e1071's cost = c is C = 2 * c)",
  sigma = "gamma (kernlab's rbfdot sigma is gamma here)",
  probability = "nothing: predict(fit, newdata, type = \"prob\") gives probabilities",
  class.weights = "nothing: require a rate instead (tpr_min, tnr_min, acc_min)",
  scale = "standardize (TRUE by default)",
  nu = "nothing: csvm() fits a C-classification SVM",
  cross = "nothing: the held-out sample is part of every fit (fractions)"
)

# Kernel names of e1071 and kernlab, with the name csvm() uses.
.foreign_kernels <- c(radial = "rbf", "radial basis" = "rbf", rbfdot = "rbf", gaussian = "rbf",
                      polynomial = "poly", polydot = "poly", vanilladot = "linear")

# Every option csvm() takes besides the data (formula and data, or x and y): its own arguments,
# the class and recall arguments R handles, and the options of csvm_stats.interfaces.r_api
# (MODEL_OPTIONS and FIT_OPTIONS; a test checks that this list covers them). Any other name is
# refused here, listing these.
.csvm_arguments <- c(
  "tpr_min", "tnr_min", "acc_min", "recall_min", "positive", "alpha", "bound", "guarantee",
  "kernel", "C", "gamma", "degree", "coef0", "rank", "standardize", "penalty", "max_features", "screen",
  "big_m", "fractions", "random_state", "solver", "time_limit", "clock", "mip_gap", "threads",
  "warm_start", "verbose", "subset", "na.action", "model"
)

.kernels <- c("linear", "rbf", "poly")
.bounds <- c("hoeffding", "binomial", "none")

# Evaluate `expr`, whose errors start "csvm: " (the checks here speak as csvm()), with the errors said
# by `caller` instead (np_classifier() uses csvm()'s checks).
as_caller <- function(caller, expr) {
  tryCatch(expr, error = function(e) {
    stop(sub("^csvm: ", paste0(caller, ": "), conditionMessage(e)), call. = FALSE)
  })
}

# Options as Python will get them: named, no NULLs, no NAs, each value checked.
check_options <- function(options) {
  options <- options[!vapply(options, is.null, logical(1L))]
  if (length(options) && (is.null(names(options)) || any(names(options) == ""))) {
    stop("csvm: every extra argument must be named (e.g. C = 1, random_state = 1)", call. = FALSE)
  }
  foreign <- intersect(names(options), names(.foreign_arguments))
  if (length(foreign)) {
    counterpart <- .foreign_arguments[[foreign[1L]]]
    stop("csvm: '", foreign[1L], "' is an e1071/kernlab argument; ",
         if (startsWith(counterpart, "nothing: ")) {
           paste0("csvm() has no counterpart: ", sub("^nothing: ", "", counterpart))
         } else {
           paste0("did you mean ", counterpart, "?")
         }, call. = FALSE)
  }
  unknown <- setdiff(names(options), .csvm_arguments)
  if (length(unknown)) stop(unknown_arguments_message(unknown), call. = FALSE)
  bad <- names(options)[vapply(options, anyNA, logical(1L))]
  if (length(bad)) {
    stop("csvm: option(s) ", paste(bad, collapse = ", "), " are NA; give a value or leave them out",
         call. = FALSE)
  }
  for (name in names(options)) check_option(name, options[[name]])
  options
}

check_option <- function(name, value) {
  switch(name,
    tpr_min = , tnr_min = , acc_min = check_number(name, value, lower = 0, upper = 1, open = TRUE,
                                                   what = "a required rate strictly between 0 and 1"),
    alpha = check_number(name, value, lower = 0, upper = 1, open = TRUE,
                         what = "a level strictly between 0 and 1"),
    C = , big_m = check_number(name, value, lower = 0, open = TRUE, what = "a positive number"),
    time_limit = check_number(name, value, lower = 0, open = TRUE,
                              what = "a positive number of seconds"),
    mip_gap = check_number(name, value, lower = 0, upper = 1, what = "a relative gap in [0, 1)"),
    coef0 = check_number(name, value, what = "a finite number"),
    threads = , degree = , rank = , max_features = , screen = check_whole(name, value, lower = 1L),
    penalty = check_choice(name, value, c("l1", "l2")),
    random_state = check_whole(name, value, lower = 0L),
    standardize = , verbose = , warm_start = check_flag(name, value),
    solver = check_string(name, value),
    kernel = check_kernel(value),
    bound = check_choice(name, value, .bounds),
    clock = check_choice(name, value, c("wall", "cpu")),
    gamma = check_gamma(value),
    guarantee = if (is.character(value)) check_choice(name, value, c("tpr", "tnr")) else check_flag(name, value),
    recall_min = if (!is.numeric(value) || !length(value) || is.null(names(value)) || any(names(value) == "") ||
                     anyDuplicated(names(value)) || any(!is.finite(value)) || any(value <= 0 | value >= 1)) {
      stop("csvm: recall_min must be a named vector of required recalls strictly between 0 and 1, ",
           "one per class, e.g. c(BL = 0.9, EWS = 0.8), not ", shown(value), call. = FALSE)
    },
    fractions = if (!is.numeric(value) || length(value) != 3L || any(!is.finite(value)) || any(value < 0)) {
      stop("csvm: fractions must be three shares (training, anchor, held-out) >= 0, e.g. c(0.5, 0.25, 0.25)",
           call. = FALSE)
    },
    invisible(NULL)  # other names: Python names the unknown ones
  )
  invisible(TRUE)
}

# "unknown argument "gama"; did you mean "gamma"?" when every unknown name is close to one csvm()
# takes, else the list of all it takes.
unknown_arguments_message <- function(unknown) {
  quoted <- paste0("\"", unknown, "\"", collapse = ", ")
  head <- paste0("csvm: unknown argument", if (length(unknown) > 1L) "s", " ", quoted)
  guesses <- vapply(unknown, function(name) {
    distance <- utils::adist(name, .csvm_arguments)[1L, ] / pmax(nchar(name), nchar(.csvm_arguments))
    if (min(distance) <= 0.4) .csvm_arguments[which.min(distance)] else NA_character_
  }, character(1L))
  if (!anyNA(guesses)) {
    return(paste0(head, "; did you mean ", paste0("\"", unique(guesses), "\"", collapse = ", "), "?"))
  }
  paste0(head, "; csvm() takes ", paste(.csvm_arguments, collapse = ", "),
         " (besides the formula and data, or x and y)")
}

# gamma: a positive number or "scale"; scikit-learn's "auto" (1 / p) is not a value here.
check_gamma <- function(value) {
  if (is.character(value) && length(value) == 1L && value == "auto") {
    stop("csvm: gamma must be a positive number or \"scale\" (1 / (p var(x)), the default), not \"auto\"; ",
         "for scikit-learn's \"auto\" give the number 1 / p, p the number of design columns ",
         "(ncol(model.matrix(formula, data)) - 1)", call. = FALSE)
  }
  if (is.character(value)) check_choice("gamma", value, "scale") else
    check_number("gamma", value, lower = 0, open = TRUE, what = "a positive number or \"scale\"")
}

check_number <- function(name, value, lower = -Inf, upper = Inf, open = FALSE, what) {
  ok <- is.numeric(value) && length(value) == 1L && is.finite(value) &&
    (if (open) value > lower else value >= lower) && value < upper
  if (!ok) stop("csvm: ", name, " must be ", what, ", not ", shown(value), call. = FALSE)
}

check_whole <- function(name, value, lower) {
  ok <- is.numeric(value) && length(value) == 1L && is.finite(value) && value == round(value) &&
    value >= lower && value <= .Machine$integer.max
  if (!ok) {
    stop("csvm: ", name, " must be a whole number >= ", lower, ", not ", shown(value), call. = FALSE)
  }
}

check_flag <- function(name, value) {
  if (!is.logical(value) || length(value) != 1L) {
    stop("csvm: ", name, " must be TRUE or FALSE, not ", shown(value), call. = FALSE)
  }
}

check_string <- function(name, value) {
  if (!is.character(value) || length(value) != 1L) {
    stop("csvm: ", name, " must be one string, not ", shown(value), call. = FALSE)
  }
}

check_choice <- function(name, value, choices) {
  check_string(name, value)
  if (!value %in% choices) {
    stop("csvm: ", name, " must be one of ", paste0("\"", choices, "\"", collapse = ", "),
         ", not ", shown(value), call. = FALSE)
  }
}

check_kernel <- function(value) {
  check_string("kernel", value)
  if (value %in% names(.foreign_kernels)) {
    stop("csvm: kernel = \"", value, "\" is e1071/kernlab's name; did you mean kernel = \"",
         .foreign_kernels[[value]], "\"? (gamma defaults to \"scale\", 1 / (p var(x)), and coef0 to 1 here)",
         call. = FALSE)
  }
  check_choice("kernel", value, .kernels)
}

# A value as the user would type it, shortened.
shown <- function(value) {
  text <- paste(deparse(value, width.cutoff = 60L), collapse = " ")
  if (nchar(text) > 60L) paste0(substr(text, 1L, 57L), "...") else text
}
