# Which rows of the data were the training, anchor (requirement) and held-out (certification)
# samples of a fit: the factor fit$sample_roles, computed by the Python fit (r_api's sample_roles).

sample_roles <- function(object, ...) UseMethod("sample_roles")

# The sample of each row, as fitted() gives values: one per row of the model frame, named by its
# row name; with na.action = na.exclude, NA for the rows set aside for missing values.
sample_roles.csvm <- function(object, ...) {
  roles <- object$sample_roles
  if (is.null(roles)) {
    stop("csvm: this fit was made by an older csvmstats that did not record the sample of each row; ",
         "refit with csvm() (update(fit) keeps the split)", call. = FALSE)
  }
  stats::napredict(object$na.action, roles)
}
