package agent

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/wfbench/wfb"
)

// TestEveryPriceSaysWhereAndWhenItWasRead stops a price from entering the
// table without its source and date, or with a bucket left at a guessed
// zero: an Anthropic row bills all four buckets, an OpenAI row no cache
// writes.
func TestEveryPriceSaysWhereAndWhenItWasRead(t *testing.T) {
	date := regexp.MustCompile(`^20[0-9]{2}-[01][0-9](-[0-3][0-9])?$`)
	for model, p := range Prices {
		if u, err := url.Parse(p.Source); err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: source %q is not a vendor's page", model, p.Source)
		}
		if !date.MatchString(p.Read) {
			t.Errorf("%s: read %q is not a date", model, p.Read)
		}
		if p.Input <= 0 || p.Output <= 0 || p.CacheRead <= 0 {
			t.Errorf("%s: %+v has a bucket without a price", model, p)
		}
		if (p.Source == AnthropicPricingURL) != (p.CacheWrite > 0) {
			t.Errorf("%s: cache write %v from %s", model, p.CacheWrite, p.Source)
		}
	}
	if !date.MatchString(PriceTableVersion) {
		t.Errorf("table version %q", PriceTableVersion)
	}
}

// TestACostIsTheNearestFloatToTheExactSum stops float rounding from
// making two equal costs differ (the cost check compares them): the sum is
// exact, then rounded once.
func TestACostIsTheNearestFloatToTheExactSum(t *testing.T) {
	sonnet, _ := PriceFor("claude-sonnet-4-5")
	for _, c := range []struct {
		p                  wfb.Price
		in, read, write, o int64
		want               float64
	}{
		// 1200×3 + 4000×0.30 + 500×3.75 + 30×15 = 7125 micro-dollars.
		{sonnet, 1200, 4000, 500, 30, 0.007125},
		// 0.1 + 0.2 is not 0.3 in floats; 100000×1 + 2000000×0.10 is.
		{Prices["claude-haiku-4-5"], 100_000, 2_000_000, 0, 0, 0.3},
		{Prices["gpt-5-nano"], 7, 0, 0, 3, 0.00000155},
		// Added as floats: 0.00046889999999999996.
		{sonnet, 1, 53, 0, 30, 0.0004689},
	} {
		if got := c.p.Cost(c.in, c.o, c.read, c.write); got != c.want {
			t.Errorf("cost of %d/%d/%d/%d at %+v = %v, want %v", c.in, c.read, c.write, c.o, c.p, got, c.want)
		}
	}
}
