library(testthat)
library(csvmstats)

test_check("csvmstats")
