package wfb

// Verdict is the outcome of checking one witness of an attempt against the
// other: the agent's usage (or cost) against the wire's. It is stored in
// results.usage_verdict and results.cost_verdict, beside the text that
// names the figures in question (usage_check, cost_check); reports count by
// the verdict, never by matching the text. The empty Verdict is NULL: not
// checked.
type Verdict string

const (
	// VerdictAgree: both witnesses measured the same figures (a cost
	// within rounding).
	VerdictAgree Verdict = "agree"
	// VerdictDisagree: both measured, and the figures differ; the reports
	// use the wire's.
	VerdictDisagree Verdict = "disagree"
	// VerdictRefused: the wire lacked a figure or carried nonsense, so
	// nothing is recorded as measured (usage only).
	VerdictRefused Verdict = "refused"
	// VerdictUnwitnessed: the attempt was metered and its agent reported
	// billed usage (a token count or a cost), but no model request reached
	// the meter, so only the agent witnessed it: it bypassed the base URL
	// it was given, or invented the figures (usage only). The agent's
	// figures stay recorded as reported unless a witness is required.
	VerdictUnwitnessed Verdict = "unwitnessed"
)

// Verdicts lists every verdict, in documentation order.
var Verdicts = []Verdict{VerdictAgree, VerdictDisagree, VerdictRefused, VerdictUnwitnessed}
