package meter

import (
	"fmt"
	"strings"

	"github.com/wfbench/wfb"
)

// Summary is an attempt's billed usage: each figure summed over the
// requests whose response was billed, with where it came from.
type Summary struct {
	Requests      int   // every request the attempt made through the proxy
	ModelRequests []int // Seqs of its model requests
	Billed        []int // Seqs of the billed ones, whose usage is summed
	// Failed are Seqs of model requests that were not billed (an error
	// status, an error event, a cut or unfinished stream, the meter's own
	// 502): what the wire showed for them is in their records, not here.
	Failed []int

	Input         Sum
	Output        Sum
	CacheRead     Sum
	CacheCreation Sum
	Reasoning     Sum
}

// Sum is one figure of a Summary.
type Sum struct {
	// Value is the sum; nil when it is not measured (Why says why) or the
	// protocol does not report it (NotReported).
	Value *int64
	// From are the Seqs of the billed requests that carried the figure.
	From []int
	// NotReported says no billed request's protocol reports this figure
	// (OpenAI's cache writes): not a failure to measure.
	NotReported bool
	// Why names the first request that should have carried the figure and
	// did not, or carried nonsense, and what it carried; Raw is that
	// nonsense as the wire wrote it ("" when the figure was absent).
	Why string
	Raw string
}

// Fields returns the sums with their wfb column names, in Usage.Fields'
// order.
func (s *Summary) Fields() []NamedSum {
	return []NamedSum{
		{FieldInput, &s.Input},
		{FieldOutput, &s.Output},
		{FieldCacheRead, &s.CacheRead},
		{FieldCacheCreation, &s.CacheCreation},
		{FieldReasoning, &s.Reasoning},
	}
}

// NamedSum is a figure of a Summary with its wfb column name.
type NamedSum struct {
	Name string
	Sum  *Sum
}

// Summarize sums the billed usage of an attempt's records. A request that
// was not billed (a 529, a failed stream) adds nothing, so a 529 then a
// success counts the success once. A figure that a billed request should
// have carried and did not — absent, or nonsense — makes that figure of
// the sum not measured, naming the request; it is never taken as 0.
func Summarize(recs []Record) Summary {
	s := Summary{Requests: len(recs)}
	for _, r := range recs {
		if r.Protocol == "" {
			continue
		}
		s.ModelRequests = append(s.ModelRequests, r.Seq)
		if r.Billed {
			s.Billed = append(s.Billed, r.Seq)
		} else {
			s.Failed = append(s.Failed, r.Seq)
		}
	}
	for i, f := range s.Fields() {
		*f.Sum = sumField(recs, i, &s)
	}
	return s
}

// sumField sums the i-th figure (Usage.Fields order) over the billed
// records.
func sumField(recs []Record, i int, s *Summary) Sum {
	if len(s.Billed) == 0 {
		return Sum{Why: noBilled(s)}
	}
	var total int64
	var out Sum
	reported := false
	for _, r := range recs {
		if r.Protocol == "" || !r.Billed {
			continue
		}
		c := r.Usage.Fields()[i].Count
		switch c.State {
		case NotReported:
			continue
		case Present:
			reported = true
			out.From = append(out.From, r.Seq)
			if total > wfb.MaxCount-c.Value {
				return Sum{From: out.From, Why: fmt.Sprintf("the sum passes wfb's bound on a count (%s) at request %d", wfb.MaxCountText, r.Seq)}
			}
			total += c.Value
		default:
			why := c.Why
			if why == "" {
				why = c.Native + " is " + c.State.String()
			}
			return Sum{From: out.From, Raw: c.Raw, Why: fmt.Sprintf("request %d (%s %s, status %d): %s", r.Seq, r.Method, r.Path, r.Status, why)}
		}
	}
	if !reported {
		return Sum{NotReported: true, Why: "the provider's protocol does not report it"}
	}
	out.Value = &total
	return out
}

func noBilled(s *Summary) string {
	switch {
	case s.Requests == 0:
		return "the attempt made no request through the meter"
	case len(s.ModelRequests) == 0:
		return fmt.Sprintf("none of the attempt's %d requests was a model request", s.Requests)
	}
	return fmt.Sprintf("no model request of the attempt was answered with usage (%d failed: requests %s)", len(s.Failed), seqList(s.Failed))
}

func seqList(seqs []int) string {
	parts := make([]string, len(seqs))
	for i, n := range seqs {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}
