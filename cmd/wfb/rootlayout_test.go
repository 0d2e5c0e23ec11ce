package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wfbench/wfb/internal/testkit/gate"
)

// bashScript is a mock script whose first reply runs command with the
// stand-in's Bash tool.
func bashScript(t *testing.T, command string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"default": map[string]any{
		"tools": []any{map[string]any{"name": "Bash", "input": map[string]any{"command": command}}},
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return writeScript(t, string(b))
}

func requireRootWfb(t *testing.T) {
	t.Helper()
	gate.RequireRoot(t, "as an ordinary user the session runs as wfb's own uid and reaches what wfb reaches: these layouts are a root wfb's (the usual container)")
}

// TestARootReviewOfACheckoutInRootsHomeRuns is the first thing a Docker
// user meets, end to end: `wfb session --review` of a checkout under a
// 0700 home, with an --artifact-dir root owns. It used to be refused
// ("cannot traverse", "fix: chown 65534"); now the review runs in a copy,
// the artifact lands in the given dir, and the checkout is untouched.
func TestARootReviewOfACheckoutInRootsHomeRuns(t *testing.T) {
	requireRootWfb(t)
	tmp, db := sessionFixture(t)
	home := filepath.Join(filepath.Dir(tmp), "root")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	workspace := filepath.Join(home, "checkout")
	if err := os.Rename(tmp, workspace); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(filepath.Dir(home), "reviews")
	if err := os.Mkdir(art, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"schema_version": 1, "verdict": "approve", "findings": []}`
	script := bashScript(t, "printf '%s' '"+doc+"' > \"$WFB_REVIEW_OUTPUT.tmp\" && mv \"$WFB_REVIEW_OUTPUT.tmp\" \"$WFB_REVIEW_OUTPUT\"")
	s, out, errOut := testStreams("", nil)
	args := []string{"session", "--workspace", workspace, "--prompt", "review the change", "--mock-script", script,
		"--db", db, "--format", "json", "--timeout", "30s", "--review", "--artifact-dir", art}
	if code := run(context.Background(), args, s); code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	rows := storedRows(t, db)
	if len(rows) != 1 || !rows[0].OK || rows[0].Verdict != "approve" {
		t.Fatalf("rows %+v", rows)
	}
	got, err := os.ReadFile(filepath.Join(art, "review-output.json"))
	if err != nil || string(got) != doc {
		t.Errorf("artifact in %s: %q, %v", art, got, err)
	}
	if src, _ := os.ReadFile(filepath.Join(workspace, "source.ts")); string(src) != "export const answer = 42;\n" {
		t.Errorf("the checkout changed: %q", src)
	}
}

// TestARootEditOfARootOwnedCheckoutLands: `wfb session --edit` of a
// checkout root owns (the bind-mounted repo of a container), which the
// session uid cannot write, used to be refused; now the session edits a
// copy and its change lands in the checkout.
func TestARootEditOfARootOwnedCheckoutLands(t *testing.T) {
	requireRootWfb(t)
	workspace, db := sessionFixture(t)
	script := bashScript(t, "printf edited > source.ts.tmp && mv source.ts.tmp source.ts && echo new > added.txt")
	s, out, errOut := testStreams("", nil)
	args := []string{"session", "--workspace", workspace, "--prompt", "fix it", "--mock-script", script,
		"--db", db, "--format", "json", "--timeout", "30s", "--edit"}
	if code := run(context.Background(), args, s); code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if rows := storedRows(t, db); len(rows) != 1 || !rows[0].OK {
		t.Fatalf("rows %+v", rows)
	}
	for name, want := range map[string]string{"source.ts": "edited", "added.txt": "new\n"} {
		if got, err := os.ReadFile(filepath.Join(workspace, name)); err != nil || string(got) != want {
			t.Errorf("%s in the checkout: %q, %v; want %q", name, got, err, want)
		}
	}
}
