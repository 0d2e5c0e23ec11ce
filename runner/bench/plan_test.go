package bench

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Plan orders cells repetition-major, skips expensive tasks unless asked
// or named, and refuses names the bench does not have.
func TestPlanSelectsAndOrdersCells(t *testing.T) {
	b := &Bench{Path: "b.yaml", Runs: 2,
		Tasks: []Task{{ID: "t1"}, {ID: "big", Expensive: true}},
		Arms:  []Arm{{ID: "x"}, {ID: "y"}}}
	tests := []struct {
		name string
		sel  Selection
		want []Cell
	}{
		{"default skips expensive", Selection{}, []Cell{{"t1", "x", 0}, {"t1", "y", 0}, {"t1", "x", 1}, {"t1", "y", 1}}},
		{"include expensive", Selection{IncludeExpensive: true, Runs: 1}, []Cell{{"t1", "x", 0}, {"t1", "y", 0}, {"big", "x", 0}, {"big", "y", 0}}},
		{"named expensive task runs", Selection{Tasks: []string{"big"}, Arms: []string{"y"}}, []Cell{{"big", "y", 0}, {"big", "y", 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := b.Plan(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
	_, err := b.Plan(Selection{Tasks: []string{"t9"}, Arms: []string{"z"}})
	var ie *SelectionError
	if !errors.As(err, &ie) || len(ie.Problems) != 2 {
		t.Fatalf("Plan with unknown names = %v, want a SelectionError naming both", err)
	}
}
