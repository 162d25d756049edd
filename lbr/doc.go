// Package lbr turns branch-stack samples (PERF_SAMPLE_BRANCH_STACK, Intel
// LBR) into call edges — call-site address → callee entry — and estimates
// how many times each edge executed.
//
// Derivation of the estimator: see estimate.go (Estimator) and the section
// below.
package lbr
