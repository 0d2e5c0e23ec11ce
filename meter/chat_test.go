package meter

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wfbench/wfb"
)

// The fake upstream below answers Chat Completions the way OpenAI-compatible
// servers do, including the shapes wfb's mock does not serve: vLLM's and
// Ollama's usage without prompt_tokens_details, details without
// cached_tokens, vLLM's top-level error body, numeric error codes, a
// mid-stream error chunk.

// chatRequest is a request body as the openai SDKs send one; usage asks
// for stream_options.include_usage.
func chatRequest(stream, usage bool) string {
	opts := ""
	if usage {
		opts = `,"stream_options":{"include_usage":true}`
	}
	return fmt.Sprintf(`{"model":"gpt-asked","messages":[{"role":"user","content":"hi"}],"stream":%v%s}`, stream, opts)
}

// chatJSON answers with a chat.completion whose usage is usage ("": none).
func chatJSON(usage string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := ""
		if usage != "" {
			u = `,"usage":` + usage
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-served","choices":[{"index":0,"message":{"role":"assistant","content":"ok","refusal":null},"logprobs":null,"finish_reason":"stop"}]`+u+`}`)
	}
}

// chatSSE streams a reply: two content chunks (with "usage": null when
// usage is set), the finish chunk, a usage chunk with empty choices when
// usage is not "", then [DONE] unless cut.
func chatSSE(usage string, nulls, cut bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		null := ""
		if nulls {
			null = `,"usage":null`
		}
		chunk := func(choices string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-served\",\"service_tier\":\"default\",\"choices\":%s%s}\n\n", choices, null)
			w.(http.Flusher).Flush()
		}
		chunk(`[{"index":0,"delta":{"role":"assistant","content":"o"},"finish_reason":null}]`)
		chunk(`[{"index":0,"delta":{"content":"k"},"finish_reason":null}]`)
		if cut {
			panic(http.ErrAbortHandler)
		}
		chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`)
		if usage != "" {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-served\",\"choices\":[],\"usage\":%s}\n\n", usage)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// chatUsage is a usage object with both details objects.
func chatUsage(prompt, cached, completion, reasoning string) string {
	return `{"prompt_tokens":` + prompt + `,"completion_tokens":` + completion + `,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":` + cached + `,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":` + reasoning + `,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
}

// TestChatUsageIsReadWithOpenAIsArithmeticAndOmissionsStayAbsent stops
// the meter from counting Chat Completions' cached tokens twice (they are
// part of prompt_tokens, as in the Responses API), from zero-filling what
// an OpenAI-compatible server leaves out (vLLM and Ollama send no
// prompt_tokens_details; a stream that did not ask for usage has none),
// and from coercing nonsense.
func TestChatUsageIsReadWithOpenAIsArithmeticAndOmissionsStayAbsent(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		stream  bool
		usage   bool // the request asks for usage in the stream
		want    []wantCount
		why     string // in the usage's problems
	}{
		{"json", chatJSON(chatUsage("1200", "200", "300", "80")), false, false,
			[]wantCount{present(1000), present(300), present(200), notReportedCount, present(80)}, ""},
		{"stream with include_usage", chatSSE(chatUsage("1200", "200", "300", "80"), true, false), true, true,
			[]wantCount{present(1000), present(300), present(200), notReportedCount, present(80)}, ""},
		{"measured zeros", chatJSON(chatUsage("0", "0", "0", "0")), false, false,
			[]wantCount{present(0), present(0), present(0), notReportedCount, present(0)}, ""},
		{"no details (vLLM, Ollama)", chatJSON(`{"prompt_tokens":1200,"completion_tokens":300,"total_tokens":1500}`), false, false,
			[]wantCount{absent, present(300), absent, notReportedCount, absent}, "usage.prompt_tokens_details is missing"},
		{"details null", chatJSON(`{"prompt_tokens":1200,"completion_tokens":300,"prompt_tokens_details":null,"completion_tokens_details":null}`), false, false,
			[]wantCount{absent, present(300), absent, notReportedCount, absent}, "usage.prompt_tokens_details is null"},
		{"details without cached_tokens", chatJSON(`{"prompt_tokens":1200,"completion_tokens":300,"prompt_tokens_details":{"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`), false, false,
			[]wantCount{absent, present(300), absent, notReportedCount, present(0)}, "usage.prompt_tokens_details.cached_tokens is missing"},
		{"no usage in the response", chatJSON(""), false, false,
			[]wantCount{absent, absent, absent, notReportedCount, absent}, "usage is missing from the response"},
		{"stream without include_usage", chatSSE("", false, false), true, false,
			[]wantCount{absent, absent, absent, notReportedCount, absent}, "the request did not set stream_options.include_usage"},
		{"stream asked but sent none", chatSSE("", true, false), true, true,
			[]wantCount{absent, absent, absent, notReportedCount, absent}, "though the request set stream_options.include_usage"},
		{"cached exceeds prompt", chatJSON(chatUsage("100", "200", "300", "0")), false, false,
			[]wantCount{nonsense("100 - 200"), present(300), present(200), notReportedCount, present(0)}, "exceeds"},
		{"cached negative", chatSSE(chatUsage("1200", "-5", "300", "0"), true, false), true, true,
			[]wantCount{nonsense("-5"), present(300), nonsense("-5"), notReportedCount, present(0)}, "negative"},
		{"prompt a string", chatJSON(chatUsage(`"1200"`, "0", "300", "0")), false, false,
			[]wantCount{nonsense(`"1200"`), present(300), present(0), notReportedCount, present(0)}, "usage.prompt_tokens"},
		{"completion a bool", chatJSON(chatUsage("1200", "0", "true", "0")), false, false,
			[]wantCount{present(1200), nonsense("true"), present(0), notReportedCount, present(0)}, "usage.completion_tokens"},
		{"reasoning exceeds completion", chatJSON(chatUsage("1200", "0", "30", "80")), false, false,
			[]wantCount{present(1200), present(30), present(0), notReportedCount, nonsense("80")}, "exceeds usage.completion_tokens"},
		{"usage not an object", chatJSON(`7`), false, false,
			[]wantCount{nonsense("7"), nonsense("7"), nonsense("7"), notReportedCount, nonsense("7")}, "usage is not an object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, tc.handler)
			p := startProxy(t, up.URL, Options{})
			a := begin(t, p, "att-1")
			if status, _ := post(t, a.BaseURL()+"/v1/chat/completions", chatRequest(tc.stream, tc.usage)); status != 200 {
				t.Fatalf("status %d", status)
			}
			r := end(t, a).Records[0]
			if diff := cmp.Diff(tc.want, gotUsage(r.Usage)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if !r.Billed || r.Protocol != ProtocolOpenAIChat || r.Usage.Semantics != wfb.SemanticsOpenAI || r.Streamed != tc.stream {
				t.Errorf("billed %v protocol %q semantics %q streamed %v", r.Billed, r.Protocol, r.Usage.Semantics, r.Streamed)
			}
			if r.RequestedModel != "gpt-asked" || r.ResponseModel != "gpt-served" {
				t.Errorf("models %q/%q", r.RequestedModel, r.ResponseModel)
			}
			if problems := strings.Join(r.Usage.Problems(), "; "); !strings.Contains(problems, tc.why) || (tc.why == "") != (problems == "") {
				t.Errorf("problems %q, want them to say %q", problems, tc.why)
			}
		})
	}
}

