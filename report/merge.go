package report

import (
	"fmt"

	"github.com/wfbench/wfb/store"
)

// MergeTable builds the table `wfb merge` prints after merging stats'
// sources into the file into: for each source and each table, how many rows
// were added and how many were already there, identical. Runs whose status
// or times were combined with another shard's are counted in a footnote.
func MergeTable(into string, stats []store.MergeStats) *Table {
	t := &Table{
		Title:   "merge into " + into,
		Columns: []string{"source", "table", "added", "present"},
	}
	combined := 0
	for _, st := range stats {
		for _, ts := range mergedTables(st) {
			t.Rows = append(t.Rows, []any{st.Source, ts.name, int64(ts.Added), int64(ts.Present)})
		}
		combined += st.RunsCombined
	}
	t.Footnotes = append(t.Footnotes, "present: already in the destination, identical; nothing was changed for it.")
	if combined > 0 {
		t.Footnotes = append(t.Footnotes, fmt.Sprintf(
			"%d time(s) a run already in the destination (another shard of it) had its status or times combined.", combined))
	}
	return t
}

// mergedTable is what merging one source did to one table.
type mergedTable struct {
	name string
	store.TableStats
}

// mergedTables lists st's tables in the order the merge copies them,
// parents before children.
func mergedTables(st store.MergeStats) []mergedTable {
	return []mergedTable{
		{"runs", st.Runs}, {"results", st.Results}, {"evidence", st.Evidence},
		{"transcripts", st.Transcripts},
		{"artifacts", st.Artifacts}, {"scores", st.Scores}, {"model_usage", st.ModelUsage},
		{"requests", st.Requests}, {"exchanges", st.Exchanges},
	}
}
