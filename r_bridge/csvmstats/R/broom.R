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
  }
  as_tibble_if_available(row)
}

as_tibble_if_available <- function(frame) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(frame) else frame
}
