package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/wfbench/wfb/report"
	"github.com/wfbench/wfb/store"
)

// mergeOptions are the flags of `wfb merge`.
type mergeOptions struct {
	Into    string
	Format  string
	Sources []string
}

func newMergeCmd(s *Streams) *cobra.Command {
	opts := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge --into DST SRC...",
		Short: "Combine results files (e.g. the shards of a run) into one",
		Long: `Copy the runs, results, evidence, artifacts and scores of each SRC into DST
(created if missing), matching rows by id, all in one transaction.

Merging is idempotent: a row already in DST with the same content is left
alone, so merging a file twice adds nothing. A row whose id is in DST with
different content is a conflict: the merge is refused, naming the table, the
id and the differing column, and nothing is written.

The shards of one sharded run (wfb run --shard i/n) share a run id and merge
into one run: its status is the worst of the shards' (interrupted, aborted,
running, complete), its start the earliest, its finish the latest (none while
a shard is still running).

Every text value copied is redacted (a key in an error detail becomes
[REDACTED]; stderr says how many), and every row is checked before anything
is written: a negative count or cost, an error kind outside the vocabulary,
or a row the schema refuses rejects the source, naming the table, the id and
the column, and DST is not even created.

Sources are opened read-only. Exit status 2 for a conflict, an invalid row,
a missing or damaged file, a file written by a newer wfb, a run of the
sources that another wfb process is recording in DST, or DST in use by
another wfb through another name (a hard link or a bind mount of it); in
each case nothing is written (a DST the merge created is removed again).`,
		Example: `  wfb merge --into all.db shard-0.db shard-1.db shard-2.db`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return badInput("merge: name at least one SRC file to merge into --into DST")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Sources = args
			return mergeRun(cmd.Context(), s, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Into, "into", "", "destination results file (required; created if missing)")
	formatFlag(cmd, &opts.Format)
	return cmd
}

func mergeRun(ctx context.Context, s *Streams, opts *mergeOptions) error {
	format, err := outputFormat(s, opts.Format)
	if err != nil {
		return err
	}
	if opts.Into == "" {
		return badInput("merge: --into DST is required")
	}
	// Check every row of every source before DST is created or touched.
	for _, p := range opts.Sources {
		if err := checkSource(ctx, s, p); err != nil {
			return err
		}
	}
	// A conflict is found only while merging: a destination this merge
	// created goes again when it is refused, so that nothing is written.
	_, statErr := os.Lstat(opts.Into)
	created := errors.Is(statErr, fs.ErrNotExist)
	dst, err := store.Open(ctx, opts.Into)
	if err != nil {
		return err
	}
	defer dst.Close()
	stats, err := store.MergeFiles(ctx, dst, opts.Sources)
	if err != nil {
		if created {
			removeCreated(dst, opts.Into)
		}
		return err
	}
	for _, st := range stats {
		if st.Redacted > 0 {
			fmt.Fprintf(s.ErrOut, "wfb merge: %s: %d values of the rows copied looked like secrets and were redacted\n", st.Source, st.Redacted)
		}
	}
	return s.render(report.MergeTable(opts.Into, stats), format)
}

// checkSource opens a merge source read-only and checks every row a merge
// would copy (store.DB.CheckSource).
func checkSource(ctx context.Context, s *Streams, path string) error {
	src, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		return err
	}
	defer src.Close()
	sayImmutable(s, src)
	return src.CheckSource(ctx)
}

// removeCreated closes dst and removes the file a refused merge created at
// path, with its write-ahead log and shared-memory index.
func removeCreated(dst *store.DB, path string) {
	dst.Close()
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix) //nolint:errcheck // gone already, or nothing more to do
	}
}
