package main

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/mock"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

//go:embed demodata/*.yaml
var demoData embed.FS

// demoScenario is one scripted session of the demo and what it must show.
type demoScenario struct {
	name     string // task name and script file
	review   bool
	wantOK   bool
	wantKind string
	shows    string
}

var demoScenarios = []demoScenario{
	{"usage", false, true, "", "usage survives the CLI boundary; cost is measured, not zero"},
	{"review", true, true, "", "the artifact lands atomically outside the workspace; the tamper attempt fails"},
	{"overloaded", false, false, store.KindProviderError, "an upstream 529 is a failed row, not a silent pass"},
	{"missing-cache", false, false, store.KindSessionError, "an omitted usage field is refused, not zero-filled"},
}

type demoOptions struct {
	DB     string
	Format string
}

func newDemoCmd(s *Streams) *cobra.Command {
	opts := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the embedded offline demo into the results file and print it",
		Long: `Run a handful of scripted sessions fully offline — wfb's mock provider and
stand-in agent, the host-unsafe sandbox — record every one of them (failures
included) in the results file, and print the rows.

Exit status 0 when every scenario behaved as it must.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return demoRun(cmd.Context(), s, opts) },
	}
	cmd.Flags().StringVar(&opts.DB, "db", "", "results file (default $WFB_DB or ./wfb.db)")
	cmd.Flags().StringVar(&opts.Format, "format", "auto", "output format: auto, table, tsv, markdown, csv, json")
	return cmd
}

func demoRun(ctx context.Context, s *Streams, opts *demoOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	agentBin, agentArgs, err := runner.StandInAgent()
	if err != nil {
		return err
	}
	// A directory any uid can traverse: as root, sessions run unprivileged.
	tmp, err := os.MkdirTemp("", "wfb-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}

	path := dbPath(opts.DB, s)
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	run := store.Run{ID: store.NewID("run"), Label: "demo", Kind: "session", StartedAt: time.Now().UTC(),
		Status: store.RunRunning, Harness: version, Config: `{"command":"demo"}`}
	if err := db.CreateRun(ctx, run); err != nil {
		return err
	}

	t := &report.Table{
		Title:   "wfb demo — run " + run.ID,
		Columns: []string{"task", "ok", "error_kind", "input", "output", "cache_read", "cache_write", "cost_usd", "verdict", "as expected", "shows"},
	}
	failures := 0
	for _, sc := range demoScenarios {
		row, err := demoSession(ctx, db, run.ID, tmp, sc, agentBin, agentArgs)
		if err != nil {
			return finishRun(ctx, db, run.ID, store.RunAborted, fmt.Errorf("demo %s: %w", sc.name, err))
		}
		expected := row.OK == sc.wantOK && row.ErrorKind == sc.wantKind
		if !expected {
			failures++
			fmt.Fprintf(s.ErrOut, "demo %s: got ok=%v %s (%s), want ok=%v %s\n", sc.name, row.OK, row.ErrorKind, row.ErrorDetail, sc.wantOK, sc.wantKind)
		}
		cells := rowTable(row)
		get := func(name string) any {
			for _, r := range cells.Rows {
				if r[0] == name {
					return r[1]
				}
			}
			return nil
		}
		t.Rows = append(t.Rows, []any{sc.name, get("ok"), get("error_kind"), get("input_tokens"), get("output_tokens"),
			get("cache_read_input_tokens"), get("cache_creation_input_tokens"), get("cost_usd"), get("verdict"),
			map[bool]string{true: "yes", false: "NO"}[expected], sc.shows})
	}
	if err := finishRun(ctx, db, run.ID, store.RunComplete, nil); err != nil {
		return err
	}
	t.Footnotes = append(t.Footnotes,
		fmt.Sprintf("%d sessions recorded in %s (run %s); NULL means not measured, 0 means measured zero.", len(demoScenarios), path, run.ID),
		fmt.Sprintf("Query them: wfb sql --db %s \"SELECT task, ok, error_kind, error_detail FROM results WHERE run_id = '%s'\"", path, run.ID))
	if err := report.Render(s.Out, t, format); err != nil {
		return err
	}
	if failures > 0 {
		return fmt.Errorf("%d demo scenarios did not behave as they must", failures)
	}
	return nil
}

// demoSession runs one scenario in a fresh workspace and records its row.
func demoSession(ctx context.Context, db *store.DB, runID, tmp string, sc demoScenario, agentBin string, agentArgs []string) (store.Result, error) {
	dir := filepath.Join(tmp, sc.name)
	workspace := filepath.Join(dir, "workspace")
	artifacts := filepath.Join(dir, "artifacts")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return store.Result{}, err
	}
	if err := os.WriteFile(filepath.Join(workspace, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		return store.Result{}, err
	}
	text, err := demoData.ReadFile("demodata/" + sc.name + ".yaml")
	if err != nil {
		return store.Result{}, err
	}
	expanded := strings.NewReplacer(
		"{{artifact}}", filepath.Join(artifacts, "review-output.json"),
		"{{workspace}}", workspace,
	).Replace(string(text))
	script, err := mock.ParseScript("demodata/"+sc.name+".yaml", []byte(expanded))
	if err != nil {
		return store.Result{}, err
	}
	p, err := mock.StartProvider(script)
	if err != nil {
		return store.Result{}, err
	}
	defer p.Close()
	cell := runner.Cell{
		RunID: runID, Task: sc.name, Arm: "stand-in", Agent: runner.AgentStandIn,
		AgentBin: agentBin, AgentArgs: agentArgs, Model: "stand-in",
		Prompt: "review the change", Workspace: workspace, Sandbox: sandbox.HostUnsafe,
		Review: sc.review, Timeout: time.Minute, BaseURL: p.URL(), APIKey: "offline",
	}
	if sc.review {
		cell.ArtifactDir = artifacts
	}
	return runner.RunCell(ctx, db, cell)
}
