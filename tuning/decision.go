package tuning

import "strconv"

// Rule names the rule that made a Decision.
type Rule uint8

const (
	RuleWait       Rule = iota // not enough data yet
	RuleStable                 // repetition (and LBR overlap) inside the band
	RuleHold                   // a reversal held back by hysteresis
	RuleBackOff                // the kernel throttled or lost samples
	RuleBudget                 // cost or rate over the budget
	RuleFloor                  // rate under the floor
	RuleRepetition             // repetition share outside the band
	RuleOverlap                // consecutive LBR windows overlap too much
)

var ruleNames = [...]string{"wait", "stable", "hold", "back-off", "budget", "floor", "repetition", "lbr-overlap"}

func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Decision is the controller's answer to one Observation.
type Decision struct {
	// Period is the period to use from now on; it differs from the
	// previous one exactly when Changed.
	Period  uint64
	Changed bool
	// Rule is the rule that decided, Reason a sentence for people:
	// "repetition 0.4% < 1%: shrink period 1000003 → 500009".
	Rule   Rule
	Reason string
}
