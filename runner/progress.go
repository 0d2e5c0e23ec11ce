package runner

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/termtext"
	"github.com/wfbench/wfb/store"
)

// Progress hears how a sweep goes. Its methods are called from the
// sweep's workers, one at a time per cell but concurrently across cells.
type Progress interface {
	// Start says how many cells the run has and how many a resumed run
	// found complete already.
	Start(cells, complete int)
	// Attempt reports one recorded attempt.
	Attempt(row store.Result)
	// CellDone reports a cell that will get no further attempt now, with
	// its last row.
	CellDone(last store.Result)
	// Finish is called once, after the last attempt, with how the run
	// ended: its whole tally and cost, as wfb runs will show them.
	Finish(sum Summary)
}

// ProgressLine shows a sweep's progress on w: on a terminal, one line
// redrawn in place (cells done/total, ok/failed, cost so far, ETA); else
// one plain line per attempt, which a log or CI keeps readably. It is
// hand-rolled rather than a progress-bar library: a line of counts is all
// it draws, and the plain form is the one CI logs need.
type ProgressLine struct {
	w        io.Writer
	terminal bool
	now      func() time.Time

	mu                   sync.Mutex
	cells, done, skipped int
	ok, failed, errored  int
	attempts             int
	cost                 wfb.CostSum // this invocation's attempts
	started              time.Time
	lastDraw             time.Time
	width                int
}

var _ Progress = (*ProgressLine)(nil)

// NewProgressLine returns a progress display writing to w; terminal says
// whether w is one.
func NewProgressLine(w io.Writer, terminal bool) *ProgressLine {
	return &ProgressLine{w: w, terminal: terminal, now: time.Now}
}

// Start implements Progress.
func (p *ProgressLine) Start(cells, complete int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cells, p.skipped, p.done, p.started = cells, complete, complete, p.now()
	if !p.terminal {
		fmt.Fprintf(p.w, "wfb run: %d cells", cells)
		if complete > 0 {
			fmt.Fprintf(p.w, ", %d already complete", complete)
		}
		fmt.Fprintln(p.w)
		return
	}
	p.draw(true)
}

// Attempt implements Progress.
func (p *ProgressLine) Attempt(row store.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts++
	p.cost.Add(row.UsageSource, row.MeteredCostUSD, row.CostUSD)
	if p.terminal {
		p.draw(false)
		return
	}
	outcome := "ok"
	if !row.OK {
		outcome = row.ErrorKind + ": " + wfb.Clip(firstLine(row.ErrorDetail), 160)
	}
	// The detail is the agent's text, and the task and arm the bench's: a
	// CI log or a terminal behind tee shows their controls, never obeys
	// them.
	outcome = termtext.Show(outcome, "")
	var one wfb.CostSum
	one.Add(row.UsageSource, row.MeteredCostUSD, row.CostUSD)
	cost := "cost not measured"
	if one.Measured() {
		cost = "cost $" + wfb.Dollars(one.USD)
	}
	if one.AgentDiffers() {
		cost += "; agent-reported $" + wfb.Dollars(one.AgentUSD)
	}
	fmt.Fprintf(p.w, "%s × %s #%d attempt %d: %s (%s)\n", termtext.Show(row.Task, ""), termtext.Show(row.Arm, ""), row.Rep, row.Attempt, outcome, cost)
}

// CellDone implements Progress.
func (p *ProgressLine) CellDone(last store.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	switch wfb.OutcomeOf(last.OK, last.ErrorKind) {
	case wfb.OutcomeOK:
		p.ok++
	case wfb.OutcomeErrored:
		p.errored++
	default:
		p.failed++
	}
	if p.terminal {
		p.draw(false)
	}
}

// Finish implements Progress: the closing line is the whole run's (earlier
// invocations of a resumed run included), counted by the rules wfb runs
// and wfb report count by — cells by their final attempts, attempts
// apart, the one cost.
func (p *ProgressLine) Finish(sum Summary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		p.draw(true)
		fmt.Fprintln(p.w)
	}
	t := sum.Run
	fmt.Fprintf(p.w, "wfb run: %d of %d cells: %d ok, %d failed, %d errored (each by its final attempt); %d attempts; cost %s; %s\n",
		t.Cells, p.cells, t.OK, t.Failed, t.Errored, t.Attempts, sum.Cost.Phrase(), p.now().Sub(p.started).Round(100*time.Millisecond))
}

// status is the live line: this invocation's counts, cost, ETA.
func (p *ProgressLine) status() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d cells, %d ok, %d failed, %d errored, %d attempts", p.done, p.cells, p.ok, p.failed, p.errored, p.attempts)
	if p.cost.Measured() {
		fmt.Fprintf(&b, ", cost $%s", wfb.Dollars(p.cost.USD))
		if !p.cost.Complete() {
			fmt.Fprintf(&b, " (%d of %d measured)", p.cost.N, p.cost.Of)
		}
	}
	elapsed := p.now().Sub(p.started)
	if now := p.done - p.skipped; now > 0 && p.done < p.cells {
		eta := time.Duration(float64(elapsed) / float64(now) * float64(p.cells-p.done))
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	} else {
		fmt.Fprintf(&b, ", %s", elapsed.Round(100*time.Millisecond))
	}
	return b.String()
}

// draw rewrites the terminal line, at most ten times a second unless
// forced.
func (p *ProgressLine) draw(force bool) {
	now := p.now()
	if !force && now.Sub(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = now
	line := "wfb run: " + p.status()
	pad := ""
	if n := p.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(line)
	fmt.Fprint(p.w, "\r"+line+pad)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
