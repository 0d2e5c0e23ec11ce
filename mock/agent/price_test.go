package agent

import "testing"

// TestPriceIsExactForTheSeedUsage stops a cost that is "about" 0.42: the
// seed asserts record["cost_usd"] == 0.42 exactly, which summing the four
// float products per token does not give (it is 0.42000000000000004).
func TestPriceIsExactForTheSeedUsage(t *testing.T) {
	tests := []struct {
		name                    string
		model                   string
		in, out, cacheR, cacheW int64
		want                    float64
	}{
		{"seed usage", "stand-in", 2000, 300, 7000, 1000, 0.42},
		{"unknown model priced like stand-in", "claude-sonnet-9", 2000, 300, 7000, 1000, 0.42},
		{"measured zero costs zero", "stand-in", 0, 0, 0, 0, 0},
		{"one million input tokens", "stand-in", 1_000_000, 0, 0, 0, 100},
		{"one token of each", "stand-in", 1, 1, 1, 1, 0.000540},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PriceFor(tt.model).Cost(tt.in, tt.out, tt.cacheR, tt.cacheW)
			if got != tt.want {
				t.Errorf("Cost(%d, %d, %d, %d) = %v, want exactly %v", tt.in, tt.out, tt.cacheR, tt.cacheW, got, tt.want)
			}
		})
	}
}
