package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wfbench/wfb/store"
)

// TestMergeTableSaysWhatEachSourceAdded stops `wfb merge` from hiding a
// table it copied (every table of every source is a row, zeros included)
// or from staying silent about shards whose run it combined.
func TestMergeTableSaysWhatEachSourceAdded(t *testing.T) {
	stats := []store.MergeStats{
		{Source: "s0.db", Runs: store.TableStats{Added: 1}, Results: store.TableStats{Added: 2}, Scores: store.TableStats{Present: 3}},
		{Source: "s1.db", Runs: store.TableStats{Present: 1}, Results: store.TableStats{Added: 1}, ModelUsage: store.TableStats{Added: 4}, Requests: store.TableStats{Added: 5}, Exchanges: store.TableStats{Added: 5}, Transcripts: store.TableStats{Added: 1}, RunsCombined: 1},
	}
	got := MergeTable("all.db", stats)
	want := &Table{
		Title:   "merge into all.db",
		Columns: []string{"source", "table", "added", "present"},
		Rows: [][]any{
			{"s0.db", "runs", int64(1), int64(0)}, {"s0.db", "results", int64(2), int64(0)},
			{"s0.db", "evidence", int64(0), int64(0)}, {"s0.db", "transcripts", int64(0), int64(0)},
			{"s0.db", "artifacts", int64(0), int64(0)},
			{"s0.db", "scores", int64(0), int64(3)}, {"s0.db", "model_usage", int64(0), int64(0)},
			{"s0.db", "requests", int64(0), int64(0)}, {"s0.db", "exchanges", int64(0), int64(0)},
			{"s1.db", "runs", int64(0), int64(1)}, {"s1.db", "results", int64(1), int64(0)},
			{"s1.db", "evidence", int64(0), int64(0)}, {"s1.db", "transcripts", int64(1), int64(0)},
			{"s1.db", "artifacts", int64(0), int64(0)},
			{"s1.db", "scores", int64(0), int64(0)}, {"s1.db", "model_usage", int64(4), int64(0)},
			{"s1.db", "requests", int64(5), int64(0)}, {"s1.db", "exchanges", int64(5), int64(0)},
		},
		Footnotes: []string{
			"present: already in the destination, identical; nothing was changed for it.",
			"1 time(s) a run already in the destination (another shard of it) had its status or times combined.",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MergeTable (-want +got):\n%s", diff)
	}
	if n := len(MergeTable("all.db", stats[:1]).Footnotes); n != 1 {
		t.Errorf("no run combined: %d footnotes, want only the one explaining present", n)
	}
}
