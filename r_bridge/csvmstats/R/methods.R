# S3 methods of "csvm" fits. All but predict() with new data or type = "prob"
# work from the R vectors copied at fit time, without Python.

# Coefficients shown by print() and summary() when there are many (largest standardised first).
.max_shown_coefficients <- 20L

coef.csvm <- function(object, ...) {
  if (!object$is_linear) {
    stop("csvm: a kernel fit (", object$kernel, ") has no coefficients on the predictors: its ",
         "decision function is a weighted sum of kernel functions; use predict(fit, newdata, ",
         "type = \"decision\") for f(x)", call. = FALSE)
  }
  object$coefficients
}

print.csvm <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Constrained SVM, ", x$kernel, " kernel; positive class '", x$positive,
      "', negative class '", x$negative, "'\n", sep = "")
  cat("Solution: ", solver_outcome(x$solver, x$options), "\n", sep = "")
  cat(selection_line(x), "\n", sep = "")
  if (x$is_linear) {
    shown <- shown_coefficients(x)
    cat("Coefficients:\n")
    print.default(format(x$coefficients[shown], digits = digits), print.gap = 2L, quote = FALSE)
    if (length(shown) < length(x$coefficients)) {
      cat("... and", length(x$coefficients) - length(shown),
          if (is_sparse(x)) "more, all zero (not selected; see coef())\n" else
            "more (largest standardised shown; see coef())\n")
    }
  } else {
    cat("Kernel solution with", length(x$coefficients) - 1L, "feature-map coefficients\n")
  }
  cat("\nRates:", paste0(toupper(rownames(x$rates)), " held-out ",
                         format(x$rates$heldout_rate, digits = 3L), collapse = ", "), "\n")
  cat(strwrap(c(requirement_lines(x$rates, x$alpha), probability_line(x)), exdent = 2L), sep = "\n")
  invisible(x)
}

# What the rates table says in words: each required rate, certified on the held-out sample or not.
.rate_words <- c(tpr = "sensitivity (TPR)", tnr = "specificity (TNR)", acc = "accuracy (ACC)",
                 bacc = "balanced accuracy (BACC)")

rate_words <- function(names) {
  words <- .rate_words[names]
  ifelse(is.na(words), paste0("recall of class '", names, "'"), words)
}

# One line per required rate: certified (the held-out lower bound reaches the target) or, in plain
# words, why not (met on the requirement sample but the held-out data support only a lower rate;
# not met; no held-out statement).
requirement_lines <- function(rates, alpha) {
  required <- which(!is.na(rates$target))
  if (!length(required)) {
    return("No rate was required: the held-out rates and their confidence bounds describe the fit.")
  }
  level <- paste0(format(100 * (1 - alpha)), "%")
  vapply(required, function(i) {
    what <- paste0("Required ", rate_words(rownames(rates)[i]), " >= ", format(rates$target[i]), ": ")
    lower <- bound_text(rates$lower[i], floor)
    if (isTRUE(rates$certified[i])) {
      return(paste0(what, "certified on held-out data (lower ", level, " confidence bound ", lower, ")."))
    }
    anchor <- if (is.na(rates$anchor_n[i])) "" else
      paste0(" (", count_text(rates$anchor_correct[i], rates$anchor_n[i]), ")")
    on_anchor <- if (isTRUE(rates$met[i])) {
      paste0("met on the requirement (anchor) sample", anchor, ", but ")
    } else {
      paste0("not met on the requirement (anchor) sample", anchor, ", and ")
    }
    held_out <- if (is.na(rates$lower[i])) {
      "the held-out sample is too small for any statement: NOT certified."
    } else {
      paste0("the held-out data support only >= ", lower, " at ", level, " confidence: NOT certified.")
    }
    paste0(what, on_anchor, held_out)
  }, character(1L))
}

