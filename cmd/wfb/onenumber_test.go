package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// oneNumberBench makes a results file with every way a count or a cost can
// be read two ways: retries (a 529 retried to an ok), failed cells (a
// gateway that drops a usage field), errored cells (a provider down through
// its retry; cells the budget kept from starting), the wire's cost apart
// from the agent's (claude-sonnet-4-5 priced by wfb's table; the stand-in
// charges its own fictitious prices), an agent's cost the wire could not
// price (the model "stand-in" is in no table) and attempts with no cost
// measured at all. One worker, so the budget cuts the same cells each time.
const oneNumberBench = `runs: 2
workers: 1
budget: 0.13
sandbox: host-unsafe
retries: {provider-error: 1}
provider: {mock: ok.yaml}
tasks:
  - {id: down, workspace: ws, prompt: p, provider: {mock: down.yaml}}
  - {id: flaky, workspace: ws, prompt: p, provider: {mock: flaky.yaml}}
  - {id: steady, workspace: ws, prompt: p}
arms:
  - {id: wired, agent: stand-in, model: claude-sonnet-4-5}
  - {id: unpriced, agent: stand-in, model: stand-in}
  - {id: gateway, agent: stand-in, model: claude-sonnet-4-5, provider: {mock: gateway.yaml}}
`

var oneNumberScripts = map[string]string{
	"ok.yaml": runOKScript,
	"down.yaml": `default:
  status: 529
  error: {type: overloaded_error, message: Overloaded}
`,
	"flaky.yaml": `replies:
  - status: 529
    error: {type: overloaded_error, message: Overloaded}
default:
  text: "done"
  usage: {input_tokens: 900, output_tokens: 60, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
`,
	"gateway.yaml": `default:
  text: "Done."
  usage: {input_tokens: 2400, output_tokens: 310, cache_creation_input_tokens: 1200}
`,
}

// runFigures is what one surface says of the run: cells by outcome, attempts,
// and the cost total with how many attempts it covers.
type runFigures struct {
	Cells, OK, Failed, Errored, Attempts int
	Cost                                 float64
	CostN                                int
}

