package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAgentUsageSumsExactlyAndNeverInventsAField stops the stand-in's old
// bugs: absent cache fields defaulted to 0 (a fabricated, complete-looking
// measurement) and nonsense values cleaned up before the runner could refuse
// them.
func TestAgentUsageSumsExactlyAndNeverInventsAField(t *testing.T) {
	tests := []struct {
		name      string
		turns     []string
		want      string
		wantPrice bool
	}{
		{
			name:      "one full turn",
			turns:     []string{`{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}`},
			want:      `{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":7000,"cache_creation_input_tokens":1000}`,
			wantPrice: true,
		},
		{
			name: "summed over turns",
			turns: []string{
				`{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":5}`,
				`{"input_tokens":20,"output_tokens":2,"cache_read_input_tokens":7,"cache_creation_input_tokens":0}`,
			},
			want:      `{"input_tokens":30,"output_tokens":3,"cache_read_input_tokens":7,"cache_creation_input_tokens":5}`,
			wantPrice: true,
		},
		{
			name:  "absent field stays absent",
			turns: []string{`{"input_tokens":2000,"output_tokens":300,"cache_creation_input_tokens":1000}`},
			want:  `{"input_tokens":2000,"output_tokens":300,"cache_creation_input_tokens":1000}`,
		},
		{
			name:  "null is not a value",
			turns: []string{`{"input_tokens":2000,"output_tokens":300,"cache_read_input_tokens":null}`},
			want:  `{"input_tokens":2000,"output_tokens":300}`,
		},
		{
			name:  "field present in one turn only is that turn's value",
			turns: []string{`{"input_tokens":1}`, `{"input_tokens":2,"cache_read_input_tokens":9}`},
			want:  `{"input_tokens":3,"cache_read_input_tokens":9}`,
		},
		{name: "negative forwarded", turns: []string{`{"cache_read_input_tokens":-5}`}, want: `{"cache_read_input_tokens":-5}`},
		{name: "bool forwarded", turns: []string{`{"cache_read_input_tokens":true}`}, want: `{"cache_read_input_tokens":true}`},
		{name: "string forwarded", turns: []string{`{"cache_read_input_tokens":"1200"}`}, want: `{"cache_read_input_tokens":"1200"}`},
		{name: "float forwarded", turns: []string{`{"cache_read_input_tokens":1.5}`}, want: `{"cache_read_input_tokens":1.5}`},
		{name: "exponent is not an integer literal", turns: []string{`{"input_tokens":2e3}`}, want: `{"input_tokens":2e3}`},
		{
			name:  "nonsense in one turn is not summed away",
			turns: []string{`{"cache_read_input_tokens":-5}`, `{"cache_read_input_tokens":10}`},
			want:  `{"cache_read_input_tokens":-5}`,
		},
		{
			name:  "last nonsense wins",
			turns: []string{`{"cache_read_input_tokens":"1200"}`, `{"cache_read_input_tokens":true}`, `{"cache_read_input_tokens":3}`},
			want:  `{"cache_read_input_tokens":true}`,
		},
		{
			name:  "huge sum is exact",
			turns: []string{`{"input_tokens":9223372036854775807}`, `{"input_tokens":9223372036854775807}`},
			want:  `{"input_tokens":18446744073709551614}`,
		},
		{
			name:  "other fields forwarded after the four, object compacted",
			turns: []string{`{"service_tier":"standard","input_tokens":1,"server_tool_use":{ "web_search_requests" : 0 }}`},
			want:  `{"input_tokens":1,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"}`,
		},
		{name: "no usage at all", turns: nil, want: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newUsageSum()
			for _, turn := range tt.turns {
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(turn), &m); err != nil {
					t.Fatal(err)
				}
				u.add(m)
			}
			got, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if _, _, _, _, ok := u.counts(); ok != tt.wantPrice {
				t.Errorf("priceable = %v, want %v", ok, tt.wantPrice)
			}
		})
	}
}
