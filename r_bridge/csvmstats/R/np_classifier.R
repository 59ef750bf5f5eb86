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
  formula <- stats::as.formula(formula, env = parent.frame())
  response_name <- if (length(formula) == 3L) paste(deparse(formula[[2L]]), collapse = " ") else "y"
  mf <- match.call(expand.dots = FALSE)
  mf <- mf[c(1L, match(c("formula", "data", "subset"), names(mf), 0L))]
  mf$formula <- formula
  mf$na.action <- na.action
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, parent.frame())
  check_no_missing(mf)
  mt <- attr(mf, "terms")
  response <- response_factor(model.response(mf), mt)
  x <- design_matrix(mt, mf)
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
                    response_name)
  for (message in as.character(fitted$warnings)) warning("np_classifier: ", message, call. = FALSE)
  ex <- fitted$export
  rates <- as.data.frame(lapply(ex$rates, function(v) if (is.array(v)) as.vector(v) else v),
                         stringsAsFactors = FALSE)
  rownames(rates) <- rates$rate
  rates$rate <- NULL
  rates$certified <- ifelse(is.nan(rates$certified) | is.na(rates$certified), NA, rates$certified == 1)
  object <- list(
    call = call,
    terms = mt,
    xlevels = .getXlevels(mt, mf),
    contrasts = attr(x, "contrasts"),
    na.action = attr(mf, "na.action"),
    response_levels = levels(response),
    learner = learner,
    alpha = alpha,
    rates = rates,
    statements = stats::setNames(as.character(ex$statements), as.character(ex$statement_names)),
    joint_statement = as.character(ex$joint_statement),
    summary_text = as.character(ex$summary_text),
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
  for (s in x$statements) cat(strwrap(s, exdent = 4L), sep = "\n")
  invisible(x)
}

summary.np_classifier <- function(object, ...) {
  structure(list(text = object$summary_text, rates = object$rates), class = "summary.np_classifier")
}

print.summary.np_classifier <- function(x, ...) {
  cat(x$text)
  invisible(x)
}

predict.np_classifier <- function(object, newdata, type = c("class", "prob", "decision"), ...) {
  type <- match.arg(type)
  if (missing(newdata)) {
    return(switch(type, class = object$fitted.class, decision = object$fitted.values,
                  prob = stop("np_classifier: give newdata for probabilities", call. = FALSE)))
  }
  if (!python_handle_alive(object$python)) {
    stop("np_classifier: this fit's Python object is gone (the fit was read back with readRDS or made in ",
         "another session); refit it with np_classifier() to predict: the route's model is not saved to a file",
         call. = FALSE)
  }
  mt <- stats::delete.response(object$terms)
  mf <- stats::model.frame(mt, newdata, na.action = stats::na.pass, xlev = object$xlevels)
  if (!is.null(cl <- attr(mt, "dataClasses"))) .checkMFClasses(cl, mf)
  check_no_missing(mf)
  x <- model.matrix(mt, mf, contrasts.arg = object$contrasts)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  out <- py_call("predict_np", object$python, x, colnames(x), type)
  if (type == "class") {
    return(stats::setNames(factor(as.character(out$class), levels = object$response_levels), rownames(mf)))
  }
  value <- out[[type]]
  if (is.matrix(value)) {
    return(matrix(as.numeric(value), nrow(x), dimnames = list(rownames(mf), object$response_levels)))
  }
  stats::setNames(as.numeric(value), rownames(mf))
}
