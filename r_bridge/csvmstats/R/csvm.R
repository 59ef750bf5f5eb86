# The formula front end: csvm(formula, data, ...) in the style of stats::lm.
#
# R builds the model frame and the numeric design (model.frame, terms,
# model.matrix, xlevels), handles missing values, checks the response and
# sends only plain numbers and strings to Python (csvm_stats.r_api.fit).
# Everything the methods need is copied into R vectors here, at fit time.

csvm <- function(formula, data, tpr_min = NULL, tnr_min = NULL, acc_min = NULL,
                 alpha = 0.05, kernel = "linear", ..., na.action = na.omit) {
  call <- match.call()
  if (missing(data)) {
    stop("csvm: give the data as a data frame: csvm(y ~ ., data = d)", call. = FALSE)
  }
  formula <- stats::as.formula(formula)
  mf <- model.frame(formula, data = data, na.action = na.action, drop.unused.levels = TRUE)
  check_no_missing(mf)
  mt <- attr(mf, "terms")
  response <- response_factor(model.response(mf), mt)
  x <- design_matrix(mt, mf)
  options <- c(list(tpr_min = tpr_min, tnr_min = tnr_min, acc_min = acc_min,
                    alpha = alpha, kernel = kernel), list(...))
  positive <- if (is.null(options$positive)) levels(response)[2L] else as.character(options$positive)
  options$positive <- NULL
  if (!positive %in% levels(response)) {
    stop("csvm: positive = '", positive, "' is not a class of the response (",
         paste(levels(response), collapse = ", "), ")", call. = FALSE)
  }
  if (is.null(options$random_state)) {
    # Draw the split's seed from R's generator so that set.seed() makes fits reproducible.
    options$random_state <- sample.int(.Machine$integer.max, 1L)
  }
  options <- python_options(options)
  api <- csvm_api()
  response_name <- paste(deparse(formula[[2L]]), collapse = " ")
  fitted_python <- api$fit(x, colnames(x), as.character(response), positive, options, response_name)
  handle <- fitted_python$results
  for (message in as.character(fitted_python$warnings)) warning("csvm: ", message, call. = FALSE)
  fields <- fit_fields(api$export(handle))
  fitted <- api$predict(handle, x, c("decision", "class"))
  object <- c(fields, list(
    call = call,
    terms = mt,
    xlevels = .getXlevels(mt, mf),
    contrasts = attr(x, "contrasts"),
    na.action = attr(mf, "na.action"),
    response_levels = levels(response),
    options = options,
    random_state = options$random_state,
    fitted.values = stats::setNames(as.numeric(fitted$decision), rownames(mf)),
    fitted.class = factor(as.character(fitted$class), levels = levels(response)),
    python = handle
  ))
  class(object) <- "csvm"
  object
}

# Missing values must not cross to Python (reticulate turns a logical NA into TRUE).
check_no_missing <- function(mf) {
  has_na <- vapply(mf, anyNA, logical(1L))
  if (any(has_na)) {
    stop("csvm: missing values in ", paste(names(mf)[has_na], collapse = ", "),
         "; remove them or use na.action = na.omit (the default)", call. = FALSE)
  }
  if (nrow(mf) == 0L) {
    stop("csvm: no complete rows are left in the data", call. = FALSE)
  }
}

# The response as a two-level factor (logical, numeric and character responses are converted).
response_factor <- function(y, mt) {
  if (is.null(y)) {
    stop("csvm: the formula has no response; write it as class ~ predictors", call. = FALSE)
  }
  if (!is.null(dim(y))) {
    stop("csvm: the response must be a vector, not a matrix", call. = FALSE)
  }
  y <- droplevels(as.factor(y))
  n_classes <- nlevels(y)
  if (n_classes < 2L) {
    stop("csvm: the response has only one class ('", levels(y)[1L],
         "'); CSVM needs examples of two classes", call. = FALSE)
  }
  if (n_classes > 2L) {
    stop("csvm: the response has ", n_classes, " classes (",
         paste(levels(y), collapse = ", "), "); CSVM is a binary classifier, recode it into two classes",
         call. = FALSE)
  }
  y
}

# The numeric design without the intercept column (the CSVM has its own intercept b).
design_matrix <- function(mt, mf, contrasts = NULL) {
  x <- model.matrix(mt, mf, contrasts.arg = contrasts)
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

# Options as Python will get them: no NULLs, no NAs, one value per scalar option.
python_options <- function(options) {
  options <- options[!vapply(options, is.null, logical(1L))]
  bad <- names(options)[vapply(options, anyNA, logical(1L))]
  if (length(bad)) {
    stop("csvm: option(s) ", paste(bad, collapse = ", "), " are NA; give a value or leave them out",
         call. = FALSE)
  }
  if (is.null(names(options)) || any(names(options) == "")) {
    stop("csvm: every extra argument must be named (e.g. C = 1, random_state = 1)", call. = FALSE)
  }
  options
}

# The exported values of a fit (csvm_stats.r_api.export) as R structures.
fit_fields <- function(exported) {
  rates <- as.data.frame(exported$rates, stringsAsFactors = FALSE)
  rownames(rates) <- as.character(exported$rate_names)
  for (column in c("met", "certified")) {
    values <- as.numeric(rates[[column]])
    rates[[column]] <- ifelse(is.nan(values) | is.na(values), NA, values == 1)
  }
  coef_names <- as.character(exported$coef_names)
  coefficients <- stats::setNames(c(as.numeric(exported$intercept), as.numeric(exported$coef)),
                                  c("(Intercept)", coef_names))
  standardized <- as.numeric(exported$coef_standardized)
  if (length(standardized)) names(standardized) <- coef_names
  statements <- stats::setNames(as.character(exported$statements), rownames(rates))
  list(
    coefficients = coefficients,
    coef_standardized = standardized,
    rates = rates,
    statements = statements,
    joint_statement = as.character(exported$joint_statement),
    summary_text = as.character(exported$summary_text),
    solver = lapply(exported$solver, function(value) if (is.character(value)) value else as.numeric(value)),
    warnings = as.character(exported$warnings),
    positive = as.character(exported$positive),
    negative = as.character(exported$negative),
    kernel = as.character(exported$kernel),
    is_linear = isTRUE(exported$is_linear),
    alpha = as.numeric(exported$alpha),
    bound = as.character(exported$bound),
    C = as.numeric(exported$C),
    nobs = as.integer(exported$n),
    samples = vapply(exported$samples, as.integer, integer(1L)),
    selected = stats::setNames(as.numeric(exported$selected_coef), as.character(exported$selected_names)),
    api_version = as.integer(exported$api_version)
  )
}
