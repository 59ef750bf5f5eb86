# The samples of a fit, in the order the data pass through them (r_api's sample_roles).
.sample_roles <- c("training", "anchor", "held-out")

# csvm(): a formula method in the style of stats::lm and a default method csvm(x, y, ...).
#
# R builds the model frame (subset, na.action, R's contrasts from
# options("contrasts")), the numeric design and the response, and sends only
# plain numbers and strings to Python (csvm_stats.interfaces.r_api.fit). Everything the
# methods need is copied into R at fit time, with the bytes of the Python
# model file so that a fit read back with readRDS predicts.

csvm <- function(x, ...) UseMethod("csvm")

csvm.formula <- function(formula, data, tpr_min = NULL, tnr_min = NULL, acc_min = NULL,
                         alpha = 0.05, kernel = "linear", ..., subset, weights,
                         na.action = na.omit, model = TRUE) {
  call <- match.call()
  call[[1L]] <- quote(csvm)
  if (missing(data)) {
    stop("csvm: give the data as a data frame: csvm(y ~ ., data = d)", call. = FALSE)
  }
  formula <- stats::as.formula(formula, env = parent.frame())
  check_formula_terms(formula, data)
  if ("offset" %in% names(list(...))) refuse_offset()
  response_name <- if (length(formula) == 3L) paste(deparse(formula[[2L]]), collapse = " ") else "y"
  mf <- match.call(expand.dots = FALSE)
  mf <- mf[c(1L, match(c("formula", "data", "subset", "weights"), names(mf), 0L))]
  mf$formula <- formula
  mf$na.action <- na.action
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  if (!is.null(stats::model.offset(mf))) refuse_offset()
  if (!is.null(stats::model.weights(mf))) {
    stop("csvm: weights are not supported: the rate constraints and the confidence statements count ",
         "anchor and held-out cases, which case weights would change; replicate rows for frequency ",
         "weights, or require a rate (tpr_min, tnr_min) instead of weighting a class", call. = FALSE)
  }
  options <- c(list(tpr_min = tpr_min, tnr_min = tnr_min, acc_min = acc_min, alpha = alpha,
                    kernel = kernel), list(...))
  fit <- fit_frame(mf, call, options, response_name, model)
  fit$summary_text <- with_formula_line(fit$summary_text, formula)
  fit
}

csvm.default <- function(x, y, ...) {
  call <- match.call()
  call[[1L]] <- quote(csvm)
  if (inherits(x, "formula") || (is.character(x) && length(x) == 1L && grepl("~", x, fixed = TRUE))) {
    stop("csvm: give a formula as a formula object: csvm(y ~ ., data = d)", call. = FALSE)
  }
  if (missing(y)) {
    stop("csvm: give the classes as y, csvm(x, y, ...), or use a formula: csvm(class ~ ., data = d)",
         call. = FALSE)
  }
  if (!is.matrix(x) && !is.data.frame(x)) {
    stop("csvm: x must be a numeric matrix or a data frame, not a ", class(x)[1L], call. = FALSE)
  }
  if (is.matrix(x) && !is.numeric(x)) {
    stop("csvm: x is a ", typeof(x), " matrix; csvm(x, y) needs a numeric matrix ",
         "(or a data frame, whose factor columns R codes)", call. = FALSE)
  }
  if (NROW(y) != nrow(x)) {
    stop("csvm: y has ", NROW(y), " values but x has ", nrow(x), " rows", call. = FALSE)
  }
  data <- as.data.frame(x)
  if (is.null(colnames(x))) names(data) <- paste0("x", seq_len(ncol(data)))
  dots <- list(...)
  if (any(c("subset", "weights", "data") %in% names(dots))) {
    stop("csvm: csvm(x, y) takes no subset, weights or data; subset x and y, or use the formula method",
         call. = FALSE)
  }
  response <- ".y"
  while (response %in% names(data)) response <- paste0(".", response)
  data[[response]] <- y
  formula <- stats::as.formula(paste0("`", response, "` ~ ."), env = baseenv())
  fit <- csvm.formula(formula, data = data, ...)
  call$random_state <- fit$call$random_state
  fit$call <- call
  fit$x_names <- names(data)[names(data) != response]
  fit$summary_text <- sub("(^|\n)(Formula +)[^\n]*", "\\1\\2(arrays)", fit$summary_text)  # not the internal formula
  fit
}

