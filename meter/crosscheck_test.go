package meter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// anth is a billed Anthropic record with the given figures (nil: absent).
func anth(seq int, in, out, read, create *int64) Record {
	c := func(native string, v *int64) Count {
		if v == nil {
			return Count{Native: "usage." + native, Why: "usage." + native + " is missing"}
		}
		return Count{State: Present, Value: *v, Native: "usage." + native}
	}
	return Record{Seq: seq, Protocol: ProtocolAnthropic, Method: "POST", Path: "/v1/messages", Status: 200, Billed: true,
		Usage: Usage{Semantics: wfb.SemanticsAnthropic, Input: c("input_tokens", in), Output: c("output_tokens", out),
			CacheRead: c("cache_read_input_tokens", read), CacheCreation: c("cache_creation_input_tokens", create),
			Reasoning: notReported("Anthropic Messages")}}
}

func n(v int64) *int64 { return &v }

func failedRec(seq, status int) Record {
	return Record{Seq: seq, Protocol: ProtocolAnthropic, Method: "POST", Path: "/v1/messages", Status: status, ErrorType: "overloaded_error"}
}

func withNonsense(r Record, raw string) Record {
	r.Usage.CacheRead = Count{State: Nonsense, Raw: raw, Native: "usage.cache_read_input_tokens", Why: "usage.cache_read_input_tokens is negative (" + raw + ")"}
	return r
}

