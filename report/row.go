package report

import (
	"math"
	"slices"

	"github.com/wfbench/wfb"
)

// Row is one attempt as the builders read it: the results columns a report
// needs, typed. Values holds each metric, NaN when the column is NULL ("not
// measured"); a measured 0 stays 0. SQLite stores no NaN (it becomes NULL),
// so NaN loses nothing.
type Row struct {
	RunID        string
	Task         string
	Arm          string
	Rep          int
	Attempt      int
	AgentVersion string
	OK           bool
	ErrorKind    string // empty when OK
	Values       [NumMetrics]float64
	// UsageDisagrees says the wire and the agent reported different usage
	// for the attempt (results.usage_check); the token metrics are the
	// wire's unless the report asked for the agent's.
	UsageDisagrees bool
	// LabelsDigest names the labels the attempt's latest score was taken
	// against (scores.labels_digest); empty when it was never scored.
	LabelsDigest string
	// UsageUnwitnessed says the attempt was metered and its agent reported
	// billed usage while no model request reached the meter
	// (usage_verdict unwitnessed): the agent's figures stand alone.
	UsageUnwitnessed bool
	// UsageAgentOnly says the attempt's usage is the agent's report and
	// its run was recorded with the meter off: nothing on the wire
	// witnessed it (a real CLI's zero-filled or rounded figures included).
	UsageAgentOnly bool
}

// Metric names one measured quantity of an attempt.
type Metric int

// Metrics, in the order reports show them. The review-quality metrics come
// from each attempt's latest row in the scores table; a file without that
// table (or those columns) simply has no such metrics (see
// Columns.Metrics), and an attempt never scored has them NULL.
const (
	InputTokens Metric = iota
	OutputTokens
	CacheReadTokens
	CacheWriteTokens
	CostUSD
	Turns
	WallTime
	Precision
	Recall
	WeightedF1
	VerdictCorrect
	NumMetrics // not a metric: the number of them
)

// MetricKind says how a metric is summarised and tested.
type MetricKind int

const (
	// Continuous metrics are summarised by median and IQR and compared with
	// the Mann–Whitney U test.
	Continuous MetricKind = iota
	// Proportion metrics are 0/1 per attempt, summarised as a rate and
	// compared with Fisher's or McNemar's exact test.
	Proportion
)

type metricInfo struct {
	name    string // as shown in tables
	column  string // results column it is read from
	unit    string // "tokens", "USD", "turns", "ms", "" for a ratio
	kind    MetricKind
	quality bool // review quality: present only when labels were scored
	lower   bool // lower is better (used to colour nothing; documents direction)
}

var metrics = [NumMetrics]metricInfo{
	InputTokens:      {"input tokens", "input_tokens", "tokens", Continuous, false, true},
	OutputTokens:     {"output tokens", "output_tokens", "tokens", Continuous, false, true},
	CacheReadTokens:  {"cache read tokens", "cache_read_input_tokens", "tokens", Continuous, false, true},
	CacheWriteTokens: {"cache write tokens", "cache_creation_input_tokens", "tokens", Continuous, false, true},
	CostUSD:          {"cost", "cost_usd", "USD", Continuous, false, true},
	Turns:            {"turns", "num_turns", "turns", Continuous, false, true},
	WallTime:         {"wall time", "duration_ms", "ms", Continuous, false, true},
	Precision:        {"precision", "precision", "", Continuous, true, false},
	Recall:           {"recall", "recall", "", Continuous, true, false},
	WeightedF1:       {"weighted F1", "weighted_f1", "", Continuous, true, false},
	VerdictCorrect:   {"verdict accuracy", "verdict_correct", "", Proportion, true, false},
}

// Name returns the metric's name as tables show it.
func (m Metric) Name() string { return metrics[m].name }

// Column returns the column the metric is read from: a results column, or
// for a quality metric a scores column.
func (m Metric) Column() string { return metrics[m].column }

// Unit returns the metric's unit: "tokens", "USD", "turns", "ms", or "" for
// a ratio in [0, 1].
func (m Metric) Unit() string { return metrics[m].unit }

// Kind says whether the metric is continuous or a 0/1 proportion.
func (m Metric) Kind() MetricKind { return metrics[m].kind }

// Bounded reports whether the metric lives in [0, 1] (precision, recall,
// F1, and every proportion): its intervals are clipped to that range, as
// a value outside it cannot be.
func (m Metric) Bounded() bool { return m.Quality() }

// Quality reports whether the metric measures review quality.
func (m Metric) Quality() bool { return metrics[m].quality }

// Token reports whether m is one of the four usage token counts, which the
// wire measures beside the agent (results.metered_*).
func (m Metric) Token() bool { return m <= CacheWriteTokens }

// Unmeasured returns a Values array with every metric not measured.
func Unmeasured() [NumMetrics]float64 {
	var v [NumMetrics]float64
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// sortKinds sorts error kinds in documentation order, unknown ones last and
// alphabetically.
func sortKinds(kinds []string) {
	slices.SortFunc(kinds, func(a, b string) int {
		if oa, ob := wfb.KindOrder(a), wfb.KindOrder(b); oa != ob {
			return oa - ob
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
}
