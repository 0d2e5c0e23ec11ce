package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wfbench/wfb"
	sqlite3 "modernc.org/sqlite/lib"
)

// TimeLayout is how every time is stored: fixed-width RFC 3339 UTC with
// milliseconds, so that text order is time order.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// MaxEvidenceBytes bounds each evidence field (result event, stdout tail,
// stderr tail) as stored.
const MaxEvidenceBytes = 64 << 10

func formatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(TimeLayout, s) }

// NewID returns a unique id that sorts roughly by creation time, e.g.
// "run-20261130T024031Z-1f2e3d4c".
func NewID(prefix string) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(err)
	}
	return prefix + "-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// nullString maps "" to NULL: for optional text, empty means "not known".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// CreateRun records a new run. Free text (label, config) is redacted first.
func (d *DB) CreateRun(ctx context.Context, r Run) error {
	if r.ID == "" {
		return fmt.Errorf("create run: id is empty")
	}
	if r.StartedAt.IsZero() {
		return fmt.Errorf("create run %s: started_at is not set", r.ID)
	}
	status := r.Status
	if status == "" {
		status = wfb.RunRunning
	}
	var finished any
	if r.FinishedAt != nil {
		finished = formatTime(*r.FinishedAt)
	}
	_, err := d.db.ExecContext(ctx, `INSERT INTO runs
		(run_id, label, kind, started_at, finished_at, status, fingerprint, harness, config)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, nullString(d.clean(r.Label)), r.Kind, formatTime(r.StartedAt), finished, status,
		nullString(r.Fingerprint), r.Harness, nullString(d.clean(r.Config)))
	if err != nil {
		if sqliteExtCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY {
			return fmt.Errorf("create run %s: a run with this id is already recorded", r.ID)
		}
		return fmt.Errorf("create run %s: %w", r.ID, d.classify(err))
	}
	return nil
}

// FinishRun sets a run's final status and finish time. A run finishes once.
func (d *DB) FinishRun(ctx context.Context, id, status string, at time.Time) error {
	err := d.Tx(ctx, func(tx *sql.Tx) error { return d.finishRunTx(ctx, tx, id, status, at) })
	switch {
	case errors.Is(err, errNotFinished):
		if _, err := d.Run(ctx, id); err != nil {
			return fmt.Errorf("finish run %s: %w", id, err)
		}
		return fmt.Errorf("finish run %s: already finished", id)
	case err != nil:
		return fmt.Errorf("finish run %s: %w", id, err)
	}
	return nil
}

// errNotFinished says finishRunTx found no unfinished run of its id.
var errNotFinished = errors.New("no unfinished run of that id")

// finishRunTx ends run id in tx, counting its figures (see FinishRun);
// errNotFinished when no unfinished run has the id.
func (d *DB) finishRunTx(ctx context.Context, tx *sql.Tx, id, status string, at time.Time) error {
	switch status {
	case wfb.RunComplete, wfb.RunAborted, wfb.RunInterrupted:
	default:
		return fmt.Errorf("status %q is not one of %s, %s, %s", status, wfb.RunComplete, wfb.RunAborted, wfb.RunInterrupted)
	}
	res, err := tx.ExecContext(ctx,
		`UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ? AND finished_at IS NULL`,
		status, formatTime(at), id)
	if err != nil {
		return d.classify(err)
	}
	switch n, err := res.RowsAffected(); {
	case err != nil:
		return err
	case n == 0:
		return errNotFinished
	}
	// The run's figures are counted now, once, with its end.
	return countRunTx(ctx, tx, id)
}

// InsertLastResult records r, the last attempt of its run, and finishes
// the run with status at the time given, in one transaction (see
// InsertResult and FinishRun): a session run on its own writes its row
// and its run's end at once. Should the run's end fail to be recorded, r
// is recorded alone, as InsertResult records it — a row is never lost to
// its run's end — and finished says the run was not finished; err is r's
// own failure, if any.
func (d *DB) InsertLastResult(ctx context.Context, r *Result, status string, at time.Time) (finished bool, err error) {
	var endErr error
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		if err := d.InsertResultTx(ctx, tx, r); err != nil {
			return err
		}
		endErr = d.finishRunTx(ctx, tx, r.RunID, status, at)
		return endErr
	})
	switch {
	case err == nil:
		return true, nil
	case endErr != nil:
		// Rolled back whole: the row goes in on its own.
		return false, d.InsertResult(ctx, r)
	}
	return false, err
}

// ReopenRun marks a run running again: status running, finished_at NULL.
// `wfb run --resume` appends the attempts it makes to the same run (the
// cells already done stay as they are), so the run is unfinished again
// until FinishRun closes it anew with the resumed invocation's outcome.
// Results, evidence and the rest stay append-only; a run's status and
// finish time describe the latest invocation working on it, which is why
// this (with FinishRun, and merge combining shards of one run) is a
// sanctioned UPDATE of runs. A run still running (its process died) is left
// as it is; an unknown id wraps ErrNotFound.
func (d *DB) ReopenRun(ctx context.Context, id string) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		if err := d.updateRunTx(ctx, tx, "reopen run "+id, `UPDATE runs SET status = ?, finished_at = NULL WHERE run_id = ?`, wfb.RunRunning, id); err != nil {
			return err
		}
		// Running again: its kept figures are dropped with its status.
		return countRunTx(ctx, tx, id)
	})
}

// updateRun runs an UPDATE of one run, what naming it in errors; no row
// updated wraps ErrNotFound.
func (d *DB) updateRun(ctx context.Context, what, query string, args ...any) error {
	return d.Tx(ctx, func(tx *sql.Tx) error { return d.updateRunTx(ctx, tx, what, query, args...) })
}

// updateRunTx is updateRun inside tx.
func (d *DB) updateRunTx(ctx context.Context, tx *sql.Tx, what, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, d.classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// SetRunConfig replaces a run's recorded configuration. `wfb run
// --resume` uses it when the run continues under another cost cap, so that
// runs.config says the cap the run last ran under; like ReopenRun it is a
// sanctioned UPDATE of runs, which describe the latest invocation. An
// unknown id wraps ErrNotFound.
func (d *DB) SetRunConfig(ctx context.Context, id, config string) error {
	return d.updateRun(ctx, "set config of run "+id, `UPDATE runs SET config = ? WHERE run_id = ?`, config, id)
}

const runColumns = `run_id, label, kind, started_at, finished_at, status, fingerprint, harness, config`

// Run returns the run with the given id, or an error wrapping ErrNotFound.
func (d *DB) Run(ctx context.Context, id string) (Run, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE run_id = ?`, id)
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", id, d.classify(err))
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	if len(runs) == 0 {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	return runs[0], nil
}

// Runs returns every run, newest first.
func (d *DB) Runs(ctx context.Context) ([]Run, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY started_at DESC, run_id DESC`)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", d.classify(err))
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return runs, nil
}

func scanRuns(rows *sql.Rows) ([]Run, error) {
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var (
			r                           Run
			label, finished, fp, config sql.NullString
			started                     string
		)
		if err := rows.Scan(&r.ID, &label, &r.Kind, &started, &finished, &r.Status, &fp, &r.Harness, &config); err != nil {
			return nil, err
		}
		var err error
		if r.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("run %s: started_at: %w", r.ID, err)
		}
		if finished.Valid {
			t, err := parseTime(finished.String)
			if err != nil {
				return nil, fmt.Errorf("run %s: finished_at: %w", r.ID, err)
			}
			r.FinishedAt = &t
		}
		r.Label, r.Fingerprint, r.Config = label.String, fp.String, config.String
		runs = append(runs, r)
	}
	return runs, rows.Err()
}

