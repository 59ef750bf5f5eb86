# csvm() with a response of more than two classes: the multiclass CSVM of
# csvm_stats.multiclass (argmax of per-class scores, required recalls per class through
# recall_min = c(BL = 0.9, EWS = 0.8)). Fits are of class c("csvm_multiclass", "csvm"):
# the model-frame methods (terms, formula, model.frame, model.matrix, nobs, fitted, update)
# are those of "csvm"; print, summary, coef, predict and tidy are here.

# Options that only a two-class fit has.
.binary_options <- c("tpr_min", "tnr_min", "acc_min", "positive", "penalty", "max_features", "screen")

# The multiclass fit in Python (csvm_stats.multiclass.r_entry.fit_multiclass).
fit_multiclass_python <- function(x, response, options, response_name) {
  classes <- levels(response)
  binary <- intersect(names(options), .binary_options)
  if (length(binary)) {
    stop("csvm: ", binary[1L], " is for a two-class response; this one has ", length(classes),
         " classes (", paste(classes, collapse = ", "), "): require per-class recalls with recall_min = c(",
         classes[1L], " = 0.9, ...)", call. = FALSE)
  }
  recall_min <- options$recall_min
  options$recall_min <- NULL
  if (!is.null(recall_min)) {
    unknown <- setdiff(names(recall_min), classes)
    if (length(unknown)) {
      stop("csvm: recall_min names ", paste0("'", unknown, "'", collapse = ", "),
           ", not a class of the response (", paste(classes, collapse = ", "), ")", call. = FALSE)
    }
  }
  arguments <- list(x, colnames(x), as.character(response),
                    if (is.null(recall_min)) NULL else names(recall_min),
                    if (is.null(recall_min)) NULL else unname(as.numeric(recall_min)),
                    options, response_name)
  # capped targets are said in R's words (warn_capped_targets), the fit's other warnings as Python words them
  check <- do.call(py_call, c(list("anchor_check_multiclass"), arguments, list(reported = "CappedTargetWarning")))
  warn_capped_targets(check)
  fitted <- do.call(py_call, c(list("fit_multiclass"), arguments, list(reported = "CappedTargetWarning")))
  fitted$check <- check
  fitted
}

# The exported values of a multiclass fit (export_multiclass) as R structures: the
# coefficients as a (1 + features) x classes matrix, intercepts (offsets) in the first row.
multiclass_fields <- function(exported) {
  classes <- as.character(exported$levels)
  coef_names <- as.character(exported$coef_names)
  coef <- matrix(as.numeric(exported$coef), ncol = length(classes))
  coefficients <- rbind(as.numeric(exported$intercept), coef)
  dimnames(coefficients) <- list(c("(Intercept)", coef_names), classes)
  standardized <- as.numeric(exported$coef_standardized)
  if (length(standardized)) {
    standardized <- matrix(standardized, ncol = length(classes), dimnames = list(coef_names, classes))
  }
  anchor <- anchor_fields(exported$anchor)
  confusion <- matrix(as.numeric(exported$confusion), length(classes),
                      dimnames = list(true = classes, predicted = classes))
  c(shared_fields(exported), list(
    coefficients = coefficients,
    coef_standardized = standardized,
    classes = classes,
    recall_min = stats::setNames(anchor$target, anchor$rate),
    confusion = confusion
  ))
}

print.csvm_multiclass <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Multiclass constrained SVM, ", x$kernel, " kernel; ", length(x$classes), " classes (",
      paste(x$classes, collapse = ", "), "), predicted class = argmax of the class scores\n", sep = "")
  cat("Solution: ", solver_outcome(x$solver, x$options), "\n\n", sep = "")
  print_class_coefficients(x, digits)
  cat("\nHeld-out recall:", paste0(rownames(x$rates), " ", format(x$rates$heldout_rate, digits = 3L),
                                   collapse = ", "), "\n")
  cat(strwrap(requirement_lines(x$rates, x$alpha), exdent = 2L), sep = "\n")
  invisible(x)
}

# The coefficient matrix (largest standardised rows when there are many), or a kernel note.
print_class_coefficients <- function(x, digits) {
  if (!x$is_linear) {
    cat("Kernel solution with", nrow(x$coefficients) - 1L, "feature-map coefficients per class\n")
    return(invisible(x))
  }
  shown <- shown_class_rows(x)
  cat("Coefficients (one column per class; the class with the largest score is predicted):\n")
  print(x$coefficients[shown, , drop = FALSE], digits = digits)
  if (length(shown) < nrow(x$coefficients)) {
    cat("... and", nrow(x$coefficients) - length(shown),
        "more rows (largest standardised shown; see coef())\n")
  }
  invisible(x)
}

