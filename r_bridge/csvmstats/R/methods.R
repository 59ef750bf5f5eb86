# S3 methods of "csvm" fits. All but predict() with new data or type = "prob"
# work from the R vectors copied at fit time, without Python.

# Coefficients shown by print() and summary() when there are many (largest standardised first).
.max_shown_coefficients <- 20L

coef.csvm <- function(object, ...) {
  object$coefficients
}

print.csvm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Constrained SVM, ", x$kernel, " kernel; positive class '", x$positive,
      "', negative class '", x$negative, "'\n", sep = "")
  cat("Solver: ", x$solver$backend, ", status ", x$solver$status, "\n\n", sep = "")
  if (x$is_linear) {
    shown <- shown_coefficients(x)
    cat("Coefficients:\n")
    print.default(format(x$coefficients[shown], digits = digits), print.gap = 2L, quote = FALSE)
    if (length(shown) < length(x$coefficients)) {
      cat("... and", length(x$coefficients) - length(shown),
          "more (largest standardised shown; see coef())\n")
    }
  } else {
    cat("Kernel solution with", length(x$coefficients) - 1L, "feature-map coefficients\n")
  }
  cat("\nRates:", paste0(toupper(rownames(x$rates)), " held-out ",
                         format(x$rates$heldout_rate, digits = 3L), collapse = ", "), "\n")
  invisible(x)
}

# The intercept and the coefficients with the largest standardised size, in their original order.
shown_coefficients <- function(x) {
  n_coef <- length(x$coefficients) - 1L
  if (n_coef <= .max_shown_coefficients) {
    return(seq_along(x$coefficients))
  }
  size <- if (length(x$coef_standardized)) abs(x$coef_standardized) else abs(x$coefficients[-1L])
  keep <- sort(order(size, decreasing = TRUE)[seq_len(.max_shown_coefficients)])
  c(1L, keep + 1L)
}

summary.csvm <- function(object, ...) {
  coefficients <- cbind(coef = object$coefficients,
                        "coef (standardised)" = if (length(object$coef_standardized)) {
                          c(NA, object$coef_standardized)
                        } else {
                          NA_real_
                        })
  structure(list(
    call = object$call,
    positive = object$positive,
    negative = object$negative,
    kernel = object$kernel,
    is_linear = object$is_linear,
    alpha = object$alpha,
    bound = object$bound,
    C = object$C,
    nobs = object$nobs,
    samples = object$samples,
    na.action = object$na.action,
    coefficients = coefficients,
    shown = shown_coefficients(object),
    rates = object$rates,
    statements = object$statements,
    joint_statement = object$joint_statement,
    solver = object$solver,
    warnings = object$warnings
  ), class = "summary.csvm")
}

print.summary.csvm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Constrained SVM (CSVM), ", x$kernel, " kernel, C = ", format(x$C), "\n", sep = "")
  cat("Positive class '", x$positive, "', negative class '", x$negative, "'\n", sep = "")
  cat("Observations: ", x$nobs, " (training ", x$samples[["train"]], ", anchor ",
      x$samples[["anchor"]], ", held-out ", x$samples[["holdout"]], ")", sep = "")
  if (length(x$na.action)) cat(";", length(x$na.action), "deleted for missingness")
  cat("\n")
  solver <- x$solver
  cat("Solver: ", solver$backend, " ", solver$backend_version, ", ", solver$formulation,
      ", status ", solver$status, ", objective ", format(solver$objective, digits = 6L),
      ", relative gap ", format(100 * solver$gap, digits = 3L), "%\n", sep = "")

  cat("\nRates (anchor = in-sample, held-out = certification sample; margin '", x$bound,
      "', alpha = ", format(x$alpha), "):\n", sep = "")
  rates <- x$rates
  table <- data.frame(
    target = rates$target,
    required = ifelse(is.na(rates$required), "",
                      paste0(rates$required, "/", rates$anchor_n)),
    anchor = paste0(rates$anchor_correct, "/", rates$anchor_n),
    met = rates$met,
    "held-out" = paste0(rates$heldout_correct, "/", rates$heldout_n),
    "held-out rate" = rates$heldout_rate,
    lower = rates$lower,
    "joint lower" = rates$joint_lower,
    method = rates$method,
    check.names = FALSE,
    row.names = toupper(rownames(rates))
  )
  print(table, digits = digits)

  cat("\nConfidence statements:\n")
  cat(paste0("  ", toupper(names(x$statements)), ": ", x$statements), sep = "\n")
  if (length(x$statements) > 1L) cat("  Joint:", x$joint_statement, "\n")

  if (x$is_linear) {
    cat("\nCoefficients (decision f(x) >= 0 means positive):\n")
    print(x$coefficients[x$shown, , drop = FALSE], digits = digits, na.print = "")
    if (length(x$shown) < nrow(x$coefficients)) {
      cat("... and", nrow(x$coefficients) - length(x$shown),
          "more coefficients (largest standardised shown; see coef())\n")
    }
  } else {
    cat("\nKernel solution with", nrow(x$coefficients) - 1L, "feature-map coefficients\n")
  }
  notes <- c("The anchor-sample rates are in-sample; only the held-out statements are confidence statements.",
             x$warnings)
  cat("\nNotes:\n")
  cat(paste0("[", seq_along(notes), "] ", notes), sep = "\n")
  invisible(x)
}

