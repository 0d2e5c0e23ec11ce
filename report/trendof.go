package report

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// FewBucketsError is a trend whose selection spans fewer than two buckets:
// nothing to compare. It matches ErrSelection, and says how to get two.
type FewBucketsError struct {
	N  int    // buckets the selection spans
	By string // day, label or run
}

func (e *FewBucketsError) Error() string {
	hint := "try --by run, or wfb report"
	if e.By == "day" {
		hint = "every run started on one UTC date; try --by label or --by run (wfb trend --help shows how to get two), or wfb report"
	}
	return fmt.Sprintf("trend: the selection spans %d %s bucket(s); a trend needs two (%s)", e.N, e.By, hint)
}

// Unwrap makes a FewBucketsError match ErrSelection.
func (e *FewBucketsError) Unwrap() error { return ErrSelection }

// ParseTrendKeys reads `wfb trend --metric` into line keys: the strict
// and clean pass rates (pass_rate is the strict one) and the numeric
// metrics by column name, comma-separated; "" keeps every line.
func ParseTrendKeys(spec string) ([]string, error) {
	if spec == "" {
		return nil, nil
	}
	valid := []string{"strict_pass_rate", "clean_pass_rate"}
	for m := range NumMetrics {
		valid = append(valid, m.Column())
	}
	var keys []string
	for _, k := range strings.Split(spec, ",") {
		k = strings.TrimSpace(k)
		if k == "pass_rate" {
			k = "strict_pass_rate"
		}
		if !slices.Contains(valid, k) {
			return nil, inputError("--metric %q: unknown metric; the metrics are pass_rate, %s", k, strings.Join(valid, ", "))
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// TrendOf is `wfb trend`: the selection's attempts compared bucket by
// bucket (opts.By, see TrendBuckets) over the runs present (RunsWithRows),
// each bucket also with the baseline bucket when one is named. A selection
// spanning fewer than two buckets is a *FewBucketsError; a baseline the
// buckets lack, or an unknown By, an *InputError.
func TrendOf(ctx context.Context, src Source, cols Columns, runs []RunInfo, sel Selection, present map[string]bool, opts TrendOptions, baseline string) (*Trend, error) {
	names, ofRun, err := TrendBuckets(runs, opts.By, present)
	if err != nil {
		return nil, &InputError{Reason: err.Error()}
	}
	if len(names) < 2 {
		return nil, &FewBucketsError{N: len(names), By: opts.By}
	}
	base := -1
	if baseline != "" {
		if base = slices.Index(names, baseline); base < 0 {
			return nil, inputError("--baseline %q: no such %s among %s", baseline, opts.By, strings.Join(names, ", "))
		}
	}
	t := NewTrender(opts, names, base)
	if err := LoadRows(ctx, src, cols, sel, func(row *Row) { t.Add(ofRun[row.RunID], row) }); err != nil {
		return nil, err
	}
	return t.Result(runs), nil
}

// PageTrend is the trend a report's HTML page adds: pass rate, cost and
// review quality by day when the selection spans two days or more, else by
// label when it spans two labels, else none (nil).
func PageTrend(ctx context.Context, src Source, cols Columns, runs []RunInfo, sel Selection, present map[string]bool) (*Trend, error) {
	for _, by := range []string{"day", "label"} {
		tr, err := TrendOf(ctx, src, cols, runs, sel, present, TrendOptions{Alpha: 0.05, Metrics: cols.Metrics(), By: by,
			Keys: []string{"strict_pass_rate", "cost_usd", "weighted_f1"}}, "")
		var few *FewBucketsError
		switch {
		case errors.As(err, &few):
			continue
		case err != nil:
			return nil, err
		}
		return tr, nil
	}
	return nil, nil
}