// TestEverySurfaceShowsTheSameCellsAndCost stops a surface from counting or
// costing a run by a rule of its own. Before the one vocabulary, the run's
// closing line and wfb runs summed the agents' own cost while wfb report,
// wfb diff and the budget summed the wire's (the demo: $6.79 against
// $0.2385, 28× apart); wfb runs put failed *attempts* beside a count of
// cells; arm_summary_v counted attempts as ok and failed; and the viewer's
// pages re-derived the cell rule in SQL of their own. Here the closing
// line, the budget message, wfb runs in every format, arm_summary_v,
// run_summary_v, wfb report's JSON, wfb export, the viewer's runs and run
// pages and the HTML report must each say what the vocabulary's rules
// (wfb.Cell, wfb.Cost) make of the stored rows.
func TestEverySurfaceShowsTheSameCellsAndCost(t *testing.T) {
	t.Parallel()
	bench, db := runFixture(t, runOKScript, oneNumberBench)
	for name, text := range oneNumberScripts {
		if err := os.WriteFile(filepath.Join(filepath.Dir(bench), name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _, errOut := testStreams("", nil)
	if code := run(context.Background(), []string{"run", bench, "--db", db}, s); code != exitFailed {
		t.Fatalf("exit %d, want 1 (the budget aborts the run)\n%s", code, errOut)
	}
	runs, rows := resultsOf(t, db)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	id := runs[0].ID
	want, covers := fromRows(rows)
	t.Logf("the rows say %+v", want)
	for what, ok := range covers {
		if !ok {
			t.Fatalf("the fixture has no %s: it no longer tests what it is for", what)
		}
	}

	check := func(surface string, got runFigures, costTolerance float64) {
		t.Helper()
		w := want
		if math.Abs(got.Cost-w.Cost) > costTolerance {
			t.Errorf("%s: cost %v, want %v", surface, got.Cost, w.Cost)
		}
		got.Cost, w.Cost = 0, 0
		if got.CostN == -1 { // the surface does not say how many attempts
			got.CostN = w.CostN
		}
		if got != w {
			t.Errorf("%s says %+v, want %+v", surface, got, w)
		}
	}
	const exact, micro = 1e-9, 0.5e-6
	fourDigits := want.Cost * 5e-4 // tables round to four significant digits

	// The closing line and the budget message.
	closing := regexp.MustCompile(`wfb run: (\d+) of \d+ cells: (\d+) ok, (\d+) failed, (\d+) errored \(each by its final attempt\); (\d+) attempts; cost \$([0-9.]+) over (\d+) of \d+ attempts`)
	m := closing.FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("no closing line in:\n%s", errOut)
	}
	check("the closing line", runFigures{atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]), atof(m[6]), atoi(m[7])}, micro)
	budget := regexp.MustCompile(`its cost so far: \$([0-9.]+) over (\d+) of (\d+) attempts`).FindStringSubmatch(errOut.String())
	if budget == nil {
		t.Fatalf("no budget message in:\n%s", errOut)
	}
	if c, n, of := atof(budget[1]), atoi(budget[2]), atoi(budget[3]); math.Abs(c-want.Cost) > micro || n != want.CostN || of != want.Attempts {
		t.Errorf("the budget message says $%v over %d of %d attempts, want $%v over %d of %d", c, n, of, want.Cost, want.CostN, want.Attempts)
	}

	// wfb runs, every format.
	out := wfbOut(t, "runs", "--db", db, "--format", "json")
	var js []map[string]any
	if err := json.Unmarshal([]byte(out), &js); err != nil || len(js) != 1 {
		t.Fatalf("runs json: %v\n%s", err, out)
	}
	check("wfb runs --format json", figuresOf(js[0], "cost_usd_measured_sum", "cost_usd_n"), exact)
	for _, f := range []string{"csv", "tsv"} {
		r := csv.NewReader(strings.NewReader(wfbOut(t, "runs", "--db", db, "--format", f)))
		if f == "tsv" {
			r.Comma, r.Comment, r.FieldsPerRecord, r.LazyQuotes = '\t', '#', -1, true
		}
		recs, err := r.ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("runs %s: %v %q", f, err, recs)
		}
		rec := map[string]any{}
		for i, k := range recs[0] {
			rec[k] = recs[1][i]
		}
		if f == "csv" {
			check("wfb runs --format csv", figuresOf(rec, "cost_usd_measured_sum", "cost_usd_n"), exact)
		} else {
			check("wfb runs --format tsv", figuresOf(rec, "cost (USD)", "cost n"), fourDigits)
		}
	}
	for _, f := range []string{"markdown", "table"} {
		// A screen wide enough for every column: a narrower box leaves some
		// out (and says so), which fit_test holds.
		s, out, errOut := testStreams("", map[string]string{"COLUMNS": "250"})
		if code := run(context.Background(), []string{"runs", "--db", db, "--format", f}, s); code != 0 {
			t.Fatalf("wfb runs --format %s: exit %d: %s", f, code, errOut)
		}
		check("wfb runs --format "+f, runsLine(t, out.String(), id), fourDigits)
	}

	// The views, through wfb sql.
	for _, view := range []string{"arm_summary_v", "run_summary_v"} {
		out := wfbOut(t, "sql", "--db", db, "--format", "json", `SELECT sum(cells) AS cells, sum(ok) AS ok, sum(failed) AS failed,
			sum(errored) AS errored, sum(attempts) AS attempts, sum(cost_usd_sum) AS cost, sum(cost_usd_n) AS cost_n FROM `+view)
		var v []map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 {
			t.Fatalf("%s: %v\n%s", view, err, out)
		}
		check(view, figuresOf(v[0], "cost", "cost_n"), exact)
	}

	// wfb report: its groups add up to the run.
	out = wfbOut(t, "report", id, "--db", db, "--format", "json")
	var rep struct{ Rows []map[string]any }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Rows) == 0 {
		t.Fatalf("report json: %v\n%s", err, out)
	}
	var sum runFigures
	for _, g := range rep.Rows {
		f := figuresOf(g, "cost_usd_measured_sum", "")
		sum.Cells, sum.OK, sum.Failed, sum.Errored, sum.Attempts = sum.Cells+f.Cells, sum.OK+f.OK, sum.Failed+f.Failed, sum.Errored+f.Errored, sum.Attempts+f.Attempts
		sum.Cost += f.Cost
	}
	sum.CostN = want.CostN // the report counts cells measured, not attempts
	check("wfb report --format json", sum, exact)

	// wfb export: one line per attempt, each with its cost by the one rule.
	exp := runFigures{}
	cells := map[string]*wfb.Cell{}
	sc := bufio.NewScanner(strings.NewReader(wfbOut(t, "export", id, "--db", db, "--format", "jsonl")))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprint(r["task"], "/", r["arm"], "/", r["rep"])
		if cells[key] == nil {
			cells[key] = &wfb.Cell{}
		}
		kind, _ := r["error_kind"].(string)
		cells[key].Add(int(r["attempt"].(float64)), r["ok"].(float64) == 1, kind)
		if c, ok := r["usage_cost_usd"].(float64); ok {
			exp.Cost += c
			exp.CostN++
		}
	}
	var tally wfb.Tally
	for _, c := range cells {
		tally.AddCell(*c)
	}
	exp.Cells, exp.OK, exp.Failed, exp.Errored, exp.Attempts = tally.Cells, tally.OK, tally.Failed, tally.Errored, tally.Attempts
	check("wfb export --format jsonl", exp, exact)

	// The viewer: its runs page and the run's page, as exported.
	site := filepath.Join(t.TempDir(), "site")
	wfbOut(t, "view", "--db", db, "--export", site)
	check("the viewer's runs page", viewerRunsRow(t, filepath.Join(site, "index.html"), id), fourDigits)
	check("the viewer's run page", viewerRunPage(t, filepath.Join(site, "run", id+".html")), fourDigits)

	// The HTML report names the same cost total per arm as wfb report.
	page := filepath.Join(t.TempDir(), "report.html")
	wfbOut(t, "report", id, "--db", db, "--html", page)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	md := wfbOut(t, "report", id, "--db", db, "--format", "markdown")
	for _, g := range rep.Rows {
		arm := g["arm"].(string)
		cost := markdownCell(t, md, arm, "cost total (USD)")
		if cost != "NULL" && !strings.Contains(string(html), ">"+cost+"<") {
			t.Errorf("the HTML report lacks arm %s's cost total %s that wfb report shows", arm, cost)
		}
	}
}