predict.csvm <- function(object, newdata, type = c("class", "prob", "decision"), ...) {
  type <- match.arg(type)
  if (missing(newdata) || is.null(newdata)) {
    if (type == "decision") return(object$fitted.values)
    if (type == "class") return(object$fitted.class)
    x <- NULL
  } else {
    x <- new_design(object, newdata)
  }
  complete <- if (is.null(x)) NULL else stats::complete.cases(x)
  values <- predict_rows(object, if (is.null(x)) NULL else x[complete, , drop = FALSE], type)
  if (is.null(x)) return(values)
  out <- if (type == "class") {
    factor(rep(NA_character_, nrow(x)), levels = object$response_levels)
  } else {
    rep(NA_real_, nrow(x))
  }
  out[complete] <- values
  names(out) <- rownames(x)
  out
}

# The design of new data through the stored terms, factor levels and contrasts.
new_design <- function(object, newdata) {
  mt <- delete.response(terms(object))
  mf <- model.frame(mt, newdata, na.action = stats::na.pass, xlev = object$xlevels)
  data_classes <- attr(mt, "dataClasses")
  if (!is.null(data_classes)) .checkMFClasses(data_classes, mf)
  x <- model.matrix(mt, mf, contrasts.arg = object$contrasts)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  storage.mode(x) <- "double"
  x
}

terms.csvm <- function(x, ...) x$terms

# Predictions for complete rows: through Python when the fit's Python object
# is alive, else (linear kernel, classes and decision values) from the stored coefficients.
predict_rows <- function(object, x, type) {
  if (!is.null(x) && nrow(x) == 0L) {
    return(if (type == "class") character(0) else numeric(0))
  }
  if (python_handle_alive(object$python)) {
    api <- csvm_api()
    if (is.null(x)) stop("csvm: type = 'prob' needs newdata", call. = FALSE)
    values <- api$predict(object$python, x, type)
    return(if (type == "class") as.character(values$class) else as.numeric(values[[type]]))
  }
  if (!object$is_linear || type == "prob") {
    stop("csvm: this prediction needs the fit's Python object, which is gone (the fit was ",
         "saved and reloaded, or Python restarted); refit with csvm()", call. = FALSE)
  }
  decision <- as.numeric(x %*% object$coefficients[-1L] + object$coefficients[[1L]])
  if (type == "decision") decision else ifelse(decision >= 0, object$positive, object$negative)
}

# Fits made in Python and saved with r_bridge.save_rds() or r_bridge.to_r().
print.csvm_fit <- function(x, ...) {
  cat(x$summary_text, sep = "\n")
  invisible(x)
}

coef.csvm_fit <- function(object, ...) {
  stats::setNames(c(object$intercept, object$coef), c("(Intercept)", object$coef_names))
}