// TestChatErrorsAreFailedRequestsWithTheProvidersType stops a Chat
// Completions failure from counting as a billed answer or losing what the
// provider called it: an error status in OpenAI's shape (429, 500, 503,
// and a 529 as some gateways send it), vLLM's top-level error body with a
// numeric code, an error chunk inside a 200 stream, a stream cut before
// [DONE]; none is billed, each keeps its error type, and a success after
// them is counted once.
func TestChatErrorsAreFailedRequestsWithTheProvidersType(t *testing.T) {
	errorBody := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	cases := []struct {
		name      string
		handler   http.HandlerFunc
		status    int
		errType   string
		proxyErr  string
		detailHas string
	}{
		{"429", errorBody(429, `{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","param":null,"code":"rate_limit_exceeded"}}`), 429, "requests", "", "Rate limit reached"},
		{"500", errorBody(500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`), 500, "server_error", "", "server had an error"},
		{"503 overloaded", errorBody(503, `{"error":{"message":"The engine is currently overloaded","type":"server_error","param":null,"code":null}}`), 503, "server_error", "", "overloaded"},
		{"529", errorBody(529, `{"error":{"message":"Overloaded","type":null,"param":null,"code":"overloaded"}}`), 529, "overloaded", "", "Overloaded"},
		{"vllm top-level error", errorBody(400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`), 400, "BadRequestError", "", "max_tokens"},
		{"numeric code only", errorBody(503, `{"error":{"message":"busy","code":503}}`), 503, "503", "", "busy"},
		{"error chunk in a 200 stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-served","choices":[{"index":0,"delta":{"content":"o"},"finish_reason":null}]}`+"\n\n")
			io.WriteString(w, `data: {"error":{"message":"upstream model failed","type":"server_error","code":null}}`+"\n\n")
		}, 200, "server_error", "", "upstream model failed"},
		{"stream cut before [DONE]", chatSSE(chatUsage("1", "0", "1", "0"), true, true), 200, "", ErrUpstreamCut, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, chatJSON(chatUsage("1200", "200", "300", "0")), tc.handler)
			p := startProxy(t, up.URL, Options{})
			a := begin(t, p, "att-1")
			body := chatRequest(true, true)
			req, _ := http.NewRequest(http.MethodPost, a.BaseURL()+"/v1/chat/completions", strings.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if (tc.proxyErr == ErrUpstreamCut) != (err != nil) {
				t.Errorf("reading the answer: %v; the agent must see a cut, and only a cut", err)
			}
			if status, _ := post(t, a.BaseURL()+"/v1/chat/completions", body); status != 200 {
				t.Fatalf("the retry answered %d", status)
			}
			log := end(t, a)
			failed, ok := log.Records[0], log.Records[1]
			if failed.Billed || failed.Status != tc.status || failed.ErrorType != tc.errType || failed.ProxyError != tc.proxyErr ||
				!strings.Contains(failed.ErrorDetail, tc.detailHas) || failed.Protocol != ProtocolOpenAIChat {
				t.Errorf("the failure: billed %v status %d error type %q proxy error %q detail %q",
					failed.Billed, failed.Status, failed.ErrorType, failed.ProxyError, failed.ErrorDetail)
			}
			if !ok.Billed || ok.RetryOf != 1 || !cmp.Equal(log.Summary.Billed, []int{2}) || !cmp.Equal(log.Summary.Failed, []int{1}) {
				t.Errorf("the success: billed %v retry of %d; summary billed %v failed %v", ok.Billed, ok.RetryOf, log.Summary.Billed, log.Summary.Failed)
			}
			if in := log.Summary.Input.Value; in == nil || *in != 1000 {
				t.Errorf("summed input %v, want 1000 (the success once)", in)
			}
		})
	}
}

// TestChatIsMeteredUnderAnyBaseURLAndItsTierIsASurcharge stops the meter
// from missing Chat Completions requests made under a base URL without
// /v1 (the SDKs append /chat/completions to whatever they are given), and
// from pricing a request a service tier other than default billed.
func TestChatIsMeteredUnderAnyBaseURLAndItsTierIsASurcharge(t *testing.T) {
	flex := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"gpt-served","service_tier":"flex","choices":[],"usage":`+chatUsage("10", "0", "1", "0")+`}`)
	}
	up := newUpstream(t, chatJSON(chatUsage("10", "0", "1", "0")), flex)
	p := startProxy(t, up.URL, Options{})
	a := begin(t, p, "att-1")
	post(t, a.BaseURL()+"/chat/completions", chatRequest(false, false))
	post(t, a.BaseURL()+"/openai/v1/chat/completions/", chatRequest(false, false))
	log := end(t, a)
	for i, r := range log.Records {
		if r.Protocol != ProtocolOpenAIChat || !r.Billed {
			t.Errorf("request %d (%s): protocol %q billed %v", i+1, r.Path, r.Protocol, r.Billed)
		}
	}
	if got := log.Records[0].Surcharges; !cmp.Equal(got, []string{`service_tier "flex"`}) {
		t.Errorf("surcharges %q, want the flex tier", got)
	}
	if got := log.Records[1].Surcharges; got != nil {
		t.Errorf("surcharges %q for the default tier", got)
	}
	if got := pathsOf(up.received()); !cmp.Equal(got, []string{"/chat/completions", "/openai/v1/chat/completions/"}) {
		t.Errorf("upstream paths %q", got)
	}
}

