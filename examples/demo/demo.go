// Package demo is wfb's offline demo (`wfb demo`): a bench of three tasks,
// four arms and three repetitions whose every cell runs the stand-in agent
// against a scripted mock provider, the outcome each cell must end with,
// and the check that it did.
//
// The bench is built of two parts: its own (bench/: the bench file, its
// mock scripts and a workspace only it uses) and the examples' workspaces
// and skill (package examples), one copy of each, byte for byte what the
// bench's labels point into.
package demo

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/examples"
	"github.com/wfbench/wfb/store"
)

// own is the demo's own part of its bench.
//
//go:embed bench
var own embed.FS

// fromExamples are the bench's workspaces and skill that are the
// examples', by where the bench finds them.
var fromExamples = []struct{ at, example string }{
	{"workspaces/auth", "_workspaces/auth"},
	{"workspaces/calc", "_workspaces/calc"},
	{"skills/small-fixes", "tools/skills/small-fixes"},
}

// Unpack writes the demo's bench into dir (directories 0755, files 0644:
// readable by the unprivileged uid a root wfb runs sessions as) and
// returns the path of its bench file.
func Unpack(dir string) (string, error) {
	if err := extract(own, "bench", dir); err != nil {
		return "", fmt.Errorf("unpack the demo bench: %w", err)
	}
	for _, e := range fromExamples {
		if err := extract(examples.FS, e.example, filepath.Join(dir, filepath.FromSlash(e.at))); err != nil {
			return "", fmt.Errorf("unpack the demo bench: %w", err)
		}
	}
	return filepath.Join(dir, "bench.yaml"), nil
}

// extract writes the tree under root of fsys into dir.
func extract(fsys fs.FS, root, dir string) error {
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		target := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			return os.Chmod(target, 0o755)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// Story says what the demo's bench is built to show, row by row of its
// outcome table; lines at most 80 wide.
const Story = `What to look for:
  summarize task    the provider answers 529 first: the cell is retried as a
                    linked attempt (retried) and counts once, by its last
  gateway arm       its provider omits a usage field: the row is refused
                    (session-error), never recorded as zero tokens and cost
  review-auth task  the review tries to tamper with the workspace it reviews:
                    the write fails; its findings are scored against labels
  code-intel arm    given an MCP server and a skill; on summarize it never
                    calls the tool its workflow expects (workflow-not-used)
`

// Expect is the final outcome each (task, arm) of the demo must have: the
// error kind of its cells' final attempts, "" for ok.
var Expect = map[[2]string]string{
	{"fix-sum", "baseline"}: "", {"fix-sum", "thorough"}: "", {"fix-sum", "gateway"}: wfb.KindSessionError,
	{"review-auth", "baseline"}: "", {"review-auth", "thorough"}: "", {"review-auth", "gateway"}: wfb.KindSessionError,
	{"summarize", "baseline"}: "", {"summarize", "thorough"}: "", {"summarize", "gateway"}: wfb.KindSessionError,
	{"fix-sum", "code-intel"}: "", {"review-auth", "code-intel"}: "", {"summarize", "code-intel"}: wfb.KindWorkflowNotUsed,
}

// Surprises compares a demo run's rows with Expect, each cell by its final
// attempt (wfb.Supersedes), checks that every (task, arm) recorded reps
// cells, and that the 529s were retried as linked attempts. None: every
// cell behaved as the demo expects.
func Surprises(rows []store.Result, reps int) []string {
	type cell struct {
		task, arm string
		rep       int
	}
	last := map[cell]store.Result{}
	byID := map[string]store.Result{}
	for _, r := range rows {
		byID[r.AttemptID] = r
		k := cell{r.Task, r.Arm, r.Rep}
		if prev, seen := last[k]; !seen || wfb.Supersedes(r.Attempt, prev.Attempt) {
			last[k] = r
		}
	}
	var bad []string
	for k, r := range last {
		want, ok := Expect[[2]string{k.task, k.arm}]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("a cell %s × %s", k.task, k.arm))
		case r.ErrorKind != want:
			bad = append(bad, fmt.Sprintf("%s × %s #%d ended %q (%s), want %q", k.task, k.arm, k.rep, r.ErrorKind, r.ErrorDetail, want))
		case k.task == "summarize" && want == "":
			prev, linked := byID[r.RetryOf]
			if r.Attempt != 2 || !linked || prev.ErrorKind != wfb.KindProviderError {
				bad = append(bad, fmt.Sprintf("summarize × %s #%d: the 529 was not retried as attempt 2 linked to a provider-error", k.arm, k.rep))
			}
		}
	}
	if len(last) != len(Expect)*reps {
		bad = append(bad, fmt.Sprintf("%d cells recorded, want %d", len(last), len(Expect)*reps))
	}
	return bad
}
