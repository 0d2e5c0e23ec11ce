package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Status is one backend's preflight answer on this machine. Reason says
// why it is not usable, or, when it is, what it gives.
type Status struct {
	Backend string `json:"backend"`
	Usable  bool   `json:"usable"`
	Reason  string `json:"reason"`
}

// prepareStrongest prepares the first backend, strongest first, whose
// preflight passes for opts. The refusals of the stronger ones are kept
// (PassedOver); when every backend refuses, the refusal lists them all.
func prepareStrongest(ctx context.Context, opts Options) (*Sandbox, error) {
	var passed []Status
	for _, name := range Strength {
		o := opts
		o.Backend = name
		sb, err := Prepare(ctx, o)
		if err == nil {
			sb.passedOver = passed
			return sb, nil
		}
		var refused *RefusedError
		if !errors.As(err, &refused) {
			return nil, err
		}
		passed = append(passed, Status{Backend: name, Reason: refused.Reason})
	}
	same := true
	parts := make([]string, len(passed))
	for i, s := range passed {
		parts[i] = s.Backend + ": " + s.Reason
		same = same && s.Reason == passed[0].Reason
	}
	reason := "no backend passed preflight: " + strings.Join(parts, "; ")
	if same {
		// A problem of the layout, not of a backend: say it once.
		reason = passed[0].Reason
	}
	return nil, &RefusedError{Backend: Auto, Reason: reason}
}

// PassedOver lists the stronger backends Auto tried before this one, with
// why each was refused; empty when the backend was named.
func (s *Sandbox) PassedOver() []Status { return append([]Status(nil), s.passedOver...) }

// Note says what the prepared backend gives (and does not).
func (s *Sandbox) Note() string { return s.backend.note(s) }

// Strongest runs the preflight for opts (opts.Backend is ignored) on each
// backend, strongest first, and returns the first that passes with the
// reasons of those that did not. backend is "" when none passes; err is an
// infrastructure failure, not a refusal.
func Strongest(ctx context.Context, opts Options) (backend string, refused []Status, err error) {
	opts.Backend = Auto
	sb, err := Prepare(ctx, opts)
	var r *RefusedError
	switch {
	case errors.As(err, &r):
		return "", nil, nil
	case err != nil:
		return "", nil, err
	}
	defer sb.Close()
	return sb.Backend(), sb.PassedOver(), nil
}

// Doctor runs every backend's full preflight, live probes included, on a
// scratch workspace (a directory with one file, outside any real one) and
// reports each, strongest first. The scratch is removed before it returns.
func Doctor(ctx context.Context) ([]Status, error) {
	scratch, err := os.MkdirTemp("", "wfb-doctor-")
	if err != nil {
		return nil, fmt.Errorf("doctor scratch dir: %w", err)
	}
	defer os.RemoveAll(scratch)
	// Any session uid must reach it, as it must a real workspace.
	ws := filepath.Join(scratch, "workspace")
	if err := os.Chmod(scratch, 0o755); err != nil {
		return nil, fmt.Errorf("doctor scratch dir: %w", err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		return nil, fmt.Errorf("doctor scratch workspace: %w", err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("wfb doctor scratch workspace\n"), 0o644); err != nil {
		return nil, fmt.Errorf("doctor scratch workspace: %w", err)
	}
	var out []Status
	for _, name := range Strength {
		sb, err := Prepare(ctx, Options{Workspace: ws, Backend: name, AgentBin: "/bin/sh"})
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			out = append(out, Status{Backend: name, Reason: refused.Reason})
		case err != nil:
			return nil, err
		default:
			out = append(out, Status{Backend: name, Usable: true, Reason: sb.Note()})
			if err := sb.Close(); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