# The intercept row and the features with the largest standardised coefficient over the classes.
shown_class_rows <- function(x) {
  n_coef <- nrow(x$coefficients) - 1L
  if (n_coef <= .max_shown_coefficients) return(seq_len(nrow(x$coefficients)))
  size <- if (length(x$coef_standardized)) x$coef_standardized else x$coefficients[-1L, , drop = FALSE]
  keep <- sort(order(apply(abs(size), 1L, max), decreasing = TRUE)[seq_len(.max_shown_coefficients)])
  c(1L, keep + 1L)
}

summary.csvm_multiclass <- function(object, ...) {
  structure(object[c("call", "classes", "kernel", "is_linear", "alpha", "bound", "C", "nobs", "samples",
                     "na.action", "coefficients", "coef_standardized", "rates", "statements",
                     "joint_statement", "confusion", "solver", "warnings", "options")],
            class = "summary.csvm_multiclass")
}

print.summary.csvm_multiclass <- function(x, digits = max(3L, getOption("digits") - 3L), verbose = FALSE, ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Multiclass constrained SVM (CSVM), ", x$kernel, " kernel, C = ", format(x$C), "\n", sep = "")
  cat("Classes: ", paste(x$classes, collapse = ", "), " (predicted: the largest class score)\n", sep = "")
  print_sizes_and_solver(x, verbose)
  cat("\nRecall per class (anchor = in-sample, held-out = certification sample; margin '", x$bound,
      "', alpha = ", format(x$alpha), "):\n", sep = "")
  print_rate_table(x$rates, rownames(x$rates), digits)
  cat(strwrap(requirement_lines(x$rates, x$alpha), exdent = 2L), sep = "\n")
  cat("\nConfidence statements:\n")
  cat(paste0("  ", names(x$statements), ": ", x$statements), sep = "\n")
  cat("  Joint:", x$joint_statement, "\n")
  cat("\nHeld-out confusion matrix (rows: true class, columns: predicted class):\n")
  print(x$confusion)
  cat("\n")
  print_class_coefficients(x, digits)
  print_notes(x$warnings)
  invisible(x)
}

predict.csvm_multiclass <- function(object, newdata, type = c("class", "decision", "prob", "probabilities"),
                                    ...) {
  refuse_predict_arguments(...)
  type <- match.arg(type)
  if (type == "probabilities") type <- "prob"  # kernlab's name; the probabilities are a matrix already
  training <- missing(newdata) || is.null(newdata)
  if (training && type == "class") return(stats::napredict(object$na.action, object$fitted.class))
  if (training && type == "decision") return(stats::napredict(object$na.action, object$fitted.values))
  x <- if (training) training_design(object) else new_design(object, newdata)
  complete <- stats::complete.cases(x)
  values <- predict_rows(object, x[complete, , drop = FALSE], type)
  if (type == "class") {
    out <- factor(rep(NA_character_, nrow(x)), levels = object$response_levels)
    out[complete] <- values
    names(out) <- rownames(x)
  } else {
    out <- matrix(NA_real_, nrow(x), length(object$classes), dimnames = list(rownames(x), object$classes))
    out[complete, ] <- matrix(as.numeric(values), ncol = length(object$classes))
  }
  if (training) out <- stats::napredict(object$na.action, out)
  out
}

tidy.csvm_multiclass <- function(x, ...) {
  if (!x$is_linear) {
    stop("csvm: tidy() lists coefficients on the predictors, which a kernel fit (", x$kernel,
         ") does not have; use glance() for its recalls", call. = FALSE)
  }
  coefficients <- x$coefficients
  standardized <- if (length(x$coef_standardized)) rbind(NA_real_, x$coef_standardized) else NA_real_
  as_tibble_if_available(data.frame(
    term = rep(rownames(coefficients), times = ncol(coefficients)),
    class = rep(colnames(coefficients), each = nrow(coefficients)),
    estimate = as.vector(coefficients),
    std.estimate = as.vector(standardized),
    stringsAsFactors = FALSE
  ))
}