// fromRows is what the vocabulary's rules make of the stored rows, and
// which of the fixture's cases the rows hold.
func fromRows(rows []store.Result) (runFigures, map[string]bool) {
	cells := map[string]*wfb.Cell{}
	var order []string
	var cost wfb.CostSum
	covers := map[string]bool{"retry": false, "failed cell": false, "errored cell": false, "not-run cell": false,
		"wire cost apart from the agent's": false, "agent's cost the wire did not price": false, "unmeasured cost": false}
	for _, r := range rows {
		key := fmt.Sprint(r.Task, "/", r.Arm, "/", r.Rep)
		if cells[key] == nil {
			cells[key] = &wfb.Cell{}
			order = append(order, key)
		}
		cells[key].Add(r.Attempt, r.OK, r.ErrorKind)
		cost.Add(r.UsageSource, r.MeteredCostUSD, r.CostUSD)
		v, src := wfb.Cost(r.UsageSource, r.MeteredCostUSD, r.CostUSD)
		covers["retry"] = covers["retry"] || r.Attempt > 1
		covers["not-run cell"] = covers["not-run cell"] || r.ProcessState == wfb.StateNotStarted
		covers["wire cost apart from the agent's"] = covers["wire cost apart from the agent's"] ||
			(src == wfb.CostMetered && r.CostUSD != nil && *r.CostUSD != *v)
		covers["agent's cost the wire did not price"] = covers["agent's cost the wire did not price"] || src == wfb.CostReported
		covers["unmeasured cost"] = covers["unmeasured cost"] || v == nil
	}
	var t wfb.Tally
	for _, k := range order {
		t.AddCell(*cells[k])
	}
	covers["failed cell"], covers["errored cell"] = t.Failed > 0, t.Errored > 0
	return runFigures{t.Cells, t.OK, t.Failed, t.Errored, t.Attempts, cost.USD, cost.N}, covers
}