# The class rule on the probability scale. A CSVM's probabilities come from a model fitted beside the
# rule (both routes), so there is no threshold (NA): the rule's statement in words says how the two
# relate (nothing when the fit has no probability calibration). A fit whose P is monotone in its score
# (a threshold is given) has rows called positive at P(positive) at or above it, which need not be 1/2.
probability_line <- function(x) {
  threshold <- x$probability_threshold
  if (is.null(threshold) || !length(threshold) || is.na(threshold)) {
    rule <- x$probability_rule
    if (is.null(rule) || !length(rule) || !nzchar(rule)) return(character(0))
    return(paste0("Probabilities (predict(fit, type = \"prob\")): ", rule, "."))
  }
  paste0("Probabilities (predict(fit, type = \"prob\")): rows are called '", x$positive, "' when P(",
         x$positive, ") >= ", format(threshold, digits = 3L), ", the probability at f(x) = 0; under a ",
         "rate requirement this threshold need not be 1/2.")
}

# For a sparse fit (penalty = "l1" or max_features), the line naming the selected features;
# "" otherwise.
selection_line <- function(x) {
  if (!is_sparse(x)) return("")
  how <- if (!is.null(x$options$max_features)) {
    paste0("max_features = ", x$options$max_features)
  } else {
    "penalty = \"l1\""
  }
  paste0("Selected features (", length(x$selected), " of ", length(x$coefficients) - 1L, ", ", how, "): ",
         if (length(x$selected)) paste(names(x$selected), collapse = ", ") else "none", "\n")
}

is_sparse <- function(x) !is.null(x$options$max_features) || identical(x$options$penalty, "l1")

# The intercept and the coefficients with the largest standardised size, in their original order
# (for a sparse fit: the intercept and the selected features).
shown_coefficients <- function(x) {
  if (is_sparse(x)) return(c(1L, match(names(x$selected), names(x$coefficients))))
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
    warnings = object$warnings,
    selection = selection_line(object),
    options = object$options,
    probability_threshold = object$probability_threshold,
    probability_rule = object$probability_rule,
    calibration = object$calibration
  ), class = "summary.csvm")
}

print.summary.csvm <- function(x, digits = max(3L, getOption("digits") - 3L), verbose = FALSE, ...) {
  cat("\nCall:\n", paste(deparse(x$call), sep = "\n", collapse = "\n"), "\n\n", sep = "")
  cat("Constrained SVM (CSVM), ", x$kernel, " kernel, C = ", format(x$C), "\n", sep = "")
  cat("Positive class '", x$positive, "', negative class '", x$negative, "'\n", sep = "")
  print_sizes_and_solver(x, verbose)
  cat("\nRates (anchor = requirement sample, in-sample; held-out = certification sample; margin '", x$bound,
      "', alpha = ", format(x$alpha), "):\n", sep = "")
  print_rate_table(x$rates, rate_row_names(rownames(x$rates)), digits)
  cat(strwrap(requirement_lines(x$rates, x$alpha), exdent = 2L), sep = "\n")

  cat("\nConfidence statements:\n")
  cat(paste0("  ", toupper(names(x$statements)), ": ", x$statements), sep = "\n")
  if (length(x$statements) > 1L) cat("  Joint:", x$joint_statement, "\n")
  print_probability_rule(x)

  if (x$is_linear) {
    cat("\n", x$selection, sep = "")
    cat(if (nzchar(x$selection)) "Coefficients of the selected features" else "Coefficients",
        " (decision f(x) >= 0 means positive):\n", sep = "")
    print(x$coefficients[x$shown, , drop = FALSE], digits = digits, na.print = "")
    if (length(x$shown) < nrow(x$coefficients)) {
      cat("... and", nrow(x$coefficients) - length(x$shown),
          if (nzchar(x$selection)) "more coefficients, all zero (not selected; see coef())\n" else
            "more coefficients (largest standardised shown; see coef())\n")
    }
  } else {
    cat("\nKernel solution with", nrow(x$coefficients) - 1L, "feature-map coefficients\n")
  }
  print_notes(x$warnings)
  invisible(x)
}