# Fit the model frame mf; the shared body of both methods. Two classes: the CSVM with rate
# targets; more: the multiclass CSVM with per-class recall_min (R/multiclass.R).
fit_frame <- function(mf, call, options, response_name, model) {
  check_no_missing(mf)
  mt <- attr(mf, "terms")
  response <- response_factor(model.response(mf), mt)
  x <- design_matrix(mt, mf)
  options <- check_options(options)
  if (is.null(options$random_state)) {
    # Draw the split's seed from R's generator (set.seed() makes fits reproducible) and put it
    # into the call, so that update(fit, ...) keeps the split.
    options$random_state <- sample.int(.Machine$integer.max, 1L)
    call$random_state <- options$random_state
  }
  multiclass <- nlevels(response) > 2L
  fitted_python <- if (multiclass) {
    fit_multiclass_python(x, response, options, response_name)
  } else {
    fit_binary_python(x, response, options, response_name)
  }
  handle <- fitted_python$results
  # the export computes the probability calibration (several classes without a large enough held-out
  # sample: the CSVM refitted on 5 folds; two-class fits do not refit), whose warnings are said as such
  exported <- py_call("export", handle, context = "probability calibration: ")
  fields <- if (multiclass) multiclass_fields(exported) else fit_fields(exported)
  # capped targets were said before the solve (fitted_python$check); any the check did not
  # report are said now, from the fit's own anchor table
  warn_capped_targets(exported, reported = capped_rates(fitted_python$check))
  fitted <- py_call("predict", handle, x, c("decision", "class"))
  decision <- fitted$decision
  if (multiclass) {
    decision <- matrix(as.numeric(decision), nrow(x), dimnames = list(rownames(mf), levels(response)))
  } else {
    decision <- stats::setNames(as.numeric(decision), rownames(mf))
  }
  cache <- new.env(parent = emptyenv())
  object <- c(fields, list(
    call = call,
    terms = mt,
    xlevels = used_xlevels(mt, mf),
    contrasts = attr(x, "contrasts"),
    na.action = attr(mf, "na.action"),
    response_levels = levels(response),
    options = options,
    random_state = options$random_state,
    fitted.values = decision,
    fitted.class = stats::setNames(factor(as.character(fitted$class), levels = levels(response)),
                                   rownames(mf)),
    sample_roles = sample_role_factor(exported$sample_roles, rownames(mf)),
    model = if (isTRUE(model)) mf else NULL,
    model_file = as.raw(exported$model_file),
    python = handle,
    cache = cache
  ))
  class(object) <- if (multiclass) c("csvm_multiclass", "csvm") else "csvm"
  object
}

# The two-class fit in Python, with the anchor check said before the solve (the split of
# r_api.anchor_check is that of the fit) as $check.
fit_binary_python <- function(x, response, options, response_name) {
  if (!is.null(options$recall_min)) {
    stop("csvm: recall_min is for a response with more than two classes; with two classes require ",
         "tpr_min (the positive class '", levels(response)[2L], "') and/or tnr_min", call. = FALSE)
  }
  positive <- if (is.null(options$positive)) levels(response)[2L] else as.character(options$positive)
  options$positive <- NULL
  if (!positive %in% levels(response)) {
    stop("csvm: positive = '", positive, "' is not a class of the response (",
         paste(levels(response), collapse = ", "), ")", call. = FALSE)
  }
  labels <- as.character(response)
  # the check's and the fit's capped targets are said in R's words (warn_capped_targets), the fit's
  # other warnings as Python words them
  check <- py_call("anchor_check", x, colnames(x), labels, positive, options, response_name,
                   reported = "CappedTargetWarning")
  warn_capped_targets(check)
  fitted <- py_call("fit", x, colnames(x), labels, positive, options, response_name,
                    reported = "CappedTargetWarning")
  fitted$check <- check
  fitted
}