func wfbOut(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := wfbCmd(t, args...)
	if code != 0 {
		t.Fatalf("wfb %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return -1
	}
	return n
}

// atof reads a shown cost: "0.1362", "0.1362*" (a lower bound), "$0.1362".
func atof(s string) float64 {
	v, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(s), "$*"), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// figuresOf reads a surface's runFigures from a record of named values
// (numbers or their text); costN "" leaves CostN zero.
func figuresOf(rec map[string]any, cost, costN string) runFigures {
	num := func(k string) float64 {
		switch v := rec[k].(type) {
		case float64:
			return v
		case string:
			return atof(v)
		}
		return math.NaN()
	}
	f := runFigures{Cells: int(num("cells")), OK: int(num("ok")), Failed: int(num("failed")), Errored: int(num("errored")),
		Attempts: int(num("attempts")), Cost: num(cost)}
	if costN != "" {
		f.CostN = int(num(costN))
	}
	return f
}

// runsLine reads the run's line of wfb runs in markdown or a box table:
// run, label, started, status, cells, ok, failed, errored, attempts, cost,
// cost n.
func runsLine(t *testing.T, out, id string) runFigures {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, id) {
			continue
		}
		var cols []string
		for _, c := range strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == '│' }) {
			cols = append(cols, strings.TrimSpace(c))
		}
		if len(cols) < 11 {
			t.Fatalf("the run's line has %d columns (wrapped?): %q", len(cols), line)
		}
		return runFigures{atoi(cols[4]), atoi(cols[5]), atoi(cols[6]), atoi(cols[7]), atoi(cols[8]), atof(cols[9]), atoi(cols[10])}
	}
	t.Fatalf("no line names run %s in:\n%s", id, out)
	return runFigures{}
}

var numCell = regexp.MustCompile(`<td class="num">(?:<span[^>]*>)?([^<]*)`)

// viewerRunsRow reads the run's row of the viewer's runs page: cells, ok,
// failed, errored, attempts, strict, clean, cost.
func viewerRunsRow(t *testing.T, page, id string) runFigures {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, row, ok := strings.Cut(string(b), ">"+id+"</a>")
	if !ok {
		t.Fatalf("the runs page does not list run %s", id)
	}
	row, _, _ = strings.Cut(row, "</tr>")
	var v []string
	for _, m := range numCell.FindAllStringSubmatch(row, -1) {
		v = append(v, m[1])
	}
	if len(v) != 8 {
		t.Fatalf("the run's row has %d numeric cells, want 8: %s", len(v), row)
	}
	return runFigures{atoi(v[0]), atoi(v[1]), atoi(v[2]), atoi(v[3]), atoi(v[4]), atof(v[7]), -1}
}

// viewerRunPage reads the run page's summary: "N: a ok, b failed, c
// errored (...); K attempts" and its cost.
func viewerRunPage(t *testing.T, page string) runFigures {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<dd class="cells">(\d+): (\d+) ok, (\d+) failed, (\d+) errored [^;]*; (\d+) attempts</dd>\s*<dt>cost</dt><dd class="cost">\$([0-9.]+)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("the run page has no cells and cost summary")
	}
	return runFigures{atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]), atof(m[6]), -1}
}

// markdownCell is the value of column col in the markdown table row whose
// second cell is arm.
func markdownCell(t *testing.T, md, arm, col string) string {
	t.Helper()
	var header []string
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		for i, h := range header {
			if h == col && i < len(cells) && (cells[0] == arm || (len(cells) > 1 && cells[1] == arm)) {
				return cells[i]
			}
		}
	}
	t.Fatalf("no %q for arm %s in:\n%s", col, arm, md)
	return ""
}
