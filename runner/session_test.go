package runner

// The seed contract (shared/seed/test_offline_session_integration.py), ported:
// a session end to end with only the model faked. The real mock provider over
// HTTP, the stand-in agent as a real subprocess, the real sandbox
// preparation, the real parse, and a real row in a real SQLite file.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/mock/provider"
	"github.com/wfbench/wfb/runner/bench"
	"github.com/wfbench/wfb/runner/review"
	"github.com/wfbench/wfb/sandbox"
	"github.com/wfbench/wfb/store"
)

const reviewJSON = `{"schema_version": 1, "verdict": "approve", "findings": []}`

// rig is one test's results file, run and workspace.
type rig struct {
	db    *store.DB
	runID string
	clone string
	tmp   string // a temp dir any uid can traverse
}

// openTempDir makes a temp dir that an unprivileged session uid can
// traverse (t.TempDir's parents are 0700).
func openTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wfb-runner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newRig(t testing.TB) *rig {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "wfb.db"))
	if err != nil {
		t.Fatalf("open results: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	run := store.Run{ID: store.NewID("run"), Kind: "session", StartedAt: time.Now().UTC(), Status: wfb.RunRunning}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	tmp := openTempDir(t)
	clone := filepath.Join(tmp, "clone")
	if err := os.Mkdir(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "source.ts"), []byte("export const answer = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &rig{db: db, runID: run.ID, clone: clone, tmp: tmp}
}

func startProvider(t *testing.T, script *provider.Script) *provider.Provider {
	t.Helper()
	p, err := provider.Start(script)
	if err != nil {
		t.Fatalf("start the mock provider: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func defaultReply(r provider.Reply) *provider.Script { return &provider.Script{Default: &r} }

// session runs "review the change" on the rig's clone through the stand-in
// agent, the way the seed's _session does, and returns the stored row.
func (r *rig) session(t *testing.T, p *provider.Provider, adjust ...func(*SessionSpec)) store.Result {
	t.Helper()
	spec := r.spec(t, p)
	for _, a := range adjust {
		a(&spec)
	}
	row, err := RecordSession(context.Background(), r.db, spec)
	if err != nil {
		t.Fatalf("RecordSession: %v", err)
	}
	r.checkStored(t, row)
	return row
}

// spec is the seed's _session: "review the change" on the rig's clone
// through the stand-in agent, against provider p.
func (r *rig) spec(t testing.TB, p *provider.Provider) SessionSpec {
	return SessionSpec{
		SessionKey: SessionKey{
			RunID:     r.runID,
			Task:      "seed",
			Arm:       "stand-in",
			Agent:     bench.AgentStandIn,
			AgentBin:  testBinary(t),
			AgentArgs: []string{"mock", "agent"},
			Model:     "stand-in",
			Prompt:    "review the change",
			Timeout:   60 * time.Second,
		},
		Workdir: r.clone,
		Env: map[string]string{
			"ANTHROPIC_BASE_URL": p.URL(),
			"ANTHROPIC_API_KEY":  "offline",
			"PATH":               "/usr/bin:/bin",
			"WFB_TEST_AGENT":     "1",
		},
	}
}

// checkStored proves the row the caller saw is the row in the file.
func (r *rig) checkStored(t *testing.T, row store.Result) {
	t.Helper()
	rows, err := r.db.Results(context.Background(), r.runID)
	if err != nil {
		t.Fatalf("read results: %v", err)
	}
	for _, got := range rows {
		if got.AttemptID == row.AttemptID {
			// Evidence is redacted and bounded on the way in; times lose
			// sub-millisecond precision. Compare what the file promises.
			norm := func(x store.Result) store.Result {
				x.StartedAt = x.StartedAt.Truncate(time.Millisecond)
				x.ResultEvent, x.StdoutTail, x.StderrTail = "", "", ""
				x.Transcript = nil // its own table, read with DB.Transcript
				x.Requests = nil   // read back by DB.Requests, not Results
				return x
			}
			if diff := cmp.Diff(norm(row), norm(got)); diff != "" {
				t.Errorf("stored row differs (-returned +stored):\n%s", diff)
			}
			return
		}
	}
	t.Fatalf("attempt %s was not stored", row.AttemptID)
}

// sqlIsNull asks the file itself whether a column of the attempt is NULL.
func (r *rig) sqlIsNull(t *testing.T, attemptID, column string) bool {
	t.Helper()
	_, rows, err := r.db.Query(context.Background(), "SELECT "+column+" IS NULL FROM results WHERE attempt_id = ?", attemptID)
	if err != nil || len(rows) != 1 {
		t.Fatalf("query %s: %v (%d rows)", column, err, len(rows))
	}
	return rows[0][0].(int64) == 1
}

func requireOK(t *testing.T, row store.Result) {
	t.Helper()
	if !row.OK {
		t.Fatalf("session not ok: %s: %s\nstderr: %s", row.ErrorKind, row.ErrorDetail, row.StderrTail)
	}
}

// Token counts must survive the CLI boundary, not be invented after it.
func TestASessionRecordsTheUsageTheProviderReported(t *testing.T) {
	r := newRig(t)
	p := startProvider(t, defaultReply(provider.Reply{Usage: provider.FullUsage(2_000, 300, 7_000, 1_000)}))
	row := r.session(t, p)
	requireOK(t, row)
	got := []any{*row.InputTokens, *row.CacheReadInputTokens, *row.CacheCreationInputTokens, *row.OutputTokens}
	if diff := cmp.Diff([]any{int64(2000), int64(7000), int64(1000), int64(300)}, got); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	// A measured zero would be indistinguishable from an unmeasured one.
	if row.CostUSD == nil || *row.CostUSD != 0.42 {
		t.Errorf("cost = %v, want 0.42 from the stand-in's price table", row.CostUSD)
	}
	if row.NumTurns == nil || *row.NumTurns != 1 {
		t.Errorf("num_turns = %v, want 1", row.NumTurns)
	}
	if row.ProcessState != wfb.StateExited || row.ExitCode == nil || *row.ExitCode != 0 {
		t.Errorf("process %s exit %v", row.ProcessState, row.ExitCode)
	}
}

// The full artifact path: model asks, CLI writes atomically, scorer reads.
// This is the operation that shipped empty for a whole run. Nothing here
// fakes the write, the directory, or the parse - only the decision to write.
func TestAScriptedWriteProducesAReviewArtifactTheScorerAccepts(t *testing.T) {
	r := newRig(t)
	sb, err := sandbox.Prepare(context.Background(), sandbox.Options{
		Workspace: r.clone, Backend: "host-unsafe", AgentBin: testBinary(t),
	})
	if err != nil {
		t.Fatalf("prepare the sandbox: %v", err)
	}
	defer sb.Close()
	artifact, err := sandbox.PrepareReviewWorkspace(sb, review.ReviewOutput)
	if err != nil {
		t.Fatal(err)
	}
	write := provider.Tool{Name: "Write", Input: map[string]any{"file_path": artifact, "content": reviewJSON}}
	p := startProvider(t, defaultReply(provider.Reply{Text: "reviewing", Tools: []provider.Tool{write}, Usage: provider.FullUsage(100, 20, 0, 0)}))
	// Take the command configuration from the sandbox the way a bench run
	// does. On host-unsafe the prefix is empty by construction, so this pins
	// the WIRING, not the isolation.
	row := r.session(t, p, func(s *SessionSpec) {
		s.Sandbox = sb
		s.Review = &ReviewSpec{ArtifactPath: artifact}
		s.Boundary = true
	})
	requireOK(t, row)
	// Read inside the scope: Close removes the private root.
	rv, err := review.ParseReviewOutput(artifact)
	if err != nil {
		t.Fatalf("the scorer refused the artifact: %v", err)
	}
	if rv.Verdict != "approve" || len(rv.Findings) != 0 {
		t.Errorf("verdict %q with %d findings, want approve with none", rv.Verdict, len(rv.Findings))
	}
	if row.Verdict != "approve" || row.FindingsCount == nil || *row.FindingsCount != 0 {
		t.Errorf("row verdict %q findings %v, want approve and a measured 0", row.Verdict, row.FindingsCount)
	}
	if row.Sandbox != "host-unsafe" {
		t.Errorf("row sandbox = %q", row.Sandbox)
	}
}

// A run that measures the wrong prompt measures nothing.
func TestTheProviderSawThePromptTheHarnessMeantToSend(t *testing.T) {
	r := newRig(t)
	p := startProvider(t, &provider.Script{})
	r.session(t, p)
	reqs := p.Requests()
	if len(reqs) == 0 {
		t.Fatal("the session never reached the provider")
	}
	msgs, _ := reqs[0].Body["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("no messages in the first request: %v", reqs[0].Body)
	}
	first, _ := msgs[0].(map[string]any)
	if sent := contentText(first["content"]); !strings.Contains(sent, "review the change") {
		t.Errorf("first message %q does not carry the prompt", sent)
	}
}

// contentText flattens a message content (a string or a list of blocks).
func contentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, blk := range v {
			if m, ok := blk.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// An upstream 529 must not be recorded as a usable measurement.
func TestAProviderFailureSurfacesAsAFailedSessionNotASilentPass(t *testing.T) {
	r := newRig(t)
	p := startProvider(t, defaultReply(provider.Reply{Status: 529, Error: []byte(`{"type":"overloaded_error","message":"Overloaded"}`)}))
	row := r.session(t, p)
	if row.OK {
		t.Fatal("a 529 was recorded as ok")
	}
	if row.ErrorKind != wfb.KindProviderError {
		t.Errorf("error kind = %q, want %q (%s)", row.ErrorKind, wfb.KindProviderError, row.ErrorDetail)
	}
	if !strings.Contains(row.ErrorDetail, "529") {
		t.Errorf("detail %q does not name the status", row.ErrorDetail)
	}
}

// The contract the empty-artifact run violated: a review must not change
// the workspace and must still write its artifact ATOMICALLY (temp file
// beside the target, then rename), which needs a writable parent DIRECTORY.
// Both halves go through the real session with the boundary applied and the
// model scripted to attempt each. This is the host-unsafe boundary; as root
// it holds because the session runs as an unprivileged uid.
func TestTheWriteBoundaryRefusesTheWorkspaceAndPermitsTheArtifact(t *testing.T) {
	for _, how := range []string{"explicit boundary", "review session"} {
		t.Run(how, func(t *testing.T) {
			r := newRig(t)
			// Not created here: Prepare creates it, the session's to write.
			artifacts := filepath.Join(r.tmp, "artifacts")
			sb, err := sandbox.Prepare(context.Background(), sandbox.Options{
				Workspace: r.clone, Backend: "host-unsafe", AgentBin: testBinary(t), ArtifactDir: artifacts,
			})
			if err != nil {
				t.Fatalf("prepare the sandbox: %v", err)
			}
			defer sb.Close()
			target := filepath.Join(artifacts, review.ReviewOutput)
			protected := filepath.Join(r.clone, "source.ts")
			before, _ := os.ReadFile(protected)
			writeArtifact := provider.Tool{Name: "Write", Input: map[string]any{"file_path": target, "content": reviewJSON}}
			tamper := provider.Tool{Name: "Write", Input: map[string]any{"file_path": protected, "content": "tampered"}}
			p := startProvider(t, defaultReply(provider.Reply{Text: "writing", Tools: []provider.Tool{writeArtifact, tamper}, Usage: provider.FullUsage(100, 20, 0, 0)}))

			var row store.Result
			if how == "explicit boundary" {
				restore, err := sandbox.WorkspaceWriteBoundary(r.clone)
				if err != nil {
					t.Fatal(err)
				}
				row = r.session(t, p, func(s *SessionSpec) { s.Sandbox = sb })
				if err := restore(); err != nil {
					t.Fatal(err)
				}
			} else {
				row = r.session(t, p, func(s *SessionSpec) {
					s.Sandbox = sb
					s.Review = &ReviewSpec{ArtifactPath: target}
					s.Boundary = true
				})
			}
			requireOK(t, row)
			// The artifact landed, written the way the agent's Write tool does it.
			rv, err := review.ParseReviewOutput(target)
			if err != nil || rv.Verdict != "approve" {
				t.Fatalf("artifact: %v, verdict %q", err, rv.Verdict)
			}
			if tmps, _ := filepath.Glob(filepath.Join(artifacts, "*.tmp.*")); len(tmps) > 0 {
				t.Errorf("temp files left %v: the rename did not land", tmps)
			}
			// The workspace did not move.
			if after, _ := os.ReadFile(protected); string(after) != string(before) {
				t.Errorf("the read-only workspace was modified: %q", after)
			}
		})
	}
}

// An omitted cache field must not arrive as a measured zero. The stand-in
// used to default absent fields to 0, which both fabricated a complete
// measurement AND made the parent's guard unfirable from any offline test.
// Scripting the absence is what proves the guard still fires.
func TestAReplyMissingCacheUsageIsRefusedNotZeroFilled(t *testing.T) {
	r := newRig(t)
	partial := provider.Usage{"input_tokens": 2_000, "output_tokens": 300, "cache_creation_input_tokens": 0}
	p := startProvider(t, defaultReply(provider.Reply{Usage: partial}))
	row := r.session(t, p)
	if row.OK {
		t.Fatal("an incomplete usage report is not a usable measurement")
	}
	if row.ErrorKind != wfb.KindSessionError {
		t.Errorf("error kind = %q, want %q", row.ErrorKind, wfb.KindSessionError)
	}
	if !strings.Contains(row.ErrorDetail, "cache_read_input_tokens is missing") {
		t.Errorf("detail %q does not name the missing field", row.ErrorDetail)
	}
	for _, col := range []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "cost_usd"} {
		if !r.sqlIsNull(t, row.AttemptID, col) {
			t.Errorf("%s is not NULL in the file for a refused measurement", col)
		}
	}
	if row.ResultEvent == "" {
		t.Error("the raw result event was not kept as evidence")
	}
}

// A field good enough to report is good enough to validate: an unvalidated
// cache value would ride into a success result as a real measurement.
func TestANonsenseCacheValueIsRefusedRatherThanForwarded(t *testing.T) {
	for name, bad := range map[string]any{"negative": -5, "boolean": true, "string": "1200"} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			u := provider.FullUsage(2_000, 300, 0, 0)
			u["cache_read_input_tokens"] = bad
			p := startProvider(t, defaultReply(provider.Reply{Usage: u}))
			row := r.session(t, p)
			if row.OK {
				t.Fatalf("%#v must not be recorded as a measured cache value", bad)
			}
			if row.ErrorKind != wfb.KindSessionError || !strings.Contains(row.ErrorDetail, "cache_read_input_tokens") {
				t.Errorf("kind %q detail %q", row.ErrorKind, row.ErrorDetail)
			}
			if !r.sqlIsNull(t, row.AttemptID, "cache_read_input_tokens") {
				t.Error("the nonsense value reached the file")
			}
		})
	}
}

// reviewRig prepares a host-unsafe sandbox whose artifact path the script
// can name, and returns the path.
func (r *rig) reviewSandbox(t *testing.T) (*sandbox.Sandbox, string) {
	t.Helper()
	sb, err := sandbox.Prepare(context.Background(), sandbox.Options{
		Workspace: r.clone, Backend: sandbox.HostUnsafe, AgentBin: testBinary(t),
	})
	if err != nil {
		t.Fatalf("prepare the sandbox: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	artifact, err := sandbox.PrepareReviewWorkspace(sb, review.ReviewOutput)
	if err != nil {
		t.Fatal(err)
	}
	return sb, artifact
}

// The original scored evidence from the wrong directory: a stale
// review-output.json in the workspace must never stand in for the artifact
// the session did not write.
func TestAStaleArtifactInTheWorkspaceIsNeverScored(t *testing.T) {
	r := newRig(t)
	if err := os.WriteFile(filepath.Join(r.clone, review.ReviewOutput), []byte(reviewJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, artifact := r.reviewSandbox(t)
	p := startProvider(t, defaultReply(provider.Reply{Text: "I reviewed it.", Usage: provider.FullUsage(10, 5, 0, 0)}))
	row := r.session(t, p, func(s *SessionSpec) {
		s.Sandbox = sb
		s.Review = &ReviewSpec{ArtifactPath: artifact}
		s.Boundary = true
	})
	if row.OK || row.ErrorKind != wfb.KindArtifactMissing {
		t.Fatalf("ok=%v kind=%q (%s), want artifact-missing", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.Verdict != "" || row.FindingsCount != nil {
		t.Errorf("verdict %q findings %v scored from somewhere", row.Verdict, row.FindingsCount)
	}
	// The session's measurements are still kept: the failure is the artifact.
	if row.InputTokens == nil || *row.InputTokens != 10 {
		t.Errorf("input tokens %v, want the measured 10", row.InputTokens)
	}
}

// Never-written and written-but-invalid are different failures.
func TestAnInvalidArtifactIsNotAMissingOne(t *testing.T) {
	r := newRig(t)
	sb, artifact := r.reviewSandbox(t)
	write := provider.Tool{Name: "Write", Input: map[string]any{"file_path": artifact, "content": `{"schema_version": 1, "verdict": "lgtm", "findings": []}`}}
	p := startProvider(t, defaultReply(provider.Reply{Tools: []provider.Tool{write}, Usage: provider.FullUsage(10, 5, 0, 0)}))
	row := r.session(t, p, func(s *SessionSpec) {
		s.Sandbox = sb
		s.Review = &ReviewSpec{ArtifactPath: artifact}
		s.Boundary = true
	})
	if row.OK || row.ErrorKind != wfb.KindArtifactInvalid {
		t.Fatalf("ok=%v kind=%q (%s), want artifact-invalid", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if !strings.Contains(row.ErrorDetail, "lgtm") {
		t.Errorf("detail %q does not name the bad verdict", row.ErrorDetail)
	}
}

// A symlink planted at the artifact path is refused, not followed.
func TestASymlinkArtifactIsRefused(t *testing.T) {
	r := newRig(t)
	sb, artifact := r.reviewSandbox(t)
	elsewhere := filepath.Join(r.tmp, "elsewhere.json")
	if err := os.WriteFile(elsewhere, []byte(reviewJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	link := provider.Tool{Name: "Bash", Input: map[string]any{"command": "ln -s " + elsewhere + " " + artifact}}
	p := startProvider(t, defaultReply(provider.Reply{Tools: []provider.Tool{link}, Usage: provider.FullUsage(10, 5, 0, 0)}))
	row := r.session(t, p, func(s *SessionSpec) {
		s.Sandbox = sb
		s.Review = &ReviewSpec{ArtifactPath: artifact}
		s.Boundary = true
	})
	if row.OK || row.ErrorKind != wfb.KindArtifactInvalid {
		t.Fatalf("ok=%v kind=%q (%s), want artifact-invalid for a symlink", row.OK, row.ErrorKind, row.ErrorDetail)
	}
}

// A missing agent binary is a row, not a crash and not a silent skip.
func TestAMissingAgentBinaryIsASpawnFailureRow(t *testing.T) {
	r := newRig(t)
	p := startProvider(t, &provider.Script{})
	row := r.session(t, p, func(s *SessionSpec) { s.AgentBin = filepath.Join(r.tmp, "no-such-agent") })
	if row.OK || row.ErrorKind != wfb.KindSpawnFailure || row.ProcessState != wfb.StateSpawnFailure {
		t.Fatalf("ok=%v kind=%q state=%q, want spawn-failure", row.OK, row.ErrorKind, row.ProcessState)
	}
	if len(p.Requests()) != 0 {
		t.Errorf("the provider saw %d requests from an agent that never started", len(p.Requests()))
	}
	if !r.sqlIsNull(t, row.AttemptID, "duration_ms") || !r.sqlIsNull(t, row.AttemptID, "input_tokens") {
		t.Error("an agent that never ran has measurements in the file")
	}
}

// A hung provider is bounded by wfb's timeout; the row says timeout.
func TestAHungProviderIsBoundedByTheTimeout(t *testing.T) {
	r := newRig(t)
	p := startProvider(t, defaultReply(provider.Reply{Hang: true}))
	row := r.session(t, p, func(s *SessionSpec) {
		s.Timeout = 500 * time.Millisecond
		s.Grace = 500 * time.Millisecond
	})
	if row.OK || row.ErrorKind != wfb.KindTimeout {
		t.Fatalf("ok=%v kind=%q (%s), want timeout", row.OK, row.ErrorKind, row.ErrorDetail)
	}
	if row.DurationMS == nil || *row.DurationMS < 500 {
		t.Errorf("duration %v ms, want at least the timeout", row.DurationMS)
	}
}

// The digest check stands behind every boundary: a review session that
// changed the workspace is workspace-modified even when the agent says
// success. Run with no sandbox and no boundary, so the write gets through.
func TestAModifiedWorkspaceIsRecordedEvenWhenTheAgentSucceeded(t *testing.T) {
	r := newRig(t)
	artifactDir := openTempDir(t)
	artifact := filepath.Join(artifactDir, review.ReviewOutput)
	tamper := provider.Tool{Name: "Write", Input: map[string]any{"file_path": filepath.Join(r.clone, "source.ts"), "content": "tampered"}}
	write := provider.Tool{Name: "Write", Input: map[string]any{"file_path": artifact, "content": reviewJSON}}
	p := startProvider(t, defaultReply(provider.Reply{Tools: []provider.Tool{write, tamper}, Usage: provider.FullUsage(10, 5, 0, 0)}))
	// No sandbox and no boundary: the agent runs as wfb's own user.
	row := r.session(t, p, func(s *SessionSpec) {
		s.Review = &ReviewSpec{ArtifactPath: artifact}
		s.ExtraArgs = []string{"--add-dir", artifactDir}
	})
	if row.OK || row.ErrorKind != wfb.KindWorkspaceModified {
		t.Fatalf("ok=%v kind=%q (%s), want workspace-modified", row.OK, row.ErrorKind, row.ErrorDetail)
	}
}

// A key of no recognisable shape that the agent echoes is scrubbed by its
// value: pattern-based redaction alone would store it.
func TestASecretTheAgentEchoesIsScrubbedByValue(t *testing.T) {
	r := newRig(t)
	const key = "plainproxykey0123456789"
	echo := provider.Tool{Name: "Bash", Input: map[string]any{"command": "echo the key is $ANTHROPIC_API_KEY; echo $ANTHROPIC_API_KEY >&2"}}
	p := startProvider(t, defaultReply(provider.Reply{Text: "key: " + key, Tools: []provider.Tool{echo}, Usage: provider.FullUsage(1, 1, 0, 0)}))
	row := r.session(t, p, func(s *SessionSpec) { s.Env["ANTHROPIC_API_KEY"] = key })
	requireOK(t, row)
	for name, field := range map[string]string{"stdout": row.StdoutTail, "stderr": row.StderrTail, "result": row.ResultEvent, "detail": row.ErrorDetail} {
		if strings.Contains(field, key) {
			t.Errorf("the key reached the row's %s", name)
		}
	}
	if !strings.Contains(row.StdoutTail, store.Redacted) {
		t.Errorf("stdout tail shows no redaction; the echo never happened? %q", wfb.Clip(row.StdoutTail, 300))
	}
	data, err := os.ReadFile(r.db.Path())
	if err == nil && strings.Contains(string(data), key) {
		t.Error("the key reached the results file")
	}
}
