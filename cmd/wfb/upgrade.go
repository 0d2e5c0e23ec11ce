package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/store"
)

func newUpgradeCmd(s *Streams) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "upgrade [--db FILE]",
		Short: "Migrate an older results file to this wfb's schema, in place",
		Long: `Migrate the results file to the schema this wfb reads, in place, and say
from which schema version to which. Every write command does the same when
it opens a file; the read-only commands (report, diff, trend, export, runs,
sql, view) never write, so they refuse an older file and name this command.

All pending migrations run in one transaction: the file ends at the new
version or stays at its old one. It takes the writer's hold on the file as
every writer does, so it is refused (exit 2) while the file is being
written through another of its names. A file in a place this process cannot
write (a read-only copy or mount) is refused: copy it somewhere writable and
upgrade the copy. A file written by a newer wfb is refused and left
untouched.

Exit status 0 when the file is at this wfb's schema (upgraded, or already
there); 2 for a missing, read-only, newer, foreign or damaged file, or one
holding rows a newer schema's rules refuse (it is left at its version).`,
		Example: `  wfb upgrade --db results/nightly.db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return upgradeRun(cmd.Context(), s, dbPath(db, s))
		},
	}
	dbFlag(cmd, &db)
	return cmd
}

func upgradeRun(ctx context.Context, s *Streams, path string) error {
	from, to, err := store.Upgrade(ctx, path)
	if err != nil {
		return err
	}
	if from == to {
		fmt.Fprintf(s.Out, "wfb upgrade: %s is at schema version %d already, the one this wfb reads; nothing to do\n", path, to)
		return nil
	}
	fmt.Fprintf(s.Out, "wfb upgrade: %s upgraded from schema version %d to %d\n", path, from, to)
	return nil
}
