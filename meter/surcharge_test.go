package meter

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChargesBeyondTheTokensAreNamed stops a request billed above its
// token counts at standard rates — 1-hour cache writes, web searches,
// another service tier — from passing as one a table of token prices can
// price; zeros and the standard tier are no surcharge.
func TestChargesBeyondTheTokensAreNamed(t *testing.T) {
	extra := `{"input_tokens":20,"output_tokens":3,"cache_read_input_tokens":0,"cache_creation_input_tokens":1000,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":1000},` +
		`"server_tool_use":{"web_search_requests":2,"web_fetch_requests":0},"service_tier":"priority"}`
	plain := `{"input_tokens":20,"output_tokens":3,"cache_read_input_tokens":0,"cache_creation_input_tokens":1000,` +
		`"cache_creation":{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":0},"server_tool_use":{"web_search_requests":0},"service_tier":"standard"}`
	responses := func(tier string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, strings.Replace(responsesObject("completed", responsesUsage("1200", "200", "300", "0")), `"status"`, `"service_tier":"`+tier+`","status"`, 1))
		}
	}
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		path    string
		want    []string
	}{
		{"anthropic", messagesSSE(extra, `{"output_tokens":3}`), "/v1/messages", []string{
			"usage.cache_creation.ephemeral_1h_input_tokens 1000 (1-hour cache writes)",
			"usage.server_tool_use.web_search_requests 2",
			`usage.service_tier "priority"`,
		}},
		{"anthropic standard", messagesSSE(plain, `{"output_tokens":3}`), "/v1/messages", nil},
		{"openai flex", responses("flex"), "/v1/responses", []string{`service_tier "flex"`}},
		{"openai default", responses("default"), "/v1/responses", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startProxy(t, newUpstream(t, c.handler).URL, Options{})
			a := begin(t, p, "att-1")
			post(t, a.BaseURL()+c.path, `{"model":"m","stream":true}`)
			r := end(t, a).Records[0]
			if !r.Billed {
				t.Fatalf("not billed: %+v", r)
			}
			if diff := cmp.Diff(c.want, r.Surcharges); diff != "" {
				t.Errorf("surcharges (-want +got):\n%s", diff)
			}
		})
	}
}
