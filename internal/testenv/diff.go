package testenv

import "strings"

// LineDiff is a small LCS diff of two texts split into lines, for a test
// to print when a text must equal a reference: "  " common, "- " only in
// a, "+ " only in b. It returns "" when a and b are equal.
func LineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	same := true
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j, same = j+1, false
		default:
			out.WriteString("- " + a[i] + "\n")
			i, same = i+1, false
		}
	}
	if same {
		return ""
	}
	return out.String()
}
