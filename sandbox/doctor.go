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
		o.ProbeAtLaunch = false // the choice needs the probe now
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
	return nil, &RefusedError{Backend: Auto, Reason: noneUsable(passed)}
}

// noneUsable is the refusal of Auto when every backend was refused.
func noneUsable(passed []Status) string {
	same := true
	parts := make([]string, len(passed))
	for i, s := range passed {
		parts[i] = s.Backend + ": " + s.Reason
		same = same && s.Reason == passed[0].Reason
	}
	if same && len(passed) > 0 {
		// A problem of the layout, not of a backend: say it once.
		return passed[0].Reason
	}
	return "no backend passed preflight: " + strings.Join(parts, "; ")
}

// PassedOver lists the stronger backends Auto tried before this one, with
// why each was refused; empty when the backend was named.
func (s *Sandbox) PassedOver() []Status { return append([]Status(nil), s.passedOver...) }

// Note says what the prepared backend gives (and does not).
func (s *Sandbox) Note() string { return s.backend.note(s) }

// Strongest runs the full preflight of every configuration in configs
// (their Backend is ignored) on each backend, strongest first, and returns
// the first backend that passes them all, with the reasons of those that
// did not. A run that will start sessions of several configurations (a
// review's read-only workspace, a bug fix's writable one) resolves Auto
// once with all of them, so the backend it picks keeps every promise it
// will be used for. backend is "" when none passes (refused then holds every
// backend's reason); err is an infrastructure failure, not a refusal.
func Strongest(ctx context.Context, configs ...Options) (backend string, refused []Status, err error) {
	for _, name := range Strength {
		reason, err := preflightAll(ctx, name, configs)
		if err != nil {
			return "", nil, err
		}
		if reason == "" {
			return name, refused, nil
		}
		refused = append(refused, Status{Backend: name, Reason: reason})
	}
	return "", refused, nil
}

// Resolve turns the backend a run asked for into the concrete backend its
// sessions will use, once, before any of them starts: Auto becomes the
// strongest backend that passes the preflight of every configuration in
// configs (passedOver says why each stronger one did not); a named backend
// must pass them all itself. A refusal is a *RefusedError naming the
// backend and the reason; it is never answered with a weaker backend.
func Resolve(ctx context.Context, backend string, configs ...Options) (chosen string, passedOver []Status, err error) {
	if len(configs) == 0 {
		return "", nil, errors.New("resolve a sandbox backend: no configuration to check")
	}
	if backend == Auto {
		chosen, passedOver, err = Strongest(ctx, configs...)
		switch {
		case err != nil:
			return "", nil, err
		case chosen == "":
			return "", nil, &RefusedError{Backend: Auto, Reason: noneUsable(passedOver)}
		}
		return chosen, passedOver, nil
	}
	reason, err := preflightAll(ctx, backend, configs)
	switch {
	case err != nil:
		return "", nil, err
	case reason != "":
		return "", nil, &RefusedError{Backend: backend, Reason: reason}
	}
	return backend, nil, nil
}

// preflightAll prepares and closes the named backend for each
// configuration: "" when all pass, else the first refusal's reason.
func preflightAll(ctx context.Context, name string, configs []Options) (string, error) {
	for _, o := range configs {
		o.Backend = name
		sb, err := Prepare(ctx, o)
		var refused *RefusedError
		switch {
		case errors.As(err, &refused):
			return refused.Reason, nil
		case err != nil:
			return "", err
		}
		if err := sb.Close(); err != nil {
			return "", err
		}
	}
	return "", nil
}

// Doctor runs every backend's full preflight, live probes included, on a
// scratch workspace (a directory with one file, outside any real one) and
// reports each, strongest first. It checks the review configuration (the
// workspace read-only), the one with the boundary to prove; a run whose
// tasks edit their workspace checks that configuration too (Resolve) before
// any session starts. The scratch is removed before it returns.
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