# The row names of the summary's rate table: the rate's abbreviation and its name.
rate_row_names <- function(names) {
  words <- c(tpr = "TPR (sensitivity)", tnr = "TNR (specificity)", acc = "ACC (accuracy)",
             bacc = "BACC (balanced acc.)")[names]
  ifelse(is.na(words), toupper(names), words)
}

# The summary's probability block: the calibration and the class rule on the probability scale.
print_probability_rule <- function(x) {
  if (is.null(x$probability_rule) || !length(x$probability_rule) || !nzchar(x$probability_rule)) return()
  cat("\nProbabilities (predict(fit, type = \"prob\")): ", x$calibration, "\n", sep = "")
  cat(strwrap(paste0(x$probability_rule, "."), indent = 2L, exdent = 2L), sep = "\n")
}

# The solver's outcome in words, from its status (csvm_stats' Status values) and relative gap; at the time limit
# Python's own sentence (solver$outcome: the limit, its clock, the phase and the gap, or that none is known).
solver_outcome <- function(solver, options) {
  gap <- paste0(format(100 * solver$gap, digits = 3L), "%")
  mip_gap <- if (is.null(options$mip_gap)) 1e-4 else options$mip_gap
  switch(solver$status,
    "optimal" = paste0("optimal (relative gap ", gap, ", within the requested mip_gap = ",
                       format(100 * mip_gap), "%)"),
    "time limit (incumbent)" = if (!is.null(solver$outcome) && nzchar(solver$outcome))
      paste0("NOT proven optimal: ", solver$outcome) else
      paste0("stopped at the time limit with the best solution found: NOT proven optimal (relative gap ", gap, ")"),
    if (is.finite(solver$gap)) paste0(solver$status, " (relative gap ", gap, ")") else solver$status)
}

# The sample sizes and the solver record of a summary, with the time limit and its clock; with
# verbose = TRUE also the backend, its formulation and the objective.
print_sizes_and_solver <- function(x, verbose = FALSE) {
  cat("Observations: ", x$nobs, " (training ", x$samples[["train"]], ", anchor ",
      x$samples[["anchor"]], ", held-out ", x$samples[["holdout"]], "; which rows: sample_roles(fit))",
      sep = "")
  if (length(x$na.action)) cat(";", length(x$na.action), "deleted for missingness")
  cat("\n")
  solver <- x$solver
  cat("Solution: ", solver_outcome(solver, x$options), "\n", sep = "")
  time_limit <- if (is.null(x$options$time_limit)) 300 else x$options$time_limit
  clock <- if (is.null(x$options$clock)) "wall" else x$options$clock
  limit <- paste0("time_limit = ", format(time_limit), " s, counted on the ", clock, " clock")
  solver_time <- if (!is.null(solver$wall_time)) {
    paste0(format(solver$wall_time, digits = 3L), " s wall-clock, ", format(solver$cpu_time, digits = 3L), " s CPU")
  }
  if (!is.null(solver$fit_wall_time)) {
    # the time limit bounds the whole fit (split, solve, statements), so its time is shown beside it
    cat("Time: ", format(solver$fit_wall_time, digits = 3L), " s wall-clock, ",
        format(solver$fit_cpu_time, digits = 3L), " s CPU for the whole fit (", limit, ")",
        if (!is.null(solver_time)) paste0("; the solver alone ", solver_time), "\n", sep = "")
  } else if (!is.null(solver_time)) {  # a fit made by an older csvmstats records the solver's time only
    cat("Time: ", solver_time, " in the solver (", limit, ")\n", sep = "")
  }
  if (isTRUE(verbose)) {
    cat("Solver: ", solver$backend, " ", solver$backend_version, ", ", solver$formulation,
        ", status ", solver$status, ", objective ", format(solver$objective, digits = 6L), "\n", sep = "")
  }
}

