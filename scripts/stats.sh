# Sourced by bench-fdo.sh and bench-pgo.sh: $stats_awk holds awk functions
# to put before a program's own text (awk "$stats_awk"'...'):
#   sort(a, n)            sorts a[1..n] in place
#   q(a, n, p)            the p-quantile of the sorted a[1..n], interpolated
#   erfc(x)               Abramowitz and Stegun 7.1.26 (error below 1.5e-7)
#   mwu_p(x, nx, y, ny)   the two-sided p of the Mann-Whitney U test of
#                         x[1..nx] against y[1..ny], ties ranked by their mean
#                         rank, normal approximation with continuity correction
stats_awk='
function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j > 0 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t } }
function q(a, n, p,   h, l) { h = 1 + (n - 1) * p; l = int(h); return l >= n ? a[n] : a[l] + (h - l) * (a[l+1] - a[l]) }
function erfc(x,   t) { t = 1 / (1 + 0.3275911 * x); return t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * exp(-x * x) }
function mwu_p(x, nx, y, ny,   v, g, rank, n, i, j, less, eq, r1, tie, u, mu, sd, d) {
	n = 0
	for (i = 1; i <= nx; i++) { v[++n] = x[i]; g[n] = 1 }
	for (i = 1; i <= ny; i++) { v[++n] = y[i]; g[n] = 0 }
	for (i = 1; i <= n; i++) { less = 0; eq = 0; for (j = 1; j <= n; j++) { if (v[j] < v[i]) less++; else if (v[j] == v[i]) eq++ }
		rank[i] = less + (eq + 1) / 2; if (g[i]) r1 += rank[i] }
	tie = 0
	for (i = 1; i <= n; i++) { eq = 0; for (j = 1; j <= n; j++) if (v[j] == v[i]) eq++; tie += (eq * eq - 1) / (n * (n - 1)) }
	u = r1 - nx * (nx + 1) / 2
	mu = nx * ny / 2
	sd = sqrt(nx * ny / 12 * (n + 1 - tie))
	d = (u > mu ? u - mu : mu - u) - 0.5 # continuity correction
	return sd > 0 ? erfc((d > 0 ? d : 0) / sd / sqrt(2)) : 1
}
'
