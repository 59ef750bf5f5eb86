# broom's tidy() and glance() for csvm fits (registered for the generics package,
# which broom re-exports, when it is installed).

tidy.csvm <- function(x, ...) {
  if (!x$is_linear) {
    stop("csvm: tidy() lists coefficients on the predictors, which a kernel fit (", x$kernel,
         ") does not have; use glance() for its rates", call. = FALSE)
  }
  standardized <- if (length(x$coef_standardized)) c(NA_real_, x$coef_standardized) else NA_real_
  as_tibble_if_available(data.frame(term = names(x$coefficients), estimate = unname(x$coefficients),
                                    std.estimate = unname(standardized), stringsAsFactors = FALSE))
}

glance.csvm <- function(x, ...) {
  rates <- x$rates
  row <- data.frame(nobs = x$nobs, kernel = x$kernel, C = x$C, alpha = x$alpha, bound = x$bound,
                    status = as.character(x$solver$status), gap = as.numeric(x$solver$gap),
                    stringsAsFactors = FALSE)
  for (rate in rownames(rates)) {
    row[[paste0(rate, ".target")]] <- rates[rate, "target"]
    row[[paste0(rate, ".heldout")]] <- rates[rate, "heldout_rate"]
    row[[paste0(rate, ".lower")]] <- rates[rate, "lower"]
    row[[paste0(rate, ".certified")]] <- rates[rate, "certified"]
  }
  as_tibble_if_available(row)
}

as_tibble_if_available <- function(frame) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(frame) else frame
}

# augment(): the data with one row per observation and the fit's columns: .fitted (the predicted
# class), .prob (P of the positive class; for several classes one .prob_<class> column each),
# .decision (f(x); for several classes .decision_<class>) and, for the fit's own rows, .sample
# (training, anchor or held-out). Without newdata: the rows of `data` (default: the model frame),
# matched to the fit's rows by row name; rows the fit did not use (missing values, subset) get NA.
augment.csvm <- function(x, data = NULL, newdata = NULL, ...) {
  refuse_predict_arguments(...)
  if (!is.null(newdata)) {
    out <- as.data.frame(newdata)
    design <- new_design(x, out)
    columns <- prediction_columns(x, predict(x, out), predict(x, out, type = "decision"),
                                  design_probabilities(x, design), rownames(out))
    return(as_tibble_if_available(cbind(out, columns)))
  }
  from_model <- is.null(data)
  if (from_model) {
    if (is.null(x$model)) {
      stop("csvm: the fit was made with model = FALSE; give augment() the data (data = d) or newdata",
           call. = FALSE)
    }
    data <- x$model
  }
  out <- as.data.frame(data)
  position <- match(rownames(out), names(x$fitted.class))
  if (all(is.na(position))) {
    stop("csvm: no row of `data` is a row of the fit (rows are matched by row name); give the data the ",
         "fit was made from, or other data as newdata =", call. = FALSE)
  }
  decision <- if (is.matrix(x$fitted.values)) x$fitted.values[position, , drop = FALSE] else x$fitted.values[position]
  rows <- !is.na(position)
  design <- if (from_model) training_design(x) else new_design(x, out[rows, , drop = FALSE])
  prob <- design_probabilities(x, design)
  columns <- prediction_columns(x, x$fitted.class[position], decision, expand_rows(prob, rows), rownames(out))
  columns$.sample <- x$sample_roles[position]
  as_tibble_if_available(cbind(out, columns))
}

# The fit's probabilities for the rows of a design (NA for incomplete rows): a vector of P(positive),
# or a matrix with one column per class.
design_probabilities <- function(x, design) {
  complete <- stats::complete.cases(design)
  values <- as.numeric(predict_rows(x, design[complete, , drop = FALSE], "prob"))
  if (inherits(x, "csvm_multiclass")) {
    out <- matrix(NA_real_, nrow(design), length(x$classes), dimnames = list(NULL, x$classes))
    out[complete, ] <- matrix(values, ncol = length(x$classes))
    return(out)
  }
  out <- rep(NA_real_, nrow(design))
  out[complete] <- values
  out
}

# Values (a vector, or a matrix by rows) for the TRUE positions of `rows`, NA elsewhere.
expand_rows <- function(values, rows) {
  if (is.matrix(values)) {
    out <- matrix(NA_real_, length(rows), ncol(values), dimnames = list(NULL, colnames(values)))
    out[rows, ] <- values
    return(out)
  }
  out <- rep(NA_real_, length(rows))
  out[rows] <- values
  out
}

# augment()'s columns .fitted, .prob and .decision (one .prob_<class> and .decision_<class> column per
# class for several classes).
prediction_columns <- function(x, class, decision, prob, row_names) {
  columns <- data.frame(.fitted = unname(class), row.names = row_names)
  if (is.matrix(prob)) {
    for (k in seq_along(x$classes)) {
      columns[[paste0(".prob_", x$classes[k])]] <- unname(prob[, k])
    }
    for (k in seq_along(x$classes)) {
      columns[[paste0(".decision_", x$classes[k])]] <- unname(decision[, k])
    }
  } else {
    columns$.prob <- unname(prob)
    columns$.decision <- unname(decision)
  }
  columns
}
