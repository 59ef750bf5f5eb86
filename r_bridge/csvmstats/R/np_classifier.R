# np_classifier(): the Neyman-Pearson route around a learner chosen by name, from a formula.
#
# R builds the model frame and the numeric design as csvm() does (R's contrasts, na.action),
# and Python (csvm_stats.interfaces.np_r_entry.fit_np) splits the rows as the CSVM does, fits the
# learner on the training and anchor shares, and sets the threshold of its score on the held-out
# share by the order statistic, so that P(true rate >= requirement) >= 1 - alpha. Everything the
# methods print is copied into R at fit time; predict() needs the Python object of this session.

np_classifier <- function(formula, data, learner = c("logistic", "svc", "hgb"), tpr_min = NULL,
                          tnr_min = NULL, recall_min = NULL, alpha = 0.05,
                          fractions = c(0.5, 0.25, 0.25), random_state = NULL, positive = NULL,
                          subset, na.action = na.omit) {
  call <- match.call()
  if (missing(data)) {
    stop("np_classifier: give the data as a data frame: np_classifier(y ~ ., data = d)", call. = FALSE)
  }
  learner <- match.arg(learner)
  requirements <- c("tpr_min", "tnr_min", "recall_min")[!vapply(list(tpr_min, tnr_min, recall_min), is.null, logical(1L))]
  if (length(requirements) != 1L) {
    stop("np_classifier: a Neyman-Pearson route sets one threshold, so it guarantees one requirement: give exactly ",
         "one of tpr_min, tnr_min (two classes) or recall_min = c(<class> = p, ...) (any number of classes); got ",
         if (length(requirements)) paste(requirements, collapse = ", ") else "none",
         ". For a TPR and a TNR requirement at once use csvm(), e.g. csvm(y ~ ., data = d, tpr_min = 0.9, tnr_min = 0.8)", call. = FALSE)
  }
  # the options are checked in R as csvm()'s are (an NA would reach Python as TRUE), with np_classifier's name
  as_caller("np_classifier", check_options(list(tpr_min = tpr_min, tnr_min = tnr_min, recall_min = recall_min,
                                                alpha = alpha, fractions = fractions, random_state = random_state)))
  formula <- stats::as.formula(formula, env = parent.frame())
  response_name <- if (length(formula) == 3L) paste(deparse(formula[[2L]]), collapse = " ") else "y"
  mf <- match.call(expand.dots = FALSE)
  mf <- mf[c(1L, match(c("formula", "data", "subset"), names(mf), 0L))]
  mf$formula <- formula
  mf$na.action <- na.action
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  as_caller("np_classifier", check_no_missing(mf))
  mt <- attr(mf, "terms")
  response <- as_caller("np_classifier", response_factor(model.response(mf), mt))
  x <- as_caller("np_classifier", design_matrix(mt, mf))
  if (nlevels(response) > 2L && is.null(recall_min)) {
    stop("np_classifier: the response has ", nlevels(response), " classes (", paste(levels(response), collapse = ", "),
         "); tpr_min and tnr_min are for two classes: require the recall of each class that needs one with ",
         "recall_min, e.g. recall_min = c(", levels(response)[nlevels(response)], " = 0.9)", call. = FALSE)
  }
  if (is.null(random_state)) {
    random_state <- sample.int(.Machine$integer.max, 1L)
    call$random_state <- random_state
  }
  if (is.null(recall_min)) {
    positive <- if (is.null(positive)) levels(response)[2L] else as.character(positive)
    if (!positive %in% levels(response)) {
      stop("np_classifier: positive = '", positive, "' is not a class of the response (",
           paste(levels(response), collapse = ", "), ")", call. = FALSE)
    }
  } else if (is.null(names(recall_min)) || any(!names(recall_min) %in% levels(response))) {
    stop("np_classifier: recall_min must be a named vector of required recalls, names among the classes (",
         paste(levels(response), collapse = ", "), "), e.g. recall_min = c(", levels(response)[1L], " = 0.9)",
         call. = FALSE)
  }
  options <- list(tpr_min = tpr_min, tnr_min = tnr_min, alpha = alpha, fractions = as.numeric(fractions),
                  random_state = as.integer(random_state))
  if (!is.null(recall_min)) options$recall_min <- as.list(recall_min)
  options <- options[!vapply(options, is.null, logical(1L))]
  fitted <- py_call("fit_np", x, colnames(x), as.character(response), learner, positive, options,
                    response_name, caller = "np_classifier")
  ex <- fitted$export
  rates <- as.data.frame(lapply(ex$rates, function(v) if (is.array(v)) as.vector(v) else v),
                         stringsAsFactors = FALSE)
  rownames(rates) <- rates$rate
  rates$rate <- NULL
  rates$certified <- ifelse(is.nan(rates$certified) | is.na(rates$certified), NA, rates$certified == 1)
  object <- list(
    call = call,
    terms = mt,
    xlevels = used_xlevels(mt, mf),  # as csvm(): a factor removed by `- Id` takes new values in predict()
    contrasts = attr(x, "contrasts"),
    na.action = attr(mf, "na.action"),
    response_levels = levels(response),
    positive = if (is.null(recall_min)) positive,
    learner = learner,
    alpha = alpha,
    rates = rates,
    statements = stats::setNames(as.character(ex$statements), as.character(ex$statement_names)),
    joint_statement = as.character(ex$joint_statement),
    summary_text = with_formula_line(as.character(ex$summary_text), formula),
    sample_roles = stats::setNames(as.character(ex$roles), rownames(mf)),
    fitted.values = stats::setNames(as.numeric(if (is.matrix(ex$decision)) ex$decision[, 1L] else ex$decision),
                                    rownames(mf)),
    fitted.class = stats::setNames(factor(as.character(ex$class), levels = levels(response)), rownames(mf)),
    random_state = as.integer(ex$random_state),
    python = fitted$results
  )
  if (is.matrix(ex$decision)) {
    object$fitted.values <- matrix(as.numeric(ex$decision), nrow(x), dimnames = list(rownames(mf), levels(response)))
  }
  class(object) <- "np_classifier"
  object
}

