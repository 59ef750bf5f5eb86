# End-to-end example: SRBCT (Khan et al. 2001, as shipped by plsgenomics),
# binary problem of the EBB paper (EWS, the largest class, negative; BL, NB
# and RMS positive), CSVM with a required true positive rate of 0.9.
#
# Usage: Rscript srbct.R [path/to/SRBCT.rda]
# Without an argument the file named by CSVM_SRBCT_PATH is used, or
# plsgenomics' data(SRBCT) when that package is installed.
# The Python side: csvmstats::install_python() once (or RETICULATE_PYTHON).

library(csvmstats)

load_srbct <- function(path) {
  if (nzchar(path)) {
    objects <- new.env()
    load(path, envir = objects)
    return(objects$SRBCT)
  }
  if (requireNamespace("plsgenomics", quietly = TRUE)) {
    objects <- new.env()
    utils::data("SRBCT", package = "plsgenomics", envir = objects)
    return(objects$SRBCT)
  }
  stop("SRBCT not found: give the path of SRBCT.rda, set CSVM_SRBCT_PATH or install plsgenomics")
}

arguments <- commandArgs(trailingOnly = TRUE)
path <- if (length(arguments)) arguments[1] else Sys.getenv("CSVM_SRBCT_PATH")
srbct <- load_srbct(path)

expression <- as.data.frame(srbct$X)
names(expression) <- paste0("X", seq_len(ncol(expression)))
tumour <- factor(c("EWS", "BL", "NB", "RMS")[srbct$Y], levels = c("EWS", "BL", "NB", "RMS"))
data <- data.frame(class = factor(ifelse(tumour == "EWS", "EWS", "non-EWS"), levels = c("EWS", "non-EWS")),
                   expression)
cat("SRBCT:", nrow(data), "samples,", ncol(expression), "genes; tumours",
    paste(names(table(tumour)), table(tumour), sep = " ", collapse = ", "), "\n")
cat("Binary problem: positive class 'non-EWS' (", sum(data$class == "non-EWS"), "), negative 'EWS' (",
    sum(data$class == "EWS"), ")\n", sep = "")

fit <- csvm(class ~ ., data = data, tpr_min = 0.9, alpha = 0.05, bound = "binomial",
            time_limit = 60, random_state = 1L)
print(summary(fit))

predicted <- predict(fit, data)
cat("\nResubstitution table (all 83 samples, training and anchor rows included):\n")
print(table(observed = data$class, predicted = predicted))