# The factor levels of the variables the terms use: a variable the formula removes
# (Class ~ . - Id) keeps no levels, so new data may have values of it the fit never saw.
used_xlevels <- function(mt, mf) {
  xlevels <- .getXlevels(mt, mf)
  factors <- attr(mt, "factors")
  if (is.null(xlevels) || !length(factors)) return(xlevels)
  used <- rownames(factors)[rowSums(factors != 0) > 0]
  used <- sub("^`(.*)`$", "\\1", used)  # the terms' variables are deparsed: `my grp` is my grp in xlevels
  xlevels[names(xlevels) %in% used]
}

# Missing and infinite values must not cross to Python (reticulate turns a logical NA into TRUE).
check_no_missing <- function(mf) {
  has_na <- vapply(mf, anyNA, logical(1L))
  if (any(has_na)) {
    stop("csvm: `data` has missing values in ", paste(names(mf)[has_na], collapse = ", "),
         "; remove them or use na.action = na.omit (the default) or na.exclude", call. = FALSE)
  }
  has_inf <- vapply(mf, function(column) is.numeric(column) && any(is.infinite(column)), logical(1L))
  if (any(has_inf)) {
    stop("csvm: `data` has infinite values (Inf or -Inf) in ", paste(names(mf)[has_inf], collapse = ", "),
         "; replace or remove those rows (na.action does not drop them)", call. = FALSE)
  }
  if (nrow(mf) == 0L) {
    stop("csvm: no complete rows are left in the data", call. = FALSE)
  }
}

# Formula terms csvm() cannot honour, refused before anything is fitted: no intercept (an SVM's
# decision function w'x + b always has its b) and offsets (the CSVM has no linear predictor to
# shift). `data` resolves the `.` of the formula.
check_formula_terms <- function(formula, data) {
  mt <- tryCatch(stats::terms(formula, data = data), error = function(e) NULL)
  if (is.null(mt)) return(invisible(FALSE))  # model.frame() says what is wrong with the formula or data
  if (identical(attr(mt, "intercept"), 0L)) {
    stop("csvm: the formula removes the intercept (0 + or - 1), but the CSVM's decision function ",
         "f(x) = w'x + b always has an intercept b, which the rate constraints move; write the ",
         "formula without 0 + or - 1", call. = FALSE)
  }
  if (!is.null(attr(mt, "offset"))) refuse_offset()
  invisible(TRUE)
}

refuse_offset <- function() {
  stop("csvm: offsets are not supported: the CSVM's decision function f(x) = w'x + b is fitted under ",
       "rate constraints, not as a linear predictor that an offset could shift; give the variable as a ",
       "predictor instead (y ~ x + z rather than y ~ x + offset(z))", call. = FALSE)
}

# The sample of each row of the model frame (r_api's sample_roles) as a factor named by row; a
# role Python names that is not among .sample_roles becomes a further level, never NA.
sample_role_factor <- function(roles, row_names) {
  roles <- as.character(roles)
  roles[!nzchar(roles)] <- NA_character_
  levels <- union(.sample_roles, stats::na.omit(unique(roles)))
  stats::setNames(factor(roles, levels = levels), row_names)
}

# The response as a factor of two or more classes (logical, numeric and character responses are converted).
response_factor <- function(y, mt) {
  if (is.null(y)) {
    stop("csvm: the formula has no response; write it as class ~ predictors", call. = FALSE)
  }
  if (!is.null(dim(y))) {
    stop("csvm: the response must be a vector, not a matrix", call. = FALSE)
  }
  y <- droplevels(as.factor(y))
  if (nlevels(y) < 2L) {
    stop("csvm: the response has only one class ('", levels(y)[1L],
         "'); CSVM needs examples of at least two classes", call. = FALSE)
  }
  y
}

# The numeric design without the intercept column (the CSVM has its own intercept b),
# coded with R's contrasts (options("contrasts") unless contrasts are given).
design_matrix <- function(mt, mf, contrasts = NULL) {
  x <- model.matrix(mt, mf, contrasts.arg = contrasts)
  colnames(x) <- unique_design_names(x, mt)
  keep <- colnames(x) != "(Intercept)"
  contrasts_used <- attr(x, "contrasts")
  x <- x[, keep, drop = FALSE]
  if (ncol(x) == 0L) {
    stop("csvm: the formula has no predictors", call. = FALSE)
  }
  attr(x, "contrasts") <- contrasts_used
  storage.mode(x) <- "double"
  x
}