print.np_classifier <- function(x, ...) {
  cat("Neyman-Pearson route around '", x$learner, "' (", length(x$sample_roles), " observations, ",
      sum(x$sample_roles == "held-out"), " held out)\n\n", sep = "")
  # each statement under the rate it is about, as summary() of a csvm() fit prints them
  cat("Confidence statements:\n")
  labels <- names(x$statements)
  if (is.null(labels)) labels <- rep("", length(x$statements))
  labels <- ifelse(nzchar(labels), paste0(toupper(labels), ": "), "")
  for (i in seq_along(x$statements)) {
    cat(strwrap(paste0(labels[i], x$statements[[i]]), indent = 2L, exdent = 4L), sep = "\n")
  }
  if (length(x$statements) > 1L && length(x$joint_statement) && nzchar(x$joint_statement)) {
    cat(strwrap(paste("Joint:", x$joint_statement), indent = 2L, exdent = 4L), sep = "\n")
  }
  invisible(x)
}

summary.np_classifier <- function(object, ...) {
  structure(list(text = object$summary_text, rates = object$rates), class = "summary.np_classifier")
}

print.summary.np_classifier <- function(x, ...) {
  cat(x$text)
  invisible(x)
}

predict.np_classifier <- function(object, newdata, type = c("class", "prob", "decision", "probabilities"), ...) {
  refuse_predict_arguments(..., .caller = "np_classifier")
  type <- match.arg(type)
  if (missing(newdata) || is.null(newdata)) {
    # the fitted rows, with NA for those na.exclude set aside (as fitted() of lm)
    return(switch(type, class = stats::napredict(object$na.action, object$fitted.class),
                  decision = stats::napredict(object$na.action, object$fitted.values),
                  stop("np_classifier: give newdata for probabilities", call. = FALSE)))
  }
  if (!python_handle_alive(object$python)) {
    stop("np_classifier: this fit's Python object is gone (the fit was read back with readRDS or made in ",
         "another session); refit it with np_classifier() to predict: the route's model is not saved to a file",
         call. = FALSE)
  }
  x <- new_design(object, newdata, caller = "np_classifier")
  # rows with missing values get NA, as in predict() of a csvm() fit; only complete rows cross to Python
  complete <- stats::complete.cases(x)
  several <- length(object$response_levels) > 2L
  kind <- if (type == "probabilities") "prob" else type
  out <- if (kind == "class") {
    factor(rep(NA_character_, nrow(x)), levels = object$response_levels)
  } else if (several) {
    matrix(NA_real_, nrow(x), length(object$response_levels), dimnames = list(rownames(x), object$response_levels))
  } else {
    rep(NA_real_, nrow(x))
  }
  if (any(complete)) {
    values <- py_call("predict_np", object$python, x[complete, , drop = FALSE], colnames(x), kind,
                      caller = "np_classifier")[[kind]]
    if (kind == "class") {
      out[complete] <- as.character(values)
    } else if (several) {
      out[complete, ] <- matrix(as.numeric(values), ncol = length(object$response_levels))
    } else {
      out[complete] <- as.numeric(values)
    }
  }
  if (!is.matrix(out)) names(out) <- rownames(x)
  if (type == "probabilities" && !several) out <- probability_matrix(np_classes(object), out)
  out
}

# The positive and negative class of a two-class fit, as probability_matrix() reads them.
np_classes <- function(object) {
  positive <- if (is.null(object$positive)) object$response_levels[2L] else object$positive
  list(response_levels = object$response_levels, positive = positive,
       negative = setdiff(object$response_levels, positive))
}