func pathsOf(rs []received) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
}

// TestChatCrossCheckComparesInWfbsMeaning stops the cross-check from
// comparing an agent's figures with Chat Completions' native ones: the
// wire's input is prompt_tokens minus its cached_tokens, so an agent that
// reports the whole prompt as input disagrees, one that splits it agrees,
// and a server that sent no prompt_tokens_details leaves input and cache
// read unmeasured, which refuses the measurement whatever the agent said.
func TestChatCrossCheckComparesInWfbsMeaning(t *testing.T) {
	full := chatJSON(chatUsage("1200", "200", "300", "0"))
	bare := chatJSON(`{"prompt_tokens":1200,"completion_tokens":300,"total_tokens":1500}`)
	cases := []struct {
		name     string
		handler  http.HandlerFunc
		agent    Reported
		want     wfb.Verdict
		fieldsIn string
	}{
		{"split as wfb does", full, Reported{Input: ptr(int64(1000)), Output: ptr(int64(300)), CacheRead: ptr(int64(200))}, wfb.VerdictAgree, ""},
		{"the whole prompt as input", full, Reported{Input: ptr(int64(1200)), Output: ptr(int64(300)), CacheRead: ptr(int64(200))}, wfb.VerdictDisagree, "input_tokens wire 1000, agent 1200"},
		{"no details on the wire", bare, Reported{Input: ptr(int64(1200)), Output: ptr(int64(300)), CacheRead: ptr(int64(0))}, wfb.VerdictRefused, "usage.prompt_tokens_details is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t, tc.handler)
			p := startProxy(t, up.URL, Options{})
			a := begin(t, p, "att-1")
			post(t, a.BaseURL()+"/v1/chat/completions", chatRequest(false, false))
			c := CrossCheck(tc.agent, end(t, a).Summary)
			if c.Outcome != tc.want || !strings.Contains(c.String(), tc.fieldsIn) {
				t.Errorf("cross-check %s, want %s saying %q", c, tc.want, tc.fieldsIn)
			}
			for _, f := range c.Fields {
				if f.Field == FieldCacheCreation && f.Outcome != NotCompared {
					t.Errorf("cache writes: %s; Chat Completions reports none, so they are not compared", f.Outcome)
				}
			}
		})
	}
}
