package meterstore

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/agent"
	"github.com/wfbench/wfb/meter"
)

// wireCost sums the cost of the attempt's billed model requests, each at
// the price of the model its response names (else the one it asked for).
// It returns nil and why when any of them cannot be priced.
func wireCost(recs []meter.Record) (*float64, string) {
	total := new(big.Int)
	billed := 0
	for _, r := range recs {
		if r.Protocol == "" || !r.Billed {
			continue
		}
		billed++
		c, why := requestCost(r)
		if why != "" {
			return nil, fmt.Sprintf("request %d (%s %s): %s", r.Seq, r.Method, r.Path, why)
		}
		total.Add(total, c)
	}
	if billed == 0 {
		return nil, "no request was billed"
	}
	cost := wfb.DollarsOfPico(total)
	return &cost, ""
}

// requestCost prices one billed request, in 10⁻¹² dollars.
func requestCost(r meter.Record) (*big.Int, string) {
	model := r.ResponseModel
	if model == "" {
		model = r.RequestedModel
	}
	p, ok := agent.PriceFor(model)
	if !ok {
		return nil, fmt.Sprintf("no price for model %q in wfb's price table (version %s)", model, agent.PriceTableVersion)
	}
	if len(r.Surcharges) > 0 {
		return nil, "the response names charges beyond its tokens at standard rates, which wfb's price table does not price: " + strings.Join(r.Surcharges, ", ")
	}
	var input, output, cacheRead, cacheWrite int64
	for _, f := range []struct {
		c meter.Count
		n *int64
	}{{r.Usage.Input, &input}, {r.Usage.CacheRead, &cacheRead}, {r.Usage.CacheCreation, &cacheWrite}, {r.Usage.Output, &output}} {
		switch {
		case f.c.State == meter.Present:
			*f.n = f.c.Value
		case f.c.State == meter.NotReported && f.n == &cacheWrite && p.CacheWrite == 0:
			// OpenAI bills no cache writes: they are input.
		default:
			return nil, fmt.Sprintf("%s is %s", f.c.Native, f.c.State)
		}
	}
	if prompt := input + cacheRead + cacheWrite; p.LongPromptOver > 0 && prompt > p.LongPromptOver {
		return nil, fmt.Sprintf("its prompt of %d tokens is billed at %s's long-context rate, which wfb's price table does not hold", prompt, model)
	}
	return p.Pico(big.NewInt(input), big.NewInt(output), big.NewInt(cacheRead), big.NewInt(cacheWrite)), ""
}
