package view

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

type attemptData struct {
	Title     string
	L         links
	ID, RunID string
	Label     string
	OK        bool
	Kind      string
	Detail    string
	// Unwitnessed is the usage check of an attempt whose usage only its
	// agent witnessed (usage_verdict unwitnessed), shown under the
	// outcome; "" otherwise.
	Unwitnessed string
	RetryOf     string
	Columns     []field
	Cell        []cellAttempt // every attempt of the cell, this one marked
	ModelUsage  *report.Table
	Evidence    []field
	Artifact    *artifact
	Review      *reviewView
	Scores      *report.Table
	Transcript  *transcriptView
	Requests    *report.Table
	// ToolCalls says how many tool calls the attempt made ("not measured"
	// for NULL; "" for a file without tool calls), and Tools lists them by
	// name.
	ToolCalls  string
	Tools      *report.Table
	Prev, Next string // the previous and next failed attempts of the run
}

// field is one named value.
type field struct {
	Name  string
	Value any
}

// cellAttempt is one attempt of the same cell.
type cellAttempt struct {
	ID      string
	Attempt int
	RetryOf string
	OK      bool
	Kind    string
	This    bool
}

type artifact struct {
	Name, SHA256 string
	Bytes        int64
	Content      string
}

func (s *Server) attemptPage(r *http.Request, l links) (string, any, error) {
	d, err := s.attemptData(r.Context(), l, r.PathValue("id"))
	return "attempt", d, err
}

