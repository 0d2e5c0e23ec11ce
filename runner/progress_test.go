package runner

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// progressRows are three attempts of two cells: a 529 that is retried, its
// ok retry, and an ok cell whose cost was not measured.
func progressRows() []store.Result {
	cost := 0.25
	return []store.Result{
		{Task: "t1", Arm: "a", Rep: 0, Attempt: 1, ErrorKind: wfb.KindProviderError, ErrorDetail: "the agent reported an error: 529\nmore"},
		{Task: "t1", Arm: "a", Rep: 0, Attempt: 2, OK: true, CostUSD: &cost},
		{Task: "t1", Arm: "b", Rep: 0, Attempt: 1, OK: true},
	}
}

// feed plays the rows through p on a clock that moves 10s per attempt.
func feed(p *ProgressLine) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	p.Start(4, 1)
	rows := progressRows()
	for i, r := range rows {
		clock = clock.Add(10 * time.Second)
		p.Attempt(r)
		if i > 0 {
			p.CellDone(r)
		}
	}
	p.Finish()
}

// Off a terminal, progress is one plain line per attempt (a CI log keeps
// them readably), and a closing line with counts, the cost of the measured
// attempts only, and how many were measured: an unmeasured cost is never
// shown as $0.
func TestProgressOffATerminalIsOneLinePerAttempt(t *testing.T) {
	var out bytes.Buffer
	feed(NewProgressLine(&out, false))
	want := `wfb run: 4 cells, 1 already complete
t1 × a #0 attempt 1: provider-error: the agent reported an error: 529 (cost NULL)
t1 × a #0 attempt 2: ok (cost $0.2500)
t1 × b #0 attempt 1: ok (cost NULL)
wfb run: 3/4 cells, 2 ok, 0 failed, 3 attempts, cost $0.2500 (1 of 3 measured), ETA 15s
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// On a terminal, progress is one line redrawn in place (carriage returns,
// no newline until the end), padded so a shorter line leaves no debris.
func TestProgressOnATerminalRedrawsOneLine(t *testing.T) {
	var out bytes.Buffer
	feed(NewProgressLine(&out, true))
	got := out.String()
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Errorf("want exactly one newline, at the end: %q", got)
	}
	frames := strings.Split(strings.TrimSuffix(got, "\n"), "\r")[1:]
	last := frames[len(frames)-1]
	if want := "wfb run: 3/4 cells, 2 ok, 0 failed, 3 attempts, cost $0.2500 (1 of 3 measured), ETA 15s"; strings.TrimRight(last, " ") != want {
		t.Errorf("last frame %q, want %q", last, want)
	}
	for i := 1; i < len(frames); i++ {
		if len(frames[i]) < len(frames[i-1]) {
			t.Errorf("frame %d (%q) is shorter than the one before: debris would stay on screen", i, frames[i])
		}
	}
}