# The notes of a summary: in-sample versus held-out, then the fit's warnings.
print_notes <- function(warnings) {
  notes <- c("The anchor-sample rates are in-sample; only the held-out statements are confidence statements.",
             warnings)
  cat("\nNotes:\n")
  cat(paste0("[", seq_along(notes), "] ", notes), sep = "\n")
}

# The rate table: counts as "k/n", bounds rounded outwards, "" where a value does not apply.
print_rate_table <- function(rates, row_names, digits) {
  table <- data.frame(
    target = ifelse(is.na(rates$target), "", format(rates$target)),
    required = count_text(rates$required, rates$anchor_n),
    anchor = count_text(rates$anchor_correct, rates$anchor_n),
    met = yes_no(rates$met),
    "held-out" = count_text(rates$heldout_correct, rates$heldout_n),
    "held-out rate" = rates$heldout_rate,
    lower = bound_text(rates$lower, floor),
    upper = bound_text(rates$upper, ceiling),
    "joint lower" = bound_text(rates$joint_lower, floor),
    certified = yes_no(rates$certified),
    method = rates$method,
    check.names = FALSE,
    row.names = row_names
  )
  if (all(is.na(rates$upper))) table$upper <- NULL
  print(table, digits = digits, na.print = "")
}

# "yes"/"no" for a logical column, "" where it does not apply (a rate without a target).
yes_no <- function(flag) ifelse(is.na(flag), "", ifelse(flag, "yes", "no"))

# "k/n" for a count, "" where there is none (no target; the balanced accuracy is a mean of rates).
count_text <- function(count, n) ifelse(is.na(count), "", paste0(count, "/", n))

# Confidence bounds shown with .bound_decimals decimals, rounded outwards (a lower bound down,
# an upper bound up), so that the shown bound is as safe as the computed one; "" where there is none.
.bound_decimals <- 4L
bound_text <- function(bound, direction) {
  scale <- 10^.bound_decimals
  shown <- direction(bound * scale) / scale
  ifelse(is.na(bound), "", formatC(shown, format = "f", digits = .bound_decimals))
}

predict.csvm <- function(object, newdata, type = c("class", "prob", "decision", "probabilities"), ...) {
  refuse_predict_arguments(...)
  type <- match.arg(type)
  if (missing(newdata) || is.null(newdata)) {
    if (type == "decision") return(stats::napredict(object$na.action, object$fitted.values))
    if (type == "class") return(stats::napredict(object$na.action, object$fitted.class))
    x <- training_design(object)
  } else {
    x <- new_design(object, newdata)
  }
  complete <- stats::complete.cases(x)
  values <- predict_rows(object, x[complete, , drop = FALSE], if (type == "probabilities") "prob" else type)
  out <- if (type == "class") {
    factor(rep(NA_character_, nrow(x)), levels = object$response_levels)
  } else {
    rep(NA_real_, nrow(x))
  }
  out[complete] <- values
  names(out) <- rownames(x)
  if (type == "probabilities") out <- probability_matrix(object, out)
  if (missing(newdata) || is.null(newdata)) out <- stats::napredict(object$na.action, out)
  out
}

# Arguments other predict() methods take (e1071, kernlab, lm, glm), with what to do here instead
# ("<caller>" is the function that made the fit: csvm or np_classifier).
.foreign_predict_arguments <- c(
  probability = "for probabilities use type = \"prob\" (P of the positive class) or type = \"probabilities\" (one column per class)",
  decision.values = "for decision values use type = \"decision\" (f(x); f(x) >= 0 is the positive class)",
  se.fit = "the predictions have no standard errors; the fit's confidence statements are about its rates (summary(fit))",
  interval = "the predictions have no intervals; the fit's confidence statements are about its rates (summary(fit))",
  level = "the confidence level is the fit's alpha (<caller>(..., alpha = 0.05))",
  na.action = "rows of newdata with missing values get NA"
)

