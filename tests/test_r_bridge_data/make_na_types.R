# Writes na_types.rda, the fixture of tests/test_r_bridge_convert.py:
# one object of every type the bridge converts, each with an NA.
# Run from this folder with: Rscript make_na_types.R
frame <- data.frame(
  int = c(1L, NA, 3L),
  dbl = c(1.5, NA, NaN),
  lgl = c(TRUE, NA, FALSE),
  chr = c("a", NA, "c"),
  fct = factor(c("u", NA, "v"), levels = c("u", "v", "w")),
  ord = factor(c("lo", "hi", NA), levels = c("lo", "hi"), ordered = TRUE),
  day = as.Date(c("2020-01-01", NA, "2020-03-01")),
  stringsAsFactors = FALSE
)
rownames(frame) <- c("r1", "r2", "r3")
auto_rows <- data.frame(x = c(2.5, 3.5))
mat <- matrix(c(1, 2, NA, 4, 5, 6), nrow = 2, dimnames = list(c("a", "b"), c("x", "y", "z")))
int_mat <- matrix(c(1L, NA, 3L, 4L), nrow = 2)
nested <- list(a = 1:3, b = list(c = "z", d = NA), e = NULL)
unnamed <- list(1, "two")
named_int <- c(p = 1L, q = NA)
cplx <- c(1 + 2i, NA)
stamp <- as.POSIXct(c("2021-06-01 12:30:00", NA), tz = "UTC")
save(frame, auto_rows, mat, int_mat, nested, unnamed, named_int, cplx, stamp,
     file = "na_types.rda", version = 2)
