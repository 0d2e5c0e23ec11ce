package report

import (
	"fmt"
	"math"

	"github.com/wfbench/wfb/store"
)

// RescoreRow is one attempt of a rescored run, as `wfb rescore` lists it.
type RescoreRow struct {
	Attempt store.Result
	// Score is the new scoring; nil when the attempt was not scored, and
	// Note says why.
	Score *store.Score
	// Was is the attempt's latest weighted F1 before the rescore; nil when
	// none was measured.
	Was  *float64
	Note string
}

// RescoreTable builds the table of `wfb rescore`: one row per attempt with
// its new counts and ratios beside the weighted F1 it had before, and a
// footnote counting the attempts scored. What an attempt not scored has no
// measure of is NULL, never zero. For people (see Human) the ratios are
// rounded to three decimals, as the report's are; programs get them whole.
func RescoreTable(title string, rows []RescoreRow, f Format) *Table {
	t := &Table{
		Title: title,
		Columns: []string{"attempt_id", "task", "arm", "rep", "tp", "fp", "fn",
			"precision", "recall", "weighted_f1", "verdict_correct", "was_weighted_f1", "note"},
	}
	scored := 0
	for _, r := range rows {
		if r.Score != nil {
			scored++
		}
		t.Rows = append(t.Rows, r.cells(Human(f)))
	}
	t.Footnotes = append(t.Footnotes,
		fmt.Sprintf("%d of %d attempts scored; each scoring added a row to scores (scored_results_v shows the newest).", scored, len(rows)),
		"NULL: not measured (precision without findings, recall without labels, verdict_correct without a verdict).")
	return t
}

// cells spells the row in RescoreTable's column order, its ratios rounded
// for people when human.
func (r RescoreRow) cells(human bool) []any {
	ratio := func(p *float64) any {
		if p == nil {
			return nil
		}
		if human {
			return math.Round(*p*1000) / 1000
		}
		return *p
	}
	var tp, fp, fn, precision, recall, f1, verdict any
	if sc := r.Score; sc != nil {
		tp, fp, fn = int64(sc.TP), int64(sc.FP), int64(sc.FN)
		precision, recall, f1 = ratio(sc.Precision), ratio(sc.Recall), ratio(sc.WeightedF1)
		verdict = boolCell(sc.VerdictCorrect)
	}
	a := r.Attempt
	return []any{a.AttemptID, a.Task, a.Arm, int64(a.Rep), tp, fp, fn, precision, recall, f1, verdict, ratio(r.Was), r.Note}
}

// boolCell is a cell for a yes/no that may be unmeasured: 1, 0 or NULL.
func boolCell(p *bool) any {
	if p == nil {
		return nil
	}
	if *p {
		return int64(1)
	}
	return int64(0)
}
