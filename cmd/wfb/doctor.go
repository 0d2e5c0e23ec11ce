package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/sandbox"
)

// doctorOptions are the flags of `wfb doctor`.
type doctorOptions struct {
	Format string
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

Exit status: 0 when at least one backend is usable, 1 when none is (no
session could run), 2 on bad input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return doctorRun(cmd.Context(), s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "table", "output format: table or json")
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
	if err := renderDoctor(s, statuses, opts.Format); err != nil {
		return err
	}
	for _, st := range statuses {
		if st.Usable {
			return nil
		}
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
