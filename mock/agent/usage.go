package agent

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"
	"sort"

	"github.com/wfbench/wfb"
)

// usageFields are the four usage fields of the Messages API, in their
// documented order. mock/provider lists the same names: they are the wire
// protocol both sides speak, and the agent depends on no provider code.
var usageFields = []string{
	"input_tokens",
	"output_tokens",
	"cache_read_input_tokens",
	"cache_creation_input_tokens",
}

// usageSum sums usage over a session's model replies, field by field,
// without ever inventing a value: a field no reply carried stays absent, and a
// value that is not a non-negative integer is forwarded as it was served,
// because refusing nonsense is the runner's job and it can only do that job
// if the nonsense reaches it.
type usageSum struct {
	fields map[string]*usageField
}

// usageField is one usage field across turns.
type usageField struct {
	sum *big.Int // sum of the non-negative integer values seen
	// nonsense is the raw text of the last value that was not a non-negative
	// integer; once set, it is what the field reports.
	nonsense json.RawMessage
}

func newUsageSum() *usageSum {
	return &usageSum{fields: map[string]*usageField{}}
}

// add folds one reply's usage into the session's. A JSON null is treated as
// "not reported" (the Messages API uses null that way in message_delta).
func (u *usageSum) add(turn map[string]json.RawMessage) {
	for key, raw := range turn {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		f := u.fields[key]
		if f == nil {
			f = &usageField{sum: new(big.Int)}
			u.fields[key] = f
		}
		if n, err := wfb.ParseBigCount(raw); err == nil {
			f.sum.Add(f.sum, n)
			continue
		}
		// Compact, so that an object served across lines cannot break a
		// stream-json line.
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			continue // not JSON: cannot come out of a decoded object
		}
		f.nonsense = c.Bytes()
	}
}

// keys lists the fields present: the four standard usage fields first, in
// their documented order, then any others sorted by name.
func (u *usageSum) keys() []string {
	var keys []string
	for _, k := range usageFields {
		if _, ok := u.fields[k]; ok {
			keys = append(keys, k)
		}
	}
	var extra []string
	for k := range u.fields {
		if !slices.Contains(usageFields, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(keys, extra...)
}

// value returns the JSON a field reports: the exact integer sum, or the last
// nonsense value verbatim.
func (u *usageSum) value(key string) json.RawMessage {
	f := u.fields[key]
	if f.nonsense != nil {
		return f.nonsense
	}
	return json.RawMessage(f.sum.String())
}

// counts returns the four standard fields as integers, and false unless all
// four are present and non-negative integers: only then can a cost be stated.
func (u *usageSum) counts() (input, output, cacheRead, cacheWrite *big.Int, ok bool) {
	var n [4]*big.Int
	for i, k := range usageFields {
		f := u.fields[k]
		if f == nil || f.nonsense != nil {
			return nil, nil, nil, nil, false
		}
		n[i] = f.sum
	}
	return n[0], n[1], n[2], n[3], true
}

// MarshalJSON writes the usage object with its keys in the order of keys.
func (u *usageSum) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range u.keys() {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(u.value(k))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
