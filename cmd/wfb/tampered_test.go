package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestATamperedFileIsRefused stops a results file whose guarantees were
// removed from being read and written without a word: with its
// append-only trigger and a CHECK's trigger dropped and a row of cost −5
// inserted, runs, report, export, trend and view exited 0 (the report
// summed the negative cost, the viewer showed a wrong total) and wfb
// session went on appending to a file that was no longer append-only. Now
// writers refuse it (exit 2, naming what differs), readers refuse it too
// unless --allow-tampered, which makes every output say so, and wfb sql
// can always inspect it.
func TestATamperedFileIsRefused(t *testing.T) {
	db := reportFixture(t)
	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER results_no_update`,
		`DROP TRIGGER results_cost_usd_check`,
		`INSERT INTO results (run_id, attempt_id, task, arm, rep, attempt, started_at, ok, cost_usd)
			SELECT run_id, 'forged', task, arm, 99, 1, started_at, 1, -5 FROM results LIMIT 1`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	const says = "trigger results_cost_usd_check is missing; trigger results_no_update is missing"

	ws, _ := sessionFixture(t)
	site := filepath.Join(t.TempDir(), "site")
	for _, args := range [][]string{
		{"session", "--workspace", ws, "--prompt", "p", "--mock-script", writeScript(t, runOKScript)},
		{"runs"}, {"report", "base"}, {"export", "base"}, {"trend", "--by", "day"}, {"diff", "base", "cand"},
		{"view", "--export", site},
	} {
		_, errOut, code := wfbCmd(t, append(args, "--db", db)...)
		if code != exitBadInput || !strings.Contains(errOut, says) || !strings.Contains(errOut, "--allow-tampered") {
			t.Errorf("wfb %s: exit %d, stderr %q; want 2 naming the dropped triggers", args[0], code, errOut)
		}
	}
	out, errOut, code := wfbCmd(t, "sql", "--db", db, "--format", "csv", "SELECT cost_usd FROM results WHERE attempt_id = 'forged'")
	if code != 0 || !strings.Contains(out, "-5") || !strings.Contains(errOut, says) {
		t.Errorf("wfb sql: exit %d, out %q, stderr %q; want the forged row and a warning", code, out, errOut)
	}
	out, errOut, code = wfbCmd(t, "report", "base", "--db", db, "--allow-tampered", "--format", "json")
	if code != 0 || !strings.Contains(out, `"notes"`) || !strings.Contains(out, "its guarantees (append-only rows, CHECKs, one row per cell attempt) no longer hold") {
		t.Errorf("report --allow-tampered: exit %d, stderr %q; its JSON does not say the guarantees are gone:\n%.600s", code, errOut, out)
	}
	if _, errOut, code = wfbCmd(t, "view", "--db", db, "--allow-tampered", "--export", site); code != 0 {
		t.Fatalf("view --allow-tampered: exit %d: %s", code, errOut)
	}
	page, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil || !strings.Contains(string(page), "schema was changed outside wfb") {
		t.Errorf("the exported index does not say the file was tampered with (%v)", err)
	}
}