// InsertResult records one attempt and its evidence in a transaction of its
// own. See InsertResultTx.
func (d *DB) InsertResult(ctx context.Context, r *Result) error {
	return d.Tx(ctx, func(tx *sql.Tx) error { return d.InsertResultTx(ctx, tx, r) })
}

// InsertResultTx records one attempt inside tx. Results are append-only: an
// attempt id already recorded is refused with ErrDuplicateAttempt, never
// overwritten. An empty AttemptID is filled in with a new id. Free text
// (every text the agent controls: error detail, evidence, session id,
// model names, version, verdict) is redacted IN r, and scrubbed of the
// secrets registered with ScrubSecrets, so that whatever the caller prints
// next is as clean as the file, and evidence is bounded to
// MaxEvidenceBytes per field, before anything is written.
func (d *DB) InsertResultTx(ctx context.Context, tx *sql.Tx, r *Result) error {
	if r.AttemptID == "" {
		r.AttemptID = NewID("att")
	}
	r.scrubText(d.clean)
	if err := validateResult(r); err != nil {
		return err
	}
	_, err := d.execTx(ctx, tx, insertResultSQL, resultArgs(r)...)
	if err != nil {
		switch sqliteExtCode(err) {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("insert result %s: %w (results are append-only)", r.AttemptID, ErrDuplicateAttempt)
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return fmt.Errorf("insert result %s: attempt %d of %s/%s/%d in run %s is already recorded under another attempt id: %w",
				r.AttemptID, r.Attempt, r.Task, r.Arm, r.Rep, r.RunID, ErrDuplicateAttempt)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("insert result %s: run %q is not recorded", r.AttemptID, r.RunID)
		}
		return fmt.Errorf("insert result %s: %w", r.AttemptID, d.classify(err))
	}
	if err := d.insertModelUsage(ctx, tx, r.AttemptID, r.ModelUsage); err != nil {
		return fmt.Errorf("insert result %s: %w", r.AttemptID, d.classify(err))
	}
	if err := d.insertToolUses(ctx, tx, r); err != nil {
		return fmt.Errorf("insert result %s: %w", r.AttemptID, d.classify(err))
	}
	if err := d.insertTranscript(ctx, tx, r); err != nil {
		return fmt.Errorf("insert result %s: %w", r.AttemptID, d.classify(err))
	}
	if err := d.insertAttemptRequests(ctx, tx, r); err != nil {
		return fmt.Errorf("insert result %s: %w", r.AttemptID, err)
	}
	event := headBounded(r.ResultEvent, MaxEvidenceBytes)
	stdout := tailBounded(r.StdoutTail, MaxEvidenceBytes)
	stderr := tailBounded(r.StderrTail, MaxEvidenceBytes)
	if event == "" && stdout == "" && stderr == "" {
		return nil
	}
	_, err = d.execTx(ctx, tx, insertEvidenceSQL,
		r.AttemptID, nullString(event), nullString(stdout), nullString(stderr))
	if err != nil {
		return fmt.Errorf("insert evidence %s: %w", r.AttemptID, d.classify(err))
	}
	return nil
}