# The column names of a model.matrix, made unique: R can give two columns one name (a factor `a`
# with level "b" and a numeric column `ab` both give "ab"), which the fit cannot tell apart. A
# column so duplicated that codes a factor term is named term.level ("a.b"); make.unique() settles
# whatever still clashes ("ab.1"). Names that are unique already are kept as model.matrix gives them.
unique_design_names <- function(x, mt) {
  names <- colnames(x)
  clashing <- names %in% names[duplicated(names)]
  if (!any(clashing)) return(names)
  assign <- attr(x, "assign")
  labels <- c("(Intercept)", attr(mt, "term.labels"))[assign + 1L]
  for (i in which(clashing)) {
    label <- labels[i]
    if (!is.na(label) && nchar(names[i]) > nchar(label) && startsWith(names[i], label)) {
      names[i] <- paste0(label, ".", substring(names[i], nchar(label) + 1L))
    }
  }
  make.unique(names)
}

# The exported values of a two-class fit (csvm_stats.interfaces.r_api.export) as R structures.
fit_fields <- function(exported) {
  coef_names <- as.character(exported$coef_names)
  coefficients <- stats::setNames(c(as.numeric(exported$intercept), as.numeric(exported$coef)),
                                  c("(Intercept)", coef_names))
  standardized <- as.numeric(exported$coef_standardized)
  if (length(standardized)) names(standardized) <- coef_names
  c(shared_fields(exported), list(
    coefficients = coefficients,
    coef_standardized = standardized,
    positive = as.character(exported$positive),
    negative = as.character(exported$negative),
    probability_threshold = as.numeric(exported$probability_threshold),
    probability_rule = as.character(exported$probability_rule),
    calibration = as.character(exported$calibration),
    selected = stats::setNames(as.numeric(exported$selected_coef), as.character(exported$selected_names))
  ))
}

# The fields a two-class and a multiclass export share.
shared_fields <- function(exported) {
  rates <- as.data.frame(exported$rates, stringsAsFactors = FALSE)
  rownames(rates) <- as.character(exported$rate_names)
  # Python's NaN means "not applicable" (no target, no count for a mean of rates): R's NA
  rates[] <- lapply(rates, function(values) if (is.numeric(values)) replace(values, is.nan(values), NA) else values)
  for (column in c("met", "certified")) {
    values <- as.numeric(rates[[column]])
    rates[[column]] <- ifelse(is.nan(values) | is.na(values), NA, values == 1)
  }
  statements <- stats::setNames(as.character(exported$statements), rownames(rates))
  list(
    rates = rates,
    statements = statements,
    joint_statement = as.character(exported$joint_statement),
    summary_text = as.character(exported$summary_text),
    solver = lapply(exported$solver, function(value) if (is.character(value)) value else as.numeric(value)),
    warnings = as.character(exported$warnings),
    kernel = as.character(exported$kernel),
    is_linear = isTRUE(exported$is_linear),
    alpha = as.numeric(exported$alpha),
    bound = as.character(exported$bound),
    C = as.numeric(exported$C),
    nobs = as.integer(exported$n),
    samples = vapply(exported$samples, as.integer, integer(1L)),
    anchor = anchor_fields(exported$anchor),
    api_version = as.integer(exported$api_version)
  )
}

# The anchor requirements of r_api (per constrained rate: anchor points, capped or not, and the
# anchor sizes from which the Hoeffding and binomial margins stay below 1) as R vectors.
anchor_fields <- function(anchor) {
  list(rate = as.character(anchor$rate), target = as.numeric(anchor$target),
       n = as.integer(anchor$n), capped = as.logical(anchor$capped),
       hoeffding = as.integer(anchor$hoeffding), binomial = as.integer(anchor$binomial))
}

# Python's summary of a fit made from R's design names no formula ("Formula  (arrays)"): R's formula there.
with_formula_line <- function(text, formula) {
  formula_text <- paste(deparse(formula, width.cutoff = 500L), collapse = " ")
  sub("(^|\n)(Formula +)\\(arrays\\)", paste0("\\1\\2", gsub("\\", "\\\\", formula_text, fixed = TRUE)), text)
}