# predict() takes newdata and type only; anything else is refused, naming it, not ignored.
# `.caller` names the function that made the fit in the message.
refuse_predict_arguments <- function(..., .caller = "csvm") {
  if (!...length()) return(invisible(TRUE))
  given <- ...names()
  if (is.null(given)) given <- rep("", ...length())
  if (any(!nzchar(given))) {
    stop(.caller, ": predict() takes newdata and type only; ", sum(!nzchar(given)),
         " more unnamed argument(s) given. For probabilities use type = \"prob\"", call. = FALSE)
  }
  known <- given[given %in% names(.foreign_predict_arguments)]
  advice <- if (length(known)) {
    paste0(" (", paste0(known, ": ", gsub("<caller>", .caller, .foreign_predict_arguments[known], fixed = TRUE),
                        collapse = "; "), ")")
  } else {
    ". For probabilities use type = \"prob\""
  }
  stop(.caller, ": unknown argument", if (length(given) > 1L) "s", " ", paste0("\"", given, "\"", collapse = ", "),
       " to predict(), which takes newdata and type = \"class\", \"prob\", \"decision\" or ",
       "\"probabilities\"", advice, call. = FALSE)
}

# P(positive) as an n x 2 matrix with one column per class, in the response's level order (as kernlab).
probability_matrix <- function(object, p) {
  out <- matrix(NA_real_, length(p), 2L, dimnames = list(names(p), object$response_levels))
  out[, object$positive] <- p
  out[, object$negative] <- 1 - p
  out
}

# The design of the training rows, from the stored model frame.
training_design <- function(object) {
  if (is.null(object$model)) {
    stop("csvm: the fit was made with model = FALSE; give newdata", call. = FALSE)
  }
  x <- model.matrix(object$terms, object$model, contrasts.arg = object$contrasts)
  colnames(x) <- unique_design_names(x, object$terms)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  storage.mode(x) <- "double"
  x
}

# The design of new data through the stored terms, factor levels and contrasts. Missing values
# (NA, NaN) stay in it (their rows are predicted as NA); infinite ones are refused, naming the
# column, as csvm() refuses them in the data (check_no_missing). `caller` names the fitting function.
new_design <- function(object, newdata, caller = "csvm") {
  if (is.matrix(newdata)) {
    newdata <- as.data.frame(newdata)
    if (!is.null(object$x_names) && ncol(newdata) == length(object$x_names) &&
        !all(object$x_names %in% names(newdata))) {
      names(newdata) <- object$x_names
    }
  }
  mt <- delete.response(terms(object))
  mf <- model.frame(mt, newdata, na.action = stats::na.pass, xlev = object$xlevels)
  data_classes <- attr(mt, "dataClasses")
  if (!is.null(data_classes)) .checkMFClasses(data_classes, mf)
  refuse_infinite(mf, "`newdata`", caller)
  x <- model.matrix(mt, mf, contrasts.arg = object$contrasts)
  colnames(x) <- unique_design_names(x, mt)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  storage.mode(x) <- "double"
  refuse_infinite(as.data.frame(x, optional = TRUE), "the design of `newdata` (after coding)", caller)
  x
}

# Stop when a numeric column of `frame` holds Inf or -Inf, naming the columns and the first rows.
refuse_infinite <- function(frame, what, caller) {
  infinite <- lapply(frame, function(column) {
    if (!is.numeric(column)) return(logical(NROW(column)))
    found <- is.infinite(column)
    if (is.matrix(found)) rowSums(found) > 0 else found
  })
  has_inf <- vapply(infinite, any, logical(1L))
  if (!any(has_inf)) return(invisible(TRUE))
  rows <- rownames(frame)[Reduce(`|`, infinite[has_inf])]
  shown_rows <- paste0(paste(utils::head(rows, 5L), collapse = ", "), if (length(rows) > 5L) ", ...")
  stop(caller, ": ", what, " has infinite values (Inf or -Inf) in ", paste(names(frame)[has_inf], collapse = ", "),
       " (row", if (length(rows) > 1L) "s", " ", shown_rows, "); replace them or remove those rows: ",
       caller, "() refuses infinite values in the data too, while a missing value (NA or NaN) gives NA for its row",
       call. = FALSE)
}

