# Python warnings re-issued as R warnings, in R's wording.

.rate_units <- c(tpr = "positives", tnr = "negatives", acc = "points")

# Re-issue the warnings Python raised (messages and category names from r_api.call) as R warnings,
# except those of the kinds in `reported` (said already, e.g. before the solve). Warnings that differ
# only in their numbers (the same capped target in each of the calibration's refits: several classes
# without a large enough held-out sample, the CSVM refitted on 5 folds) are said once, with how many
# more there were. `context` starts each message.
issue_python_warnings <- function(messages, kinds, reported = character(), context = "", caller = "csvm") {
  messages <- as.character(messages)
  kinds <- rep_len(as.character(kinds), length(messages))
  keep <- !kinds %in% reported
  messages <- messages[keep]
  kinds <- kinds[keep]
  shape <- paste(kinds, gsub("[0-9]+([.][0-9]+)?", "#", messages))
  for (key in unique(shape)) {
    same <- which(shape == key)
    more <- length(same) - 1L
    warning(caller, ": ", context, r_wording(messages[same[1L]]),
            if (more) paste0(" (", more, " more warning", if (more > 1L) "s", " like this one, with other counts)"),
            call. = FALSE)
  }
  invisible(length(messages))
}

# Each target that the anchor sample cannot carry, with the anchor sizes it needs, from an
# anchor table (r_api.anchor_check before the solve, or a fit's export), except the rates or
# classes in `reported`. Shown at once (immediate.), not after the call as R's warnings are.
warn_capped_targets <- function(check, reported = character()) {
  anchor <- anchor_fields(check$anchor)
  anchor$capped <- anchor$capped & !anchor$rate %in% reported
  for (text in capped_target_messages(anchor, as.character(check$bound), as.numeric(check$alpha))) {
    warning(text, call. = FALSE, immediate. = TRUE)
  }
}

# The rates (or classes) an anchor table reports as capped.
capped_rates <- function(check) {
  anchor <- anchor_fields(check$anchor)
  anchor$rate[anchor$capped]
}

# "tpr_min = 0.9 needs at least 150 anchor positives ..." for each capped rate (or class).
capped_target_messages <- function(anchor, bound, alpha) {
  capped <- which(anchor$capped)
  vapply(capped, function(i) {
    rate <- anchor$rate[i]
    if (rate %in% names(.rate_units)) {  # a two-class rate
      target <- paste0(rate, "_min = ", format(anchor$target[i]))
      units <- .rate_units[[rate]]
    } else {  # a class of a multiclass fit
      target <- paste0("recall_min[\"", rate, "\"] = ", format(anchor$target[i]))
      units <- paste0("points of class '", rate, "'")
    }
    needed <- anchor[[bound]][i]
    binomial <- anchor$binomial[i]
    advice <- if (bound != "binomial" && anchor$n[i] >= binomial) {
      paste0("bound = \"binomial\" needs only ", binomial, " anchor ", units, " and gives a statement here")
    } else if (bound != "binomial") {
      paste0("Give more data or a larger anchor share (fractions); with bound = \"binomial\" ", binomial,
             " anchor ", units, " are needed")
    } else {
      "Give more data or a larger anchor share (fractions)"
    }
    paste0("csvm: ", target, " with bound = \"", bound, "\" (alpha = ",
           format(alpha), ") needs at least ", needed, " anchor ", units, "; the anchor sample has ",
           anchor$n[i], ", so the fit requires all of them to be classified correctly and no confidence statement ",
           "follows from the target. ", advice, ".")
  }, character(1L))
}

# Python's spelling of arguments, constants and lists in R's. Advice to pass samples= (the Python
# API's explicit split, which csvm() does not take) becomes what an R user can do; a keyword named
# without a value, "(fractions=)", is the argument's name, "(fractions)".
r_wording <- function(text) {
  text <- gsub("\\bpass samples=(?=[).,;]|\\s|$)", "give more data", text, perl = TRUE)
  text <- gsub("\\b([A-Za-z_][A-Za-z0-9_]*)=(?=[).,;]|\\s|$)", "\\1", text, perl = TRUE)
  text <- gsub("\\b([A-Za-z_][A-Za-z0-9_]*)=(?!=)", "\\1 = ", text, perl = TRUE)
  text <- gsub("\\bTrue\\b", "TRUE", text, perl = TRUE)
  text <- gsub("\\bFalse\\b", "FALSE", text, perl = TRUE)
  text <- gsub("\\bNone\\b", "NULL", text, perl = TRUE)
  # a Python list of strings ['a', 'b'] is R's "a", "b"
  lists <- gregexpr("\\[(?:'[^']*'(?:, )?)+\\]", text, perl = TRUE)
  regmatches(text, lists) <- lapply(regmatches(text, lists), function(found) {
    gsub("'([^']*)'", "\"\\1\"", substr(found, 2L, nchar(found) - 1L))
  })
  text
}