func (s *Server) attemptData(ctx context.Context, l links, id string) (*attemptData, error) {
	cols, rows, err := s.db.Query(ctx, `SELECT r.*, u.label AS run_label FROM results r JOIN runs u USING (run_id) WHERE r.attempt_id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("attempt %q: %w", id, errNotFound)
	}
	d := &attemptData{L: l, ID: id, Title: "Attempt " + id}
	v := map[string]any{}
	for i, c := range cols {
		v[c] = rows[0][i]
		if c != "run_label" {
			d.Columns = append(d.Columns, field{c, rows[0][i]})
		}
	}
	d.RunID, d.Label, d.OK = str(v["run_id"]), str(v["run_label"]), num(v["ok"]) == 1
	d.Kind, d.Detail, d.RetryOf = str(v["error_kind"]), str(v["error_detail"]), str(v["retry_of"])
	if str(v["usage_verdict"]) == string(wfb.VerdictUnwitnessed) {
		d.Unwitnessed = str(v["usage_check"])
	}
	if _, has := v["tool_calls"]; has {
		d.ToolCalls = "not measured"
		if n := v["tool_calls"]; n != nil {
			d.ToolCalls = value(n)
		}
	}
	key := []any{d.RunID, v["task"], v["arm"], v["rep"], v["attempt"]}
	for _, step := range []func() error{
		func() error { return s.cellAttempts(ctx, d, key) },
		func() error { return s.failedNeighbours(ctx, d, key) },
		func() error { return s.attemptTables(ctx, d) },
		func() error { return s.evidence(ctx, d) },
		func() error { return s.artifact(ctx, d) },
		func() error { return s.reviewOf(ctx, d, str(v["verdict"])) },
		func() error { return s.transcript(ctx, d) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// cellAttempts lists every attempt of the attempt's cell: its retries,
// linked both ways.
func (s *Server) cellAttempts(ctx context.Context, d *attemptData, key []any) error {
	_, rows, err := s.db.Query(ctx, `SELECT attempt_id, attempt, retry_of, ok, error_kind FROM results
		WHERE run_id = ? AND task = ? AND arm = ? AND rep = ? ORDER BY attempt`, key[:4]...)
	if err != nil {
		return err
	}
	for _, v := range rows {
		id := str(v[0])
		d.Cell = append(d.Cell, cellAttempt{ID: id, Attempt: int(num(v[1])), RetryOf: str(v[2]),
			OK: num(v[3]) == 1, Kind: str(v[4]), This: id == d.ID})
	}
	return nil
}

// failedNeighbours finds the failed attempts of the run just before and
// after this one in (task, arm, rep, attempt) order: a walk of the unique
// index either way.
func (s *Server) failedNeighbours(ctx context.Context, d *attemptData, key []any) error {
	for _, dir := range []struct {
		to  *string
		cmp string
		ord string
	}{{&d.Next, ">", "ASC"}, {&d.Prev, "<", "DESC"}} {
		q := `SELECT attempt_id FROM results WHERE run_id = ? AND ok = 0 AND (task, arm, rep, attempt) ` + dir.cmp +
			` (?, ?, ?, ?) ORDER BY task ` + dir.ord + `, arm ` + dir.ord + `, rep ` + dir.ord + `, attempt ` + dir.ord + ` LIMIT 1`
		_, rows, err := s.db.Query(ctx, q, key...)
		if err != nil {
			return err
		}
		if len(rows) == 1 {
			*dir.to = str(rows[0][0])
		}
	}
	return nil
}

// attemptTables reads the attempt's per-model usage, score history and
// metered requests.
func (s *Server) attemptTables(ctx context.Context, d *attemptData) error {
	var err error
	if d.ModelUsage, err = s.table(ctx, "model usage", `SELECT * FROM model_usage WHERE attempt_id = ?`, d.ID); err != nil {
		return err
	}
	if d.Scores, err = s.table(ctx, "scores (oldest first)", `SELECT scored_at, labels_digest, tp, fp, fn, precision, recall,
		weighted_f1, verdict_correct, matches FROM scores WHERE attempt_id = ? ORDER BY scored_at, score_id`, d.ID); err != nil {
		return err
	}
	d.Requests, err = s.table(ctx, "wire requests (metered)", `SELECT seq, method, path, protocol, requested_model,
		response_model, status, latency_ms, ttfb_ms, streamed, error_type, proxy_error, retry_of, billed,
		input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, reasoning_output_tokens,
		usage_problem, error_detail FROM requests WHERE attempt_id = ? ORDER BY seq`, d.ID)
	if err != nil || d.ToolCalls == "" {
		return err
	}
	d.Tools, err = s.table(ctx, "tool uses", `SELECT tool, calls FROM tool_uses WHERE attempt_id = ? ORDER BY calls DESC, tool`, d.ID)
	return err
}

func (s *Server) evidence(ctx context.Context, d *attemptData) error {
	cols, rows, err := s.db.Query(ctx, `SELECT result_event, stdout_tail, stderr_tail FROM evidence WHERE attempt_id = ?`, d.ID)
	if err != nil || len(rows) == 0 {
		return err
	}
	for i, c := range cols {
		if rows[0][i] != nil {
			d.Evidence = append(d.Evidence, field{c, str(rows[0][i])})
		}
	}
	return nil
}

func (s *Server) artifact(ctx context.Context, d *attemptData) error {
	_, rows, err := s.db.Query(ctx, `SELECT name, sha256, bytes, content FROM artifacts WHERE attempt_id = ?`, d.ID)
	if err != nil || len(rows) == 0 {
		return err
	}
	v := rows[0]
	d.Artifact = &artifact{Name: str(v[0]), SHA256: str(v[1]), Bytes: int64(num(v[2])), Content: str(v[3])}
	return nil
}

// transcript decodes the attempt's kept output, checks its digest and
// reads it as a conversation. A transcript that cannot be decoded is
// shown as the reason, never dropped silently.
func (s *Server) transcript(ctx context.Context, d *attemptData) error {
	t, err := s.db.Transcript(ctx, d.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	tv := &transcriptView{Raw: t.RawSize, Kept: t.KeptSize, Truncated: t.Truncated, Prompt: t.Prompt}
	d.Transcript = tv
	out, err := t.Kept()
	if err != nil {
		tv.Problem = err.Error()
		return nil
	}
	tv.Turns = parseTranscript(out)
	return nil
}
