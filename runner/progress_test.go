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
// ok retry (which the wire priced apart from the agent's figure), and an
// ok cell whose cost was not measured.
func progressRows() []store.Result {
	cost, wire := 0.25, 0.0125
	return []store.Result{
		{Task: "t1", Arm: "a", Rep: 0, Attempt: 1, ErrorKind: wfb.KindProviderError, ErrorDetail: "the agent reported an error: 529\nmore"},
		{Task: "t1", Arm: "a", Rep: 0, Attempt: 2, OK: true, CostUSD: &cost, UsageSource: wfb.UsageMetered, MeteredCostUSD: &wire},
		{Task: "t1", Arm: "b", Rep: 0, Attempt: 1, OK: true},
	}
}

// progressSummary is how the run of progressRows ended: one cell complete
// from an earlier invocation (one attempt, $0.5 by the wire) and the two of
// progressRows.
func progressSummary() Summary {
	return Summary{Run: wfb.Tally{Cells: 3, OK: 3, Attempts: 4},
		Cost: wfb.CostSum{USD: 0.5125, N: 2, Metered: 2, Of: 4, AgentUSD: 0.25, AgentN: 1}}
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
	p.Finish(progressSummary())
}

// Off a terminal, progress is one plain line per attempt (a CI log keeps
// them readably), each with its cost by the one rule (the wire's where it
// priced the attempt, the agent's own figure beside it where it differs),
// and a closing line with the whole run's cells by outcome, its attempts
// apart, and its cost with how many attempts it covers: an unmeasured cost
// is never shown as $0. Before, each line and the closing line summed the
// agents' own figures while wfb report summed the wire's.
func TestProgressOffATerminalIsOneLinePerAttempt(t *testing.T) {
	var out bytes.Buffer
	feed(NewProgressLine(&out, false))
	want := `wfb run: 4 cells, 1 already complete
t1 × a #0 attempt 1: provider-error: the agent reported an error: 529 (cost not measured)
t1 × a #0 attempt 2: ok (cost $0.0125; agent-reported $0.25)
t1 × b #0 attempt 1: ok (cost not measured)
wfb run: 3 of 4 cells: 3 ok, 0 failed, 0 errored (each by its final attempt); 4 attempts; cost $0.5125 over 2 of 4 attempts (a lower bound); agent-reported $0.25 over 1; 30s
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
	live, closing, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(closing, "wfb run: 3 of 4 cells: 3 ok") || strings.Count(closing, "\n") != 1 || !strings.HasSuffix(closing, "\n") {
		t.Errorf("want the redrawn line, then the closing line: %q", got)
	}
	frames := strings.Split(live, "\r")[1:]
	last := frames[len(frames)-1]
	if want := "wfb run: 3/4 cells, 2 ok, 0 failed, 0 errored, 3 attempts, cost $0.0125 (1 of 3 measured), ETA 15s"; strings.TrimRight(last, " ") != want {
		t.Errorf("last frame %q, want %q", last, want)
	}
	for i := 1; i < len(frames); i++ {
		if len(frames[i]) < len(frames[i-1]) {
			t.Errorf("frame %d (%q) is shorter than the one before: debris would stay on screen", i, frames[i])
		}
	}
}
