package store

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A tool name is the agent's text: however long, however its redaction
// lengthens it, however two of them collide, the attempt keeps its row —
// the names are clipped and merged, the calls still add up.
func TestToolNamesNeverCostTheRow(t *testing.T) {
	d, _ := newDB(t)
	long := strings.Repeat("A", 250)
	secretish := strings.Repeat("B", 190) + " a_token=y" // 200 bytes; its redaction is longer
	r := okResult("att-tools")
	r.ToolCalls = ptr(int64(6))
	r.ToolUses = []ToolUse{{Tool: long, Calls: 1}, {Tool: long + "B", Calls: 2}, {Tool: secretish, Calls: 1}, {Tool: "", Calls: 1}, {Tool: "Read", Calls: 1}}
	if err := d.InsertResult(context.Background(), r); err != nil {
		t.Fatalf("insert: %v", err)
	}
	rows, err := d.Results(context.Background(), "run-1")
	if err != nil {
		t.Fatal(err)
	}
	got := rows[0].ToolUses
	var sum int64
	for _, u := range got {
		if len(u.Tool) > MaxToolNameBytes || u.Tool == "" {
			t.Errorf("stored name of %d bytes: %.40q", len(u.Tool), u.Tool)
		}
		if strings.Contains(u.Tool, "a_token=y") {
			t.Errorf("a name kept what redaction removes: %q", u.Tool)
		}
		sum += u.Calls
	}
	if sum != 6 || len(got) != 4 {
		t.Errorf("uses %v: want 4 names (the two long ones clipped into one) adding up to 6", got)
	}
	if diff := cmp.Diff(ToolUse{Tool: strings.Repeat("A", 197) + "...", Calls: 3}, got[1]); diff != "" {
		t.Errorf("clipped name (-want +got):\n%s", diff)
	}
}
