package meter

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// wantCount is what a test expects of one figure: its state, its value
// when present, its raw text when nonsense.
type wantCount struct {
	State CountState
	Value int64
	Raw   string
}

func gotCount(c Count) wantCount { return wantCount{c.State, c.Value, c.Raw} }

func present(n int64) wantCount { return wantCount{State: Present, Value: n} }

var absent = wantCount{State: Absent}

func nonsense(raw string) wantCount { return wantCount{State: Nonsense, Raw: raw} }

var notReportedCount = wantCount{State: NotReported}

// gotUsage lists a usage's figures in Usage.Fields order.
func gotUsage(u Usage) []wantCount {
	var out []wantCount
	for _, f := range u.Fields() {
		out = append(out, gotCount(*f.Count))
	}
	return out
}

// TestAnthropicUsageIsReadNativeNeverCoerced stops the meter from doing
// what the real Claude Code CLI does to the provider's usage: a missing
// cache field must stay absent (not 0), and -5, true, "1200", 1.5 and an
// overflow must be kept as written and flagged (not 0, 1, 1200, 1 or
// clamped). Each case runs as a JSON reply and as an SSE stream.
func TestAnthropicUsageIsReadNativeNeverCoerced(t *testing.T) {
	cases := []struct {
		name  string
		usage string
		want  []wantCount // input, output, cache read, cache creation, reasoning
	}{
		{"complete", usageFull, []wantCount{present(2000), present(300), present(7000), present(1000), notReportedCount}},
		{"measured zeros", `{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}`,
			[]wantCount{present(0), present(0), present(0), present(0), notReportedCount}},
		{"missing cache read", `{"input_tokens":2000,"output_tokens":300,"cache_creation_input_tokens":1000}`,
			[]wantCount{present(2000), present(300), absent, present(1000), notReportedCount}},
		{"null cache read", `{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":null,"cache_creation_input_tokens":1000}`,
			[]wantCount{present(2000), present(300), absent, present(1000), notReportedCount}},
		{"negative", `{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":-5,"cache_creation_input_tokens":1000}`,
			[]wantCount{present(2000), present(300), nonsense("-5"), present(1000), notReportedCount}},
		{"bool", `{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":true,"cache_creation_input_tokens":1000}`,
			[]wantCount{present(2000), present(300), nonsense("true"), present(1000), notReportedCount}},
		{"string", `{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":"1200","cache_creation_input_tokens":1000}`,
			[]wantCount{present(2000), present(300), nonsense(`"1200"`), present(1000), notReportedCount}},
		{"float", `{"input_tokens":1.5,"output_tokens":300,"cache_read_input_tokens":0,"cache_creation_input_tokens":1000}`,
			[]wantCount{nonsense("1.5"), present(300), present(0), present(1000), notReportedCount}},
		{"whole float", `{"input_tokens":2000.0,"output_tokens":300,"cache_read_input_tokens":0,"cache_creation_input_tokens":1000}`,
			[]wantCount{nonsense("2000.0"), present(300), present(0), present(1000), notReportedCount}},
		{"overflow", `{"input_tokens":99999999999999999999,"output_tokens":300,"cache_read_input_tokens":0,"cache_creation_input_tokens":1000}`,
			[]wantCount{nonsense("99999999999999999999"), present(300), present(0), present(1000), notReportedCount}},
		{"no usage at all", `null`, []wantCount{absent, absent, absent, absent, notReportedCount}},
	}
	for _, tc := range cases {
		for _, mode := range []string{"json", "sse"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				h := messagesJSON(tc.usage)
				if mode == "sse" {
					h = messagesSSE(startOf(tc.usage), tc.usage)
				}
				up := newUpstream(t, h)
				p := startProxy(t, up.URL, Options{})
				a := begin(t, p, "att-1")
				status, _ := post(t, a.BaseURL()+"/v1/messages?beta=true", `{"model":"claude-asked","stream":`+map[string]string{"json": "false", "sse": "true"}[mode]+`,"messages":[]}`)
				log := end(t, a)
				if status != 200 || len(log.Records) != 1 {
					t.Fatalf("status %d, %d records", status, len(log.Records))
				}
				r := log.Records[0]
				if diff := cmp.Diff(tc.want, gotUsage(r.Usage)); diff != "" {
					t.Errorf("usage (-want +got):\n%s", diff)
				}
				if !r.Billed || r.Protocol != ProtocolAnthropic || r.Usage.Semantics != wfb.SemanticsAnthropic {
					t.Errorf("billed %v protocol %q semantics %q", r.Billed, r.Protocol, r.Usage.Semantics)
				}
				if r.RequestedModel != "claude-asked" || r.ResponseModel != "claude-served" || r.Streamed != (mode == "sse") {
					t.Errorf("models %q/%q streamed %v", r.RequestedModel, r.ResponseModel, r.Streamed)
				}
				for _, f := range r.Usage.Fields() {
					if f.Count.State == Nonsense && !strings.Contains(f.Count.Why, f.Count.Raw) {
						t.Errorf("%s: the reason %q does not show the wire's value %s", f.Name, f.Count.Why, f.Count.Raw)
					}
				}
			})
		}
	}
}