terms.csvm <- function(x, ...) x$terms

formula.csvm <- function(x, ...) stats::formula(x$terms)

model.frame.csvm <- function(formula, ...) {
  if (!is.null(formula$model)) return(formula$model)
  NextMethod()
}

# The design as lm gives it: R's coding of the predictors, with R's "(Intercept)" column
# (the CSVM's intercept b is coef(fit)[["(Intercept)"]]).
model.matrix.csvm <- function(object, ...) {
  model.matrix(object$terms, model.frame(object), contrasts.arg = object$contrasts)
}

nobs.csvm <- function(object, ...) object$nobs

# Decision values (or classes) of the training rows; NA for rows na.exclude set aside.
fitted.csvm <- function(object, type = c("decision", "class"), ...) {
  type <- match.arg(type)
  stats::napredict(object$na.action, if (type == "decision") object$fitted.values else object$fitted.class)
}

residuals.csvm <- function(object, ...) {
  stop("csvm: a CSVM classifier has no residuals; compare predict(fit) with the response, ",
       "or use fitted(fit) for the decision values f(x)", call. = FALSE)
}

no_likelihood <- function(what) {
  stop("csvm: a CSVM has no ", what, ": its coefficients solve a constrained optimisation problem, ",
       "not a likelihood, so no standard errors, intervals or likelihood are defined for them. ",
       "Its confidence statements are about the rates (summary(fit), fit$statements)", call. = FALSE)
}

vcov.csvm <- function(object, ...) no_likelihood("variance-covariance matrix")
confint.csvm <- function(object, parm, level = 0.95, ...) no_likelihood("confidence intervals for coefficients")
logLik.csvm <- function(object, ...) no_likelihood("log-likelihood (so no AIC or BIC)")
anova.csvm <- function(object, ...) no_likelihood("analysis of deviance")

# Predictions for complete rows, through the fit's Python object: the live one, or the one
# re-created from the stored model file after saveRDS/readRDS (classes and decision values).
predict_rows <- function(object, x, type) {
  if (nrow(x) == 0L) {
    return(if (type == "class") character(0) else numeric(0))
  }
  model <- python_model(object)
  values <- py_call("predict", model, x, type,
                    context = if (type == "prob") "probability calibration: " else "")
  if (type == "class") as.character(values$class) else as.numeric(values[[type]])  # a matrix column by column
}

# The Python object that predicts: the fit's results while alive, else a model loaded
# from the model file's bytes (kept in the fit's cache environment for this session).
python_model <- function(object) {
  if (python_handle_alive(object$python)) return(object$python)
  cache <- object$cache
  if (!is.null(cache) && python_handle_alive(cache$python)) return(cache$python)
  if (is.null(object$model_file)) {
    stop("csvm: this fit was made by an older csvmstats without its model file, and its Python ",
         "object is gone; refit with csvm()", call. = FALSE)
  }
  model <- py_call("load", object$model_file)
  if (!is.null(cache)) cache$python <- model
  model
}

# Fits made in Python and saved with r_bridge.save_rds() or r_bridge.to_r().
print.csvm_fit <- function(x, ...) {
  cat(x$summary_text, sep = "\n")
  invisible(x)
}

# A multiclass fit (object$multiclass) has a features x classes coef matrix: coef() gives the
# (1 + features) x classes matrix with the intercepts (offsets) in the first row, as coef() of a
# multiclass csvm() fit.
coef.csvm_fit <- function(object, ...) {
  if (is.matrix(object$coef)) {
    coefficients <- rbind(as.numeric(object$intercept), object$coef)
    dimnames(coefficients) <- list(c("(Intercept)", as.character(object$coef_names)),
                                   if (is.null(colnames(object$coef))) as.character(object$levels) else
                                     colnames(object$coef))
    return(coefficients)
  }
  stats::setNames(c(object$intercept, object$coef), c("(Intercept)", object$coef_names))
}
