# Reference p-values for utest_test.go, from R 4.2.2:
#   Rscript report/stats/testdata/utest_reference.R
#
# exact(): the exact conditional (permutation) two-sided p-value of the
# Wilcoxon rank sum with mid-ranks, by enumerating every way of choosing
# which of the pooled values are x (combn). It is P(|W - mu| >= |w - mu|),
# the definition R's coin package uses; base R's wilcox.test has no exact
# test when there are ties.
exact <- function(x, y) {
  r <- rank(c(x, y)); n1 <- length(x); N <- length(r); mu <- n1 * (N + 1) / 2
  w <- sum(r[1:n1]); ws <- colSums(matrix(r[combn(N, n1)], nrow = n1))
  mean(abs(ws - mu) >= abs(w - mu) - 1e-9)
}
# normal(): the normal approximation with tie and continuity correction.
normal <- function(x, y) wilcox.test(x, y, exact = FALSE, correct = TRUE)$p.value
show <- function(name, p) cat(sprintf("%-45s %.10g\n", name, p))

show("one-tied-value-against-nine", exact(0, c(0,0,0,0,1,0,0,0,0)))
show("four-ties-and-one-against-a-tied-one", exact(c(0,1,1,1,1), 1))
show("top-value-tied-across-sides", exact(3, c(3,1,2,1,1,1)))
show("complete-separation-9-above-10-with-ties",
     exact(c(6,6,7,7,8,8,9,9,10), c(1,1,2,2,3,3,4,4,5,5)))
show("separation-9-below-10-tied-at-the-boundary",
     exact(c(1,1,2,2,3,3,4,4,5), c(5,6,6,7,7,8,8,9,9,10)))
show("overlapping-small-integers",
     exact(c(3,4,4,5,3,6,7,4), c(5,5,6,7,7,8,6,5,9)))

show("51-above-51-no-ties", normal(100:150, 0:50))
show("51-below-51-no-ties", normal(0:50, 100:150))
show("30-above-40-with-ties", normal(rep(c(10,11,12), each=10), rep(1:4, each=10)))
show("300-below-300-no-ties", normal(1:300, 1001:1300))
a <- c(3,4,4,5,5,5,6,6,7,3,4,5,5,6,7,7,4,3,5,6,5,4,6,7,5,4,3,5,6,4)
b <- c(4,5,5,6,6,7,7,7,5,6,8,6,5,7,6,4,6,7,8,5,6,7,5,6,7,6,5,8,6,7)
show("30-vs-30-small-integers", normal(a, b))
show("26-vs-16-small-integers", normal(a[1:26], b[1:16]))