// TestOpenAIUsageCachedIsASubsetOfInput stops OpenAI's cached tokens from
// being counted twice: they are part of input_tokens, so wfb's (uncached)
// input is their difference. Cached above input is nonsense, not a
// negative count.
func TestOpenAIUsageCachedIsASubsetOfInput(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		billed  bool
		errType string
		want    []wantCount
	}{
		{"json completed", responsesJSON("completed", responsesUsage("1200", "200", "300", "80")), true, "",
			[]wantCount{present(1000), present(300), present(200), notReportedCount, present(80)}},
		{"sse completed", responsesSSE("response.completed", "completed", responsesUsage("1200", "200", "300", "80")), true, "",
			[]wantCount{present(1000), present(300), present(200), notReportedCount, present(80)}},
		{"sse incomplete is billed", responsesSSE("response.incomplete", "incomplete", responsesUsage("1200", "0", "300", "0")), true, "",
			[]wantCount{present(1200), present(300), present(0), notReportedCount, present(0)}},
		{"cached exceeds input", responsesJSON("completed", responsesUsage("100", "200", "300", "0")), true, "",
			[]wantCount{nonsense("100 - 200"), present(300), present(200), notReportedCount, present(0)}},
		{"cached missing", responsesJSON("completed", `{"input_tokens":1200,"output_tokens":300,"output_tokens_details":{"reasoning_tokens":0}}`), true, "",
			[]wantCount{absent, present(300), absent, notReportedCount, present(0)}},
		{"cached negative", responsesJSON("completed", responsesUsage("1200", "-5", "300", "0")), true, "",
			[]wantCount{nonsense("-5"), present(300), nonsense("-5"), notReportedCount, present(0)}},
		{"reasoning exceeds output", responsesJSON("completed", responsesUsage("1200", "0", "30", "80")), true, "",
			[]wantCount{present(1200), present(30), present(0), notReportedCount, nonsense("80")}},
		{"usage missing", responsesJSON("completed", ""), true, "",
			[]wantCount{absent, absent, absent, notReportedCount, absent}},
		{"sse failed without usage", responsesSSE("response.failed", "failed", ""), false, "response.failed",
			[]wantCount{absent, absent, absent, notReportedCount, absent}},
		{"error status", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(529)
			w.Write([]byte(`{"error":{"type":"server_error","message":"Overloaded","param":null,"code":null}}`))
		}, false, "server_error", []wantCount{absent, absent, absent, notReportedCount, absent}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, tc.handler)
			p := startProxy(t, up.URL, Options{})
			a := begin(t, p, "att-1")
			post(t, a.BaseURL()+"/v1/responses", `{"model":"gpt-asked","stream":true,"input":[]}`)
			log := end(t, a)
			r := log.Records[0]
			if diff := cmp.Diff(tc.want, gotUsage(r.Usage)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if r.Billed != tc.billed || r.ErrorType != tc.errType || r.Protocol != ProtocolOpenAI {
				t.Errorf("billed %v error type %q protocol %q, want %v %q", r.Billed, r.ErrorType, r.Protocol, tc.billed, tc.errType)
			}
		})
	}
}

// TestGeminiUsageArithmetic checks the third protocol's seam: prompt
// includes cached, thoughts are output, and proto3's omitted zeros.
func TestGeminiUsageArithmetic(t *testing.T) {
	cases := []struct {
		name, usage string
		want        []wantCount
	}{
		{"full", `{"promptTokenCount":1200,"cachedContentTokenCount":200,"candidatesTokenCount":300,"thoughtsTokenCount":80,"totalTokenCount":1580}`,
			[]wantCount{present(1000), present(380), present(200), notReportedCount, present(80)}},
		{"zeros omitted", `{"promptTokenCount":1200,"totalTokenCount":1200}`,
			[]wantCount{present(1200), present(0), present(0), notReportedCount, present(0)}},
		{"prompt missing", `{"candidatesTokenCount":3}`,
			[]wantCount{absent, present(3), present(0), notReportedCount, present(0)}},
		{"prompt a string", `{"promptTokenCount":"12","candidatesTokenCount":3}`,
			[]wantCount{nonsense(`"12"`), present(3), present(0), notReportedCount, present(0)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, geminiSSE(tc.usage))
			p := startProxy(t, up.URL, Options{})
			a := begin(t, p, "att-1")
			post(t, a.BaseURL()+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[]}`)
			r := end(t, a).Records[0]
			if diff := cmp.Diff(tc.want, gotUsage(r.Usage)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if !r.Billed || r.Protocol != ProtocolGemini || r.RequestedModel != "gemini-2.5-pro" || r.ResponseModel != "gemini-served" || !r.Streamed {
				t.Errorf("record %+v", r)
			}
		})
	}
}
