# Writes promise.RData, the CVE-2024-27322 fixture of tests/test_r_bridge_cve.py:
# an object `p` saved as an unevaluated promise whose code creates the file
# csvm-stats-cve-marker in the working directory when the object is used
# (R before 4.4.0 restores the promise on load(); rpy2 forces it at once).
# Run from this folder with: Rscript make_promise.R
x <- 1
delayedAssign("p", system("touch csvm-stats-cve-marker"))
save(x, p, file = "promise.RData", eval.promises = FALSE)
