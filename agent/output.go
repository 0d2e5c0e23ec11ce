package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// jsonLines reads an agent's JSON Lines stdout for its adapter's output,
// counting what no event parser can use — lines over the line limit
// (Process.MaxLine), lines that are not JSON — so that a refusal can say
// what the agent printed instead.
type jsonLines struct {
	lines        int
	nonJSON      int
	firstNonJSON string // where and what, clipped
	truncated    int
}

// decode counts one stdout line and decodes it into v when it is a JSON
// object. It returns the trimmed line, which aliases l, and false for a
// blank, truncated or non-JSON line.
func (j *jsonLines) decode(l []byte, truncated bool, v any) ([]byte, bool) {
	j.lines++
	l = bytes.TrimSpace(l)
	if len(l) == 0 {
		return nil, false
	}
	if truncated {
		j.truncated++
		return nil, false
	}
	if l[0] != '{' || json.Unmarshal(l, v) != nil {
		j.nonJSON++
		if j.firstNonJSON == "" {
			j.firstNonJSON = fmt.Sprintf("line %d: %q", j.lines, wfb.Clip(string(l), 120))
		}
		return nil, false
	}
	return l, true
}

// missing explains a stdout without the terminal event (named by event):
// how the process ended, how many lines it printed and what was wrong with
// them, then more, if any, inside the parentheses.
func (j *jsonLines) missing(event string, p Process, more ...string) string {
	detail := fmt.Sprintf("the agent printed no %s (%s, %d stdout lines", event, p.Exit, j.lines)
	if j.firstNonJSON != "" {
		detail += fmt.Sprintf(", %d not JSON, first %s", j.nonJSON, j.firstNonJSON)
	}
	if j.truncated > 0 {
		detail += fmt.Sprintf(", %d over the %s line limit", j.truncated, lineLimit(p.MaxLine))
	}
	for _, m := range more {
		detail += ", " + m
	}
	return detail + ")"
}

// failNonJSON records stdout lines that are not JSON, and lines over the
// line limit (which are never parsed), as a session error, whatever the
// terminal event said.
func (j *jsonLines) failNonJSON(row *store.Result, p Process) {
	if j.nonJSON > 0 {
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("%d stdout lines are not JSON (first %s)", j.nonJSON, j.firstNonJSON))
	}
	if j.truncated > 0 {
		row.AddFailure(wfb.KindSessionError, fmt.Sprintf("%d stdout lines exceed the %s line limit and were not parsed", j.truncated, lineLimit(p.MaxLine)))
	}
}

// lineLimit names the line limit for messages.
func lineLimit(max int) string { return fmt.Sprintf("%d MiB", max>>20) }

// evidenceBytes bounds the events kept as evidence of a refusal: the store
// keeps no more of a result event (store.MaxEvidenceBytes).
const evidenceBytes = store.MaxEvidenceBytes

// keptEvents keeps what the strict parse needs of one kind of event, in
// memory bounded whatever the agent prints: how many there were, the last
// one whole (a line is at most Process.MaxLine), and the head of all of them,
// one a line, as evidence when there were too many.
type keptEvents struct {
	n        int
	last     []byte
	evidence []byte
	clipped  bool
}

// add keeps one event; it does not retain l.
func (k *keptEvents) add(l []byte) {
	k.n++
	k.last = append(k.last[:0], l...)
	if k.n > 1 {
		k.evidence = k.appendEvidence(k.evidence, []byte{'\n'})
	}
	k.evidence = k.appendEvidence(k.evidence, l)
}

func (k *keptEvents) appendEvidence(dst, b []byte) []byte {
	room := evidenceBytes - len(dst)
	if len(b) > room {
		k.clipped = true
		b = b[:max(room, 0)]
	}
	return append(dst, b...)
}

// all is the kept head of every event, marked when it was cut.
func (k *keptEvents) all() string {
	if k.clipped {
		return string(k.evidence) + "\n[... cut at " + strconv.Itoa(evidenceBytes) + " bytes ...]"
	}
	return string(k.evidence)
}

// maxModels bounds the models one result event may name, each a row of
// model_usage and a line of a refusal: a session uses one to a few, and
// the list is the agent's, as long as a line holds.
const maxModels = 64

// tooManyModels refuses a per-model list (field) of n models.
func tooManyModels(field string, n int) string {
	return fmt.Sprintf("%s names %d models, more than the %d wfb records for one session", field, n, maxModels)
}

// boundedList keeps the first few messages of a kind and counts the rest.
type boundedList struct {
	items []string
	more  int
}

const boundedListMax = 20

func (b *boundedList) add(s string) {
	if len(b.items) < boundedListMax {
		b.items = append(b.items, s)
		return
	}
	b.more++
}

// join renders the list with sep, saying how many were left out.
func (b *boundedList) join(sep string) string {
	s := strings.Join(b.items, sep)
	if b.more > 0 {
		s += fmt.Sprintf("%s(%d more)", sep, b.more)
	}
	return s
}

// recordVersion records the CLI version the adapter probed, noting when
// the arm named a different one. An empty probe records nothing.
func recordVersion(row *store.Result, probed, named string) {
	if probed == "" {
		return
	}
	if named != "" && named != probed {
		row.AddDetail(fmt.Sprintf("the arm names agent version %s but the binary reports %s (recorded)", named, probed))
	}
	row.AgentVersion = probed
}

// parseCounts validates the usage counts named by fields. It returns them
// in fields order, or the reasons the measurement is refused, each naming
// its field after prefix (e.g. "usage.").
func parseCounts(usage map[string]json.RawMessage, prefix string, fields []string) ([]int64, []string) {
	vals := make([]int64, len(fields))
	var problems []string
	for i, f := range fields {
		raw, ok := usage[f]
		if !ok {
			problems = append(problems, prefix+f+" is missing")
			continue
		}
		n, err := wfb.ParseCount(raw)
		if err != nil {
			problems = append(problems, prefix+f+" "+err.Error())
			continue
		}
		vals[i] = n
	}
	return vals, problems
}

func rawList(rs []json.RawMessage) [][]byte {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

func joinLines(ls [][]byte) []byte {
	var b []byte
	for i, l := range ls {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, l...)
	}
	return b
}
