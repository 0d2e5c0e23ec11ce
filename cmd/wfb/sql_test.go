package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/internal/testkit/golden"
	"github.com/wfbench/wfb/store"
)

// sqlFixture writes a results file with one run and three attempts: a
// measured success, a measured zero, and a refused (unmeasured) one.
func sqlFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path, db := newResultsFile(t)
	defer db.Close() // a reader then finds the file whole, its log checkpointed
	start := time.Date(2026, 11, 30, 2, 40, 31, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "run-1", Label: "baseline", Kind: "run", StartedAt: start,
		Status: wfb.RunRunning, Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	for _, r := range []store.Result{
		{AttemptID: "att-1", Arm: "a", OK: true, InputTokens: i64(2000), OutputTokens: i64(300), CostUSD: f64(0.42)},
		{AttemptID: "att-2", Arm: "a", Rep: 1, OK: true, InputTokens: i64(0), OutputTokens: i64(0), CostUSD: f64(0)},
		{AttemptID: "att-3", Arm: "b|c", OK: false, ErrorKind: wfb.KindSessionError,
			ErrorDetail: "usage field cache_read_input_tokens missing\nrefused"},
	} {
		r.RunID, r.Task, r.Attempt, r.StartedAt, r.ProcessState = "run-1", "t1", 1, start, wfb.StateExited
		if err := db.InsertResult(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// runSQL runs `wfb sql ARGS...` in process and returns stdout, stderr and
// the exit code.
func runSQL(t *testing.T, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	s, out, errOut := testStreams("", env)
	code := run(context.Background(), append([]string{"sql"}, args...), s)
	return out.String(), errOut.String(), code
}

// TestSQLPrintsRowsKeepingNullApartFromZero stops `wfb sql` from showing an
// unmeasured value as 0 (or a measured 0 as blank) in any format.
func TestSQLPrintsRowsKeepingNullApartFromZero(t *testing.T) {
	path := sqlFixture(t)
	const query = `SELECT attempt_id, arm, ok, error_kind, error_detail, input_tokens, cost_usd FROM results_v ORDER BY attempt_id`
	for _, tc := range []struct {
		format string
		golden string // file under testdata/, or "" to compare with want
		want   string
	}{
		{format: "json", golden: "sql_results.json"},
		{format: "markdown", golden: "sql_results.md"},
		{format: "tsv", want: "attempt_id\tarm\tok\terror_kind\terror_detail\tinput_tokens\tcost_usd\n" +
			"att-1\ta\t1\tNULL\tNULL\t2000\t0.42\n" +
			"att-2\ta\t1\tNULL\tNULL\t0\t0\n" +
			"att-3\tb|c\t0\tsession-error\tusage field cache_read_input_tokens missing\\nrefused\tNULL\tNULL\n"},
		{format: "csv", want: "attempt_id,arm,ok,error_kind,error_detail,input_tokens,cost_usd\n" +
			"att-1,a,1,,,2000,0.42\n" +
			"att-2,a,1,,,0,0\n" +
			"att-3,b|c,0,session-error,\"usage field cache_read_input_tokens missing\nrefused\",,\n"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			out, errOut, code := runSQL(t, nil, "--db", path, "--format", tc.format, query)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if tc.golden != "" {
				golden.Check(t, filepath.Join("testdata", tc.golden), []byte(out))
				return
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSQLFormatAutoFollowsTheTerminal stops box-drawing characters from
// landing in a pipe, and plain TSV from being shown to a person.
func TestSQLFormatAutoFollowsTheTerminal(t *testing.T) {
	path := sqlFixture(t)
	for _, tc := range []struct {
		terminal bool
		want     string
	}{
		{false, "n\n3\n"},
		{true, "┌───┐\n│ n │\n├───┤\n│ 3 │\n└───┘\n"},
	} {
		s, out, errOut := testStreams("", map[string]string{"WFB_DB": path})
		s.OutIsTerminal = tc.terminal
		if code := run(context.Background(), []string{"sql", "SELECT count(*) AS n FROM results"}, s); code != 0 {
			t.Fatalf("terminal=%v: exit %d, stderr %q", tc.terminal, code, errOut)
		}
		if diff := cmp.Diff(tc.want, out.String()); diff != "" {
			t.Errorf("terminal=%v (-want +got):\n%s", tc.terminal, diff)
		}
	}
}

// TestSQLRefusesWritesAndBadInputWithExit2 stops `wfb sql` from modifying
// the results file, and stops user mistakes from looking like internal
// failures (exit 1) or, worse, success.
func TestSQLRefusesWritesAndBadInputWithExit2(t *testing.T) {
	path := sqlFixture(t)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nope.db")
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"delete", []string{"--db", path, "DELETE FROM results"}, []string{"opened read-only; wfb sql cannot write", "readonly"}},
		{"update", []string{"--db", path, "UPDATE runs SET label = 'x'"}, []string{"cannot write"}},
		{"drop", []string{"--db", path, "DROP VIEW results_v"}, []string{"cannot write"}},
		{"query_only trick", []string{"--db", path, "PRAGMA query_only = 0"}, []string{"cannot write"}},
		{"attach", []string{"--db", path, "ATTACH '" + filepath.Join(t.TempDir(), "x.db") + "' AS x"}, []string{"cannot write"}},
		{"syntax error", []string{"--db", path, "SELEC * FROM results"}, []string{`near "SELEC": syntax error`}},
		{"unknown table", []string{"--db", path, "SELECT * FROM nope"}, []string{"no such table: nope"}},
		{"missing file", []string{"--db", missing, "SELECT 1"}, []string{missing, "no such file"}},
		{"bad format", []string{"--db", path, "--format", "yaml", "SELECT 1"}, []string{`"yaml"`, "table, tsv, markdown, csv, json"}},
		{"no query", []string{"--db", path}, []string{"exactly one QUERY"}},
		{"empty query", []string{"--db", path, "  "}, []string{"empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runSQL(t, nil, tc.args...)
			if code != exitBadInput {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitBadInput, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not contain %q", errOut, w)
				}
			}
		})
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("wfb sql changed the results file")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("wfb sql created %s", missing)
	}
}

// TestSQLHelpAndDocsAgreeOnTheStableInterface stops `wfb sql --help` and
// docs/sql.md's "The stable interface" from naming different tables and
// views as the stable interface, or either naming one the schema lacks.
func TestSQLHelpAndDocsAgreeOnTheStableInterface(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "sql.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	start := strings.Index(section, "\n## The stable interface\n")
	if start < 0 {
		t.Fatal(`docs/sql.md has no "## The stable interface"`)
	}
	section = section[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var listed []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "- **`") {
			continue
		}
		head, _, _ := strings.Cut(line, " — ")
		for _, part := range strings.Split(head, "/") {
			listed = append(listed, strings.Trim(strings.TrimSpace(part), "-*` "))
		}
	}
	stable := append(append([]string{}, stableRelations.tables...), stableRelations.views...)
	if diff := cmp.Diff(sortedCopy(stable), sortedCopy(listed)); diff != "" {
		t.Errorf("docs/sql.md's stable tables and views differ from wfb sql --help's (-help +docs):\n%s", diff)
	}
	out, _, code := wfbCmd(t, "sql", "--help")
	if code != exitOK || !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(stableRelationsText()), " ")) {
		t.Errorf("wfb sql --help does not name the stable interface:\n%s", out)
	}
	db := sqlFixture(t)
	for _, name := range stable {
		if _, errOut, code := runSQL(t, nil, "--db", db, "SELECT * FROM "+name+" LIMIT 0"); code != exitOK {
			t.Errorf("%s is named stable but the schema has no such relation: %s", name, errOut)
		}
	}
}

func sortedCopy(s []string) []string {
	c := append([]string{}, s...)
	slices.Sort(c)
	return c
}

// TestAnEndlessQueryIsStoppedAtItsTimeout stops `wfb sql` from running a
// recursive CTE without a bound until it is killed: the query is
// interrupted at --timeout (default 30s), exit 2 naming the limit, nothing
// printed; a query within the limit runs as before.
func TestAnEndlessQueryIsStoppedAtItsTimeout(t *testing.T) {
	t.Parallel()
	path := sqlFixture(t)
	const endless = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c`
	start := time.Now()
	out, errOut, code := runSQL(t, nil, "--db", path, "--timeout", "300ms", endless)
	if code != 2 || out != "" || !strings.Contains(errOut, "ran past --timeout 300ms") {
		t.Errorf("exit %d, stdout %q, stderr %q: want 2 naming the limit, nothing printed", code, out, errOut)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the query was stopped after %s, want about 300ms", took)
	}
	out, errOut, code = runSQL(t, nil, "--db", path, "--timeout", "10s", "--format", "tsv", `SELECT count(*) AS n FROM results`)
	if code != 0 || out != "n\n3\n" {
		t.Errorf("a query within the limit: exit %d, %q, %s", code, out, errOut)
	}
	if _, errOut, code := runSQL(t, nil, "--db", path, "--timeout", "-1s", "SELECT 1"); code != 2 || !strings.Contains(errOut, "--timeout") {
		t.Errorf("a negative timeout: exit %d, %s", code, errOut)
	}
}

// TestSeveralStatementsAreRefused stops `wfb sql "select 1; select 2"`
// from showing the last statement's rows alone, exit 0, as if the first had
// never been asked; a semicolon in a string, a quoted name or a comment,
// and trailing semicolons, are one statement.
func TestSeveralStatementsAreRefused(t *testing.T) {
	for q, want := range map[string]int{
		"SELECT 1":                             1,
		"SELECT 1;":                            1,
		"SELECT 1; ;  -- done\n":               1,
		"SELECT ';' AS a, \"x;y\", [z;]":       1,
		"SELECT 'it''s; fine' /* ; */":         1,
		"SELECT 1; SELECT 2":                   2,
		"SELECT 1 -- c\n; /* x */ SELECT 2; x": 3,
	} {
		if n, _ := statements(q); n != want {
			t.Errorf("statements(%q) = %d, want %d", q, n, want)
		}
	}
	db := reportFixture(t)
	_, errOut, code := wfbCmd(t, "sql", "--db", db, "SELECT 1; SELECT 2")
	if code != exitBadInput || !strings.Contains(errOut, "holds 2 statements (the second starts at byte 10)") {
		t.Errorf("exit %d, stderr %q; want 2 naming the second statement", code, errOut)
	}
	if out, errOut, code := wfbCmd(t, "sql", "--db", db, "--format", "tsv", "SELECT ';' AS x;"); code != 0 || out != "x\n;\n" {
		t.Errorf("one statement with a semicolon in a string: exit %d, %q %s", code, out, errOut)
	}
}
