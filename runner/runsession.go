package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// SessionOptions configure RunSession: one session in a run of its own.
type SessionOptions struct {
	DB    *store.DB
	Label string
	// Harness is wfb's version, recorded with the run.
	Harness string
	// Cell is the session; RunSession gives it the new run's id. Its
	// WorkspaceWritable is what `wfb session --edit` asks for.
	Cell Cell
	// MockScript, when set, is the mock script the session talks to:
	// StartMock serves it and the cell's BaseURL becomes the provider's.
	// Without it the cell's BaseURL is a real provider's.
	MockScript string
	StartMock  func(path string) (baseURL string, stop func(), err error)
	// NoMeter runs the session unmetered (`wfb session --meter=off`);
	// otherwise StartMeter starts the proxy that meters it (see
	// SweepOptions.StartMeter).
	NoMeter    bool
	StartMeter func(db *store.DB) (Meter, error)
}

// SessionConfig is how a session run on its own was asked for, as its
// run's RunConfig records it. BaseURL is a real provider's (the mock's is
// a port of the moment); no key is ever part of it.
type SessionConfig struct {
	Agent      string `json:"agent"`
	Model      string `json:"model"`
	Sandbox    string `json:"sandbox"`
	Review     bool   `json:"review"`
	Edit       bool   `json:"edit"`
	BaseURL    string `json:"base_url"`
	MockScript string `json:"mock_script"`
	Timeout    string `json:"timeout"`
	Workspace  string `json:"workspace"`
}

// RunSession records a run of kind "session", runs the cell in it (its
// mock provider started first, when it has one) and finishes the run:
// complete, interrupted when ctx was cancelled, or aborted when the
// provider could not start or the row could not be written, which is then
// the error. It returns the session's row and the run's status.
func RunSession(ctx context.Context, o SessionOptions) (store.Result, string, error) {
	if o.NoMeter && o.Cell.RequireWitness {
		return store.Result{}, "", errors.New("a witness is required but the session is unmetered: nothing could witness its usage")
	}
	config, err := json.Marshal(o.config())
	if err != nil {
		return store.Result{}, "", err
	}
	run := store.Run{
		ID: store.NewID("run"), Label: o.Label, Kind: "session", StartedAt: time.Now().UTC(),
		Status: wfb.RunRunning, Harness: o.Harness, Config: string(config),
	}
	// Held from before its first row to after its last, as a sweep's run:
	// no other writer (a rescore, a merge) takes it meanwhile.
	if err := o.DB.HoldRun(run.ID); err != nil {
		return store.Result{}, "", err
	}
	defer o.DB.ReleaseRun(run.ID)
	if err := o.DB.CreateRun(ctx, run); err != nil {
		return store.Result{}, "", err
	}
	cell := o.Cell
	cell.RunID = run.ID
	if !o.NoMeter {
		p, err := o.startMeter()
		if err != nil {
			err = finishRun(ctx, o.DB, run.ID, wfb.RunAborted, err)
			return store.Result{}, wfb.RunAborted, err
		}
		defer p.Close()
		cell.Meter = p
	}
	if o.MockScript != "" {
		url, stop, err := o.StartMock(o.MockScript)
		if err != nil {
			err = finishRun(ctx, o.DB, run.ID, wfb.RunAborted, fmt.Errorf("start the mock provider: %w", err))
			return store.Result{}, wfb.RunAborted, err
		}
		defer stop()
		cell.BaseURL = url
	}
	last := &lastRecorder{DB: o.DB, ctx: ctx}
	row, err := RunCell(ctx, last, cell)
	if last.status != "" {
		return row, last.status, nil
	}
	status := wfb.RunComplete
	switch {
	case err != nil:
		status = wfb.RunAborted
	case ctx.Err() != nil:
		status = wfb.RunInterrupted
	}
	return row, status, finishRun(ctx, o.DB, run.ID, status, err)
}

// lastRecorder records a session's row and its run's end in one
// transaction (store.DB.InsertLastResult): the run's end is interrupted
// when the session's ctx was cancelled by then, else complete. When the
// end could not be recorded with the row, the row is recorded alone and
// status stays empty: the run's end is then RunSession's to record.
type lastRecorder struct {
	*store.DB
	ctx    context.Context
	status string
}

// RunCell finds what else the recorder is through it.
var (
	_ VersionBook    = (*lastRecorder)(nil)
	_ secretScrubber = (*lastRecorder)(nil)
)

func (r *lastRecorder) InsertResult(ctx context.Context, row *store.Result) error {
	status := wfb.RunComplete
	if r.ctx.Err() != nil {
		status = wfb.RunInterrupted
	}
	finished, err := r.DB.InsertLastResult(ctx, row, status, time.Now().UTC())
	if finished {
		r.status = status
	}
	return err
}

// startMeter starts the session's metering proxy.
func (o SessionOptions) startMeter() (Meter, error) {
	if o.StartMeter == nil {
		return nil, errors.New("the session is metered, but it was given no meter to start (SessionOptions.StartMeter)")
	}
	m, err := o.StartMeter(o.DB)
	if err != nil {
		return nil, fmt.Errorf("start the metering proxy: %w", err)
	}
	return m, nil
}

// config is the run's configuration.
func (o SessionOptions) config() RunConfig {
	c := o.Cell
	sc := &SessionConfig{
		Agent: c.Agent, Model: c.Model, Sandbox: c.Sandbox, Review: c.Review, Edit: c.WorkspaceWritable,
		MockScript: o.MockScript, Timeout: c.Timeout.String(), Workspace: c.Workspace,
	}
	if o.MockScript == "" {
		sc.BaseURL = c.BaseURL
	}
	return RunConfig{Command: "session", Session: sc, Meter: meterSetting(o.NoMeter), RequireWitness: c.RequireWitness}
}

// finishRun records the run's end with status, even after ctx was
// cancelled, keeping cause (if any) as the error.
func finishRun(ctx context.Context, db *store.DB, runID, status string, cause error) error {
	ferr := db.FinishRun(context.WithoutCancel(ctx), runID, status, time.Now().UTC())
	return errors.Join(cause, ferr)
}