// validateResult refuses rows that would misstate what happened, with a
// message naming the field. The CHECK constraints in the schema hold the
// same line for writers that bypass this package.
func validateResult(r *Result) error {
	where := "insert result " + r.AttemptID
	switch {
	case r.RunID == "":
		return fmt.Errorf("%s: run_id is empty", where)
	case r.Task == "":
		return fmt.Errorf("%s: task is empty", where)
	case r.Arm == "":
		return fmt.Errorf("%s: arm is empty", where)
	case r.Rep < 0:
		return fmt.Errorf("%s: rep %d is negative", where, r.Rep)
	case r.Attempt < 1:
		return fmt.Errorf("%s: attempt %d must be 1 or more", where, r.Attempt)
	case r.StartedAt.IsZero():
		return fmt.Errorf("%s: started_at is not set", where)
	case r.OK && r.ErrorKind != "":
		return fmt.Errorf("%s: ok is true but error_kind is %q", where, r.ErrorKind)
	case !r.OK && r.ErrorKind == "":
		return fmt.Errorf("%s: ok is false but error_kind is empty (a failure must say why)", where)
	case !r.OK && !slices.Contains(wfb.ErrorKinds, r.ErrorKind):
		return fmt.Errorf("%s: error_kind %q is not one of %s", where, r.ErrorKind, strings.Join(wfb.ErrorKinds, ", "))
	}
	return validateMeasures(where, r)
}