// TestCrossCheckRefusesWhatTheWireLacked: the seed's refusals apply to the
// wire. A figure the provider never sent, or sent as nonsense, refuses the
// measurement whatever the agent printed (Claude Code prints 0 for a
// missing cache field, 0 for -5, 1 for true); figures that differ
// otherwise are a disagreement naming both values.
func TestCrossCheckRefusesWhatTheWireLacked(t *testing.T) {
	full := Reported{n(2000), n(300), n(7000), n(1000)}
	cases := []struct {
		name    string
		recs    []Record
		agent   Reported
		outcome wfb.Verdict
		fields  map[string]wfb.Verdict // field -> outcome, for those not agreeing
		says    []string               // in Check.String()
	}{
		{"agree", []Record{anth(1, n(2000), n(300), n(7000), n(1000))}, full, wfb.VerdictAgree, nil, nil},
		{"agree over two turns", []Record{anth(1, n(1000), n(100), n(3000), n(1000)), anth(2, n(1000), n(200), n(4000), n(0))}, full, wfb.VerdictAgree, nil, nil},
		{"a 529 then a success counts once", []Record{failedRec(1, 529), anth(2, n(2000), n(300), n(7000), n(1000))}, full, wfb.VerdictAgree, nil, nil},
		{"missing cache field, agent zero-filled",
			[]Record{anth(1, n(2000), n(300), nil, n(1000))}, Reported{n(2000), n(300), n(0), n(1000)}, wfb.VerdictRefused,
			map[string]wfb.Verdict{FieldCacheRead: wfb.VerdictRefused}, []string{"cache_read_input_tokens", "is missing", "wire absent, agent 0"}},
		{"negative on the wire, agent printed 0",
			[]Record{withNonsense(anth(1, n(2000), n(300), n(1), n(1000)), "-5")}, Reported{n(2000), n(300), n(0), n(1000)}, wfb.VerdictRefused,
			map[string]wfb.Verdict{FieldCacheRead: wfb.VerdictRefused}, []string{"wire -5, agent 0", "request 1"}},
		{"true on the wire, agent printed 1",
			[]Record{withNonsense(anth(1, n(2000), n(300), n(1), n(1000)), "true")}, Reported{n(2000), n(300), n(1), n(1000)}, wfb.VerdictRefused,
			map[string]wfb.Verdict{FieldCacheRead: wfb.VerdictRefused}, []string{"wire true, agent 1"}},
		{"disagree names both values",
			[]Record{anth(1, n(2000), n(300), n(1200), n(1000))}, Reported{n(2000), n(300), n(0), n(1000)}, wfb.VerdictDisagree,
			map[string]wfb.Verdict{FieldCacheRead: wfb.VerdictDisagree}, []string{"cache_read_input_tokens wire 1200, agent 0"}},
		{"agent refused its own usage",
			[]Record{anth(1, n(2000), n(300), n(1200), n(1000))}, Reported{}, wfb.VerdictDisagree,
			map[string]wfb.Verdict{FieldInput: wfb.VerdictDisagree, FieldOutput: wfb.VerdictDisagree, FieldCacheRead: wfb.VerdictDisagree, FieldCacheCreation: wfb.VerdictDisagree}, []string{"agent absent"}},
		{"only failures: agent's zeros are not measured",
			[]Record{failedRec(1, 529), failedRec(2, 529)}, Reported{n(0), n(0), n(0), n(0)}, wfb.VerdictRefused,
			map[string]wfb.Verdict{FieldInput: wfb.VerdictRefused, FieldOutput: wfb.VerdictRefused, FieldCacheRead: wfb.VerdictRefused, FieldCacheCreation: wfb.VerdictRefused},
			[]string{"no model request of the attempt was answered with usage (2 failed: requests 1, 2)"}},
		{"no request at all", nil, full, wfb.VerdictRefused,
			map[string]wfb.Verdict{FieldInput: wfb.VerdictRefused, FieldOutput: wfb.VerdictRefused, FieldCacheRead: wfb.VerdictRefused, FieldCacheCreation: wfb.VerdictRefused},
			[]string{"made no request"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := CrossCheck(tc.agent, Summarize(tc.recs))
			if c.Outcome != tc.outcome {
				t.Errorf("outcome %s, want %s (%s)", c.Outcome, tc.outcome, c)
			}
			got := map[string]wfb.Verdict{}
			for _, f := range c.Fields {
				if f.Outcome != wfb.VerdictAgree {
					got[f.Field] = f.Outcome
				}
			}
			want := tc.fields
			if want == nil {
				want = map[string]wfb.Verdict{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			for _, s := range tc.says {
				if !strings.Contains(c.String(), s) {
					t.Errorf("%q does not say %q", c, s)
				}
			}
		})
	}
}

// TestSummaryProvenance: each sum names the requests that carried it, a
// protocol that does not report a figure is not a failure to measure it,
// and an overflowing sum is not measured.
func TestSummaryProvenance(t *testing.T) {
	probe := Record{Seq: 1, Method: "HEAD", Status: 200}
	recs := []Record{probe, anth(2, n(10), n(1), n(0), n(0)), failedRec(3, 529), anth(4, n(20), n(2), n(5), n(0))}
	s := Summarize(recs)
	if s.Requests != 4 || !cmp.Equal(s.ModelRequests, []int{2, 3, 4}) || !cmp.Equal(s.Billed, []int{2, 4}) || !cmp.Equal(s.Failed, []int{3}) {
		t.Errorf("counts %+v", s)
	}
	if s.Input.Value == nil || *s.Input.Value != 30 || !cmp.Equal(s.Input.From, []int{2, 4}) {
		t.Errorf("input %+v", s.Input)
	}
	if s.Reasoning.Value != nil || !s.Reasoning.NotReported {
		t.Errorf("reasoning %+v, want not reported", s.Reasoning)
	}
	c := CrossCheck(Reported{n(30), n(3), n(5), n(0)}, s)
	if c.Outcome != wfb.VerdictAgree {
		t.Errorf("cross-check %s", c)
	}
	huge := Summarize([]Record{anth(1, n(wfb.MaxCount), n(1), n(0), n(0)), anth(2, n(1), n(1), n(0), n(0))})
	if huge.Input.Value != nil || !strings.Contains(huge.Input.Why, "bound on a count (10^15) at request 2") {
		t.Errorf("overflow %+v", huge.Input)
	}
	// OpenAI reports no cache writes: not compared, not refused.
	oa := Record{Seq: 1, Protocol: ProtocolOpenAI, Status: 200, Billed: true, Usage: Usage{Semantics: wfb.SemanticsOpenAI,
		Input: Count{State: Present, Value: 1000}, Output: Count{State: Present, Value: 300}, CacheRead: Count{State: Present, Value: 200},
		CacheCreation: notReported("OpenAI Responses"), Reasoning: Count{State: Present, Value: 80}}}
	c = CrossCheck(Reported{Input: n(1000), Output: n(300), CacheRead: n(200)}, Summarize([]Record{oa}))
	if c.Outcome != wfb.VerdictAgree || c.Fields[3].Outcome != NotCompared {
		t.Errorf("openai cross-check %s %+v", c, c.Fields[3])
	}
}
