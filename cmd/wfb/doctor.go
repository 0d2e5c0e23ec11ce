package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/runner"
	"github.com/wfbench/wfb/sandbox"
)

// doctorOptions are the flags of `wfb doctor`.
type doctorOptions struct {
	Format    string
	AgentBins []string
}

func newDoctorCmd(s *Streams) *cobra.Command {
	opts := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check which sandbox backends work on this machine",
		Long: `Run every sandbox backend's preflight on this machine, live: on a scratch
workspace, a probe started exactly like an agent must fail to write the
workspace, must succeed at temp+rename in the artifact dir, must hold no
capabilities and, for bwrap, must be proven to run in a PID namespace of its
own. Backends are listed strongest first; --sandbox auto picks the first
usable one.

--format table (the default) prints backend | usable | reason; --format json
prints a list of {"backend", "usable", "reason"}.

--agent-bin PATH (repeatable) also runs that agent CLI's version probe under
every usable backend, exactly as a session would (in the sandbox, as the
session's uid, with its private HOME): a backend can pass its own preflight
and still fail for one agent's install. Each check is a row "BACKEND agent
PATH", usable with the version it printed, or not with why.

Exit status: 0 when at least one backend is usable and every agent check
passed, 1 when none is (no session could run) or an agent check failed, 2 on
bad input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return doctorRun(cmd.Context(), s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output format: table or json")
	cmd.Flags().StringArrayVar(&opts.AgentBins, "agent-bin", nil, "also check this agent CLI under every usable backend (repeatable)")
	return cmd
}

func doctorRun(ctx context.Context, s *Streams, opts *doctorOptions) error {
	if opts.Format != "table" && opts.Format != "json" {
		return badInput("--format %q: want table or json", opts.Format)
	}
	statuses, err := sandbox.Doctor(ctx)
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	usable, agentsOK := false, true
	var checks []sandbox.Status
	for _, st := range statuses {
		if !st.Usable {
			continue
		}
		usable = true
		for _, bin := range opts.AgentBins {
			row := sandbox.Status{Backend: st.Backend + " agent " + bin, Usable: true}
			v, err := runner.CheckAgent(ctx, st.Backend, bin)
			if err != nil {
				row.Usable, row.Reason, agentsOK = false, err.Error(), false
			} else {
				row.Reason = "version " + v
			}
			checks = append(checks, row)
		}
	}
	if err := renderDoctor(s, append(statuses, checks...), opts.Format); err != nil {
		return err
	}
	if usable && agentsOK {
		return nil
	}
	return errNotOK
}

func renderDoctor(s *Streams, statuses []sandbox.Status, format string) error {
	if format == "json" {
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		if statuses == nil {
			statuses = []sandbox.Status{}
		}
		return enc.Encode(statuses)
	}
	rows := make([]report.DoctorRow, len(statuses))
	for i, st := range statuses {
		rows[i] = report.DoctorRow{Backend: st.Backend, Usable: st.Usable, Reason: st.Reason}
	}
	return s.render(report.DoctorTable(rows), report.FormatTable)
}
