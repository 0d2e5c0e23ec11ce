package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
)

// jsonValue encodes one cell as JSON, the one encoder behind every JSON
// wfb writes from a results file (Render's json, Export's jsonl):
//
//   - nil, and a float that is not finite (JSON cannot hold NaN or ±Inf),
//     is null;
//   - a float is its decimal (see decimal): the shortest of at most 15
//     significant digits, spelled as encoding/json spells a float: plain
//     digits, or an exponent below 1e-6 and from 1e21 up (10.18 for
//     10.180000000000001, 1234567, 1e-7, 1e+21);
//   - int64, int and bool are themselves;
//   - []byte (a BLOB) is a base64 string, as encoding/json writes bytes:
//     as text its bytes need not be UTF-8, and the encoder would replace
//     them, losing what was stored;
//   - a string is itself, invalid UTF-8 replaced by U+FFFD, with <, > and
//     & kept readable (the output is data, not HTML) and every control and
//     bidirectional override a \u escape (jsonShowControls), so JSON
//     printed to a terminal cannot drive it;
//   - anything else is its text (asString) as a string.
func jsonValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return []byte("null"), nil
	case float64:
		return jsonFloat(x), nil
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case int:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case bool:
		return strconv.AppendBool(nil, x), nil
	case []byte:
		return jsonString(base64.StdEncoding.EncodeToString(x))
	case string:
		return jsonString(x)
	case Items:
		return jsonItems(x)
	}
	return jsonString(asString(v))
}

// decimal is f rounded to 15 significant digits, the decimal precision a
// float64 holds exactly: every decimal of up to 15 digits reads into a
// float and prints back as itself, so what the 16th and 17th digits add is
// the error of arithmetic on decimal inputs, not a measurement. A cell's
// cost is a sum over its attempts, a total a sum over cells, and 0.1 + 0.2
// is 0.30000000000000004: printed from decimal, 0.3, and 10.18 where a sum
// of costs or seconds landed on 10.180000000000001. One rule serves every
// column: a cost keeps better than 1e-9 USD below a million dollars,
// seconds better than a microsecond below 30 years, a ratio or p-value
// 15 digits; and a number people or programs read twice is spelled once.
// The value read back differs from the float computed by at most 5 parts
// in 1e15.
func decimal(f float64) float64 {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return f // -0 keeps its sign
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		return f // unreachable: 'g' output parses
	}
	return r
}

// jsonFloat is f's decimal as encoding/json writes a float64 (null where
// it refuses one): 'f' formatting, shortest, unless the exponent is below
// -6 or at least 21, and then 'e' with a two-digit negative exponent cut
// to one.
func jsonFloat(f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null")
	}
	f = decimal(f)
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// jsonString encodes s as a JSON string without HTML escaping, its
// controls shown (see jsonValue).
func jsonString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return jsonShowControls(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// jsonItems encodes a list of records as an array of objects keyed by
// its Keys, each value as jsonValue encodes a cell.
func jsonItems(it Items) ([]byte, error) {
	b := []byte{'['}
	for i, row := range it.Rows {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '{')
		for j, v := range row {
			if j > 0 {
				b = append(b, ", "...)
			}
			k, err := jsonString(it.Keys[j])
			if err != nil {
				return nil, err
			}
			val, err := jsonValue(v)
			if err != nil {
				return nil, err
			}
			b = append(append(append(b, k...), ": "...), val...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