// checkCount refuses a count, duration or size below zero or past
// wfb.MaxCount: the views SUM them, and a sum past 2^63 fails every query
// that reads it ("integer overflow").
func checkCount(col string, v *int64) error {
	switch {
	case v == nil:
	case *v < 0:
		return fmt.Errorf("%s %d is negative", col, *v)
	case *v > wfb.MaxCount:
		return fmt.Errorf("%s %d is past wfb's bound on a count (%s)", col, *v, wfb.MaxCountText)
	}
	return nil
}

// validateMeasures refuses a negative count or duration (or one past
// wfb.MaxCount) and a cost that is
// negative or not finite: a measurement is never below zero, and a cost
// that cannot be measured is NULL.
func validateMeasures(where string, r *Result) error {
	for _, c := range []struct {
		col string
		v   *int64
	}{
		{"duration_ms", r.DurationMS}, {"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens},
		{"cache_read_input_tokens", r.CacheReadInputTokens}, {"cache_creation_input_tokens", r.CacheCreationInputTokens},
		{"num_turns", r.NumTurns}, {"findings_count", r.FindingsCount},
		{"reported_input_tokens", r.ReportedInputTokens}, {"reported_cached_input_tokens", r.ReportedCachedInputTokens},
		{"reasoning_output_tokens", r.ReasoningOutputTokens}, {"api_retries", r.APIRetries}, {"permission_denials", r.PermissionDenials},
		{"metered_input_tokens", r.MeteredInputTokens}, {"metered_output_tokens", r.MeteredOutputTokens},
		{"metered_cache_read_input_tokens", r.MeteredCacheReadInputTokens}, {"metered_cache_creation_input_tokens", r.MeteredCacheCreationInputTokens},
		{"tool_calls", r.ToolCalls},
	} {
		if err := checkCount(c.col, c.v); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	for _, c := range []struct {
		col string
		v   *float64
	}{{"cost_usd", r.CostUSD}, {"metered_cost_usd", r.MeteredCostUSD}} {
		if c.v != nil && (*c.v < 0 || math.IsInf(*c.v, 0) || math.IsNaN(*c.v)) {
			return fmt.Errorf("%s: %s %v is not a finite, non-negative number (an unmeasured cost is NULL)", where, c.col, *c.v)
		}
	}
	switch r.UsageSource {
	case "", wfb.UsageMetered, wfb.UsageReported:
	default:
		return fmt.Errorf("%s: usage_source %q is not one of %s, %s (or empty)", where, r.UsageSource, wfb.UsageMetered, wfb.UsageReported)
	}
	for _, c := range []struct {
		col     string
		verdict wfb.Verdict
		text    string
		allowed []wfb.Verdict
	}{
		{"usage_verdict", r.UsageVerdict, r.UsageCheck, wfb.Verdicts},
		{"cost_verdict", r.CostVerdict, r.CostCheck, []wfb.Verdict{wfb.VerdictAgree, wfb.VerdictDisagree}},
	} {
		if err := checkVerdict(c.verdict, c.text, c.allowed); err != nil {
			return fmt.Errorf("%s: %s: %w", where, c.col, err)
		}
	}
	return nil
}

// checkVerdict holds a check's typed verdict and its text together: the
// verdict is one of allowed, set exactly when the text is, and the text
// says it first.
func checkVerdict(v wfb.Verdict, text string, allowed []wfb.Verdict) error {
	switch {
	case v == "" && text == "":
		return nil
	case !slices.Contains(allowed, v):
		return fmt.Errorf("verdict %q is not one of %v (with its text %q)", v, allowed, text)
	case text != string(v) && !strings.HasPrefix(text, string(v)+": "):
		return fmt.Errorf("the text %q does not say the verdict %q", text, v)
	}
	return nil
}

const resultColumns = `r.run_id, r.attempt_id, r.task, r.arm, r.rep, r.attempt, r.retry_of,
	r.agent, r.agent_version, r.model, r.sandbox, r.started_at, r.duration_ms,
	r.ok, r.error_kind, r.error_detail, r.process_state, r.exit_code,
	r.input_tokens, r.output_tokens, r.cache_read_input_tokens, r.cache_creation_input_tokens,
	r.cost_usd, r.cost_source, r.num_turns, r.session_id, r.verdict, r.findings_count,
	r.usage_semantics, r.reported_input_tokens, r.reported_cached_input_tokens,
	r.reasoning_output_tokens, r.api_retries, r.permission_denials,
	r.metered_input_tokens, r.metered_output_tokens, r.metered_cache_read_input_tokens, r.metered_cache_creation_input_tokens,
	r.usage_source, r.usage_check, r.metered_cost_usd, r.cost_check, r.agent_duration_ms,
	r.usage_verdict, r.cost_verdict, r.tool_calls,
	e.result_event, e.stdout_tail, e.stderr_tail`

// Results returns the attempts of a run, with their evidence, ordered by
// start time then attempt id.
func (d *DB) Results(ctx context.Context, runID string) ([]Result, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+resultColumns+`
		FROM results r LEFT JOIN evidence e ON e.attempt_id = r.attempt_id
		WHERE r.run_id = ? ORDER BY r.started_at, r.attempt_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("results of run %s: %w", runID, d.classify(err))
	}
	defer rows.Close()
	var out []Result
	for rows.Next() {
		r, err := scanResult(rows)
		if err != nil {
			return nil, fmt.Errorf("results of run %s: %w", runID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results of run %s: %w", runID, err)
	}
	if err := d.attachModelUsage(ctx, runID, out); err != nil {
		return nil, fmt.Errorf("results of run %s: %w", runID, err)
	}
	if err := d.attachToolUses(ctx, runID, out); err != nil {
		return nil, fmt.Errorf("results of run %s: %w", runID, err)
	}
	return out, nil
}

// scanResult reads one row of resultColumns.
func scanResult(s Scanner) (Result, error) {
	var (
		r                                                                  Result
		retryOf, agent, agentVersion, model, sandbox                       sql.NullString
		errKind, errDetail, state, costSource, sessionID, verdict          sql.NullString
		event, stdout, stderr                                              sql.NullString
		duration, exit, in, outTok, cacheRead, cacheCreate, turns, finding sql.NullInt64
		cost                                                               sql.NullFloat64
		semantics                                                          sql.NullString
		repIn, repCached, reasoning, retries, denials, agentDuration       sql.NullInt64
		toolCalls                                                          sql.NullInt64
		m                                                                  meteredColumns
		started                                                            string
		ok                                                                 int64
	)
	if err := s.Scan(&r.RunID, &r.AttemptID, &r.Task, &r.Arm, &r.Rep, &r.Attempt, &retryOf,
		&agent, &agentVersion, &model, &sandbox, &started, &duration,
		&ok, &errKind, &errDetail, &state, &exit,
		&in, &outTok, &cacheRead, &cacheCreate,
		&cost, &costSource, &turns, &sessionID, &verdict, &finding,
		&semantics, &repIn, &repCached, &reasoning, &retries, &denials,
		&m.in, &m.out, &m.cacheRead, &m.cacheCreate, &m.source, &m.check, &m.cost, &m.costCheck, &agentDuration, &m.verdict, &m.costVerdict, &toolCalls,
		&event, &stdout, &stderr); err != nil {
		return r, err
	}
	t, err := parseTime(started)
	if err != nil {
		return r, fmt.Errorf("result %s: started_at: %w", r.AttemptID, err)
	}
	r.StartedAt = t
	r.OK = ok == 1
	r.RetryOf, r.Agent, r.AgentVersion, r.Model, r.Sandbox = retryOf.String, agent.String, agentVersion.String, model.String, sandbox.String
	r.ErrorKind, r.ErrorDetail, r.ProcessState = errKind.String, errDetail.String, state.String
	r.CostSource, r.SessionID, r.Verdict = costSource.String, sessionID.String, verdict.String
	r.ResultEvent, r.StdoutTail, r.StderrTail = event.String, stdout.String, stderr.String
	r.DurationMS, r.ExitCode = intPtr(duration), intPtr(exit)
	r.InputTokens, r.OutputTokens = intPtr(in), intPtr(outTok)
	r.CacheReadInputTokens, r.CacheCreationInputTokens = intPtr(cacheRead), intPtr(cacheCreate)
	r.NumTurns, r.FindingsCount = intPtr(turns), intPtr(finding)
	r.CostUSD = floatPtr(cost)
	r.UsageSemantics = semantics.String
	r.ReportedInputTokens, r.ReportedCachedInputTokens = intPtr(repIn), intPtr(repCached)
	r.ReasoningOutputTokens, r.APIRetries, r.PermissionDenials = intPtr(reasoning), intPtr(retries), intPtr(denials)
	r.AgentDurationMS = intPtr(agentDuration)
	r.ToolCalls = intPtr(toolCalls)
	m.into(&r)
	return r, nil
}

// meteredColumns are the columns of migration 0006 as scanned.
type meteredColumns struct {
	in, out, cacheRead, cacheCreate sql.NullInt64
	source, check, costCheck        sql.NullString
	verdict, costVerdict            sql.NullString
	cost                            sql.NullFloat64
}

func (m *meteredColumns) into(r *Result) {
	r.MeteredInputTokens, r.MeteredOutputTokens = intPtr(m.in), intPtr(m.out)
	r.MeteredCacheReadInputTokens, r.MeteredCacheCreationInputTokens = intPtr(m.cacheRead), intPtr(m.cacheCreate)
	r.UsageSource, r.UsageCheck, r.CostCheck = m.source.String, m.check.String, m.costCheck.String
	r.MeteredCostUSD = floatPtr(m.cost)
	r.UsageVerdict, r.CostVerdict = wfb.Verdict(m.verdict.String), wfb.Verdict(m.costVerdict.String)
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// tailBounded keeps the last max bytes of s (on a UTF-8 boundary) and says
// how much was cut: for a process's output the end is where the error is.
func tailBounded(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return fmt.Sprintf("[wfb: truncated, first %d bytes omitted]\n", cut) + s[cut:]
}

// headBounded keeps the first max bytes of s (on a UTF-8 boundary) and says
// how much was cut.
func headBounded(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[wfb: truncated, last %d bytes omitted]", len(s)-cut)
}

// sqliteExtCode returns the extended SQLite result code behind err, or -1.
func sqliteExtCode(err error) int {
	var se interface{ Code() int }
	if errors.As(err, &se) {
		return se.Code()
	}
	return -1
}

// resultArgs are r's values in insertResultSQL's column order.
func resultArgs(r *Result) []any {
	ok := 0
	if r.OK {
		ok = 1
	}
	return []any{r.RunID, r.AttemptID, r.Task, r.Arm, r.Rep, r.Attempt, nullString(r.RetryOf),
		nullString(r.Agent), nullString(r.AgentVersion), nullString(r.Model), nullString(r.Sandbox),
		formatTime(r.StartedAt), nullInt(r.DurationMS),
		ok, nullString(r.ErrorKind), nullString(r.ErrorDetail), nullString(r.ProcessState), nullInt(r.ExitCode),
		nullInt(r.InputTokens), nullInt(r.OutputTokens), nullInt(r.CacheReadInputTokens), nullInt(r.CacheCreationInputTokens),
		nullFloat(r.CostUSD), nullString(r.CostSource), nullInt(r.NumTurns), nullString(r.SessionID),
		nullString(r.Verdict), nullInt(r.FindingsCount),
		nullString(r.UsageSemantics), nullInt(r.ReportedInputTokens), nullInt(r.ReportedCachedInputTokens),
		nullInt(r.ReasoningOutputTokens), nullInt(r.APIRetries), nullInt(r.PermissionDenials),
		nullInt(r.MeteredInputTokens), nullInt(r.MeteredOutputTokens), nullInt(r.MeteredCacheReadInputTokens), nullInt(r.MeteredCacheCreationInputTokens),
		nullString(r.UsageSource), nullString(r.UsageCheck), nullFloat(r.MeteredCostUSD), nullString(r.CostCheck),
		nullInt(r.AgentDurationMS), nullString(string(r.UsageVerdict)), nullString(string(r.CostVerdict)), nullInt(r.ToolCalls)}
}
