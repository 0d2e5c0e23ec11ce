package store

import (
	"context"
	"database/sql"
	"testing"
)

// rawInsert is the floor the store's inserts are measured against: the same
// attempt's results and evidence rows, with the same values, through
// modernc's driver with each statement prepared once, into the same file
// with the same schema, pragmas, indexes and triggers (the file Open made),
// but none of the store's own work (ids, scrubbing, redaction, validation,
// bounds).
type rawInsert struct {
	result, evidence *sql.Stmt
}

func newRawInsert(b *testing.B, d *DB) *rawInsert {
	b.Helper()
	ri := &rawInsert{}
	var err error
	if ri.result, err = d.db.Prepare(insertResultSQL); err != nil {
		b.Fatal(err)
	}
	if ri.evidence, err = d.db.Prepare(insertEvidenceSQL); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ri.result.Close(); ri.evidence.Close() })
	return ri
}

func (ri *rawInsert) insert(ctx context.Context, tx *sql.Tx, r *Result) error {
	if _, err := tx.StmtContext(ctx, ri.result).ExecContext(ctx, resultArgs(r)...); err != nil {
		return err
	}
	_, err := tx.StmtContext(ctx, ri.evidence).ExecContext(ctx, r.AttemptID, r.ResultEvent, r.StdoutTail, nil)
	return err
}

// BenchmarkRawInsert is BenchmarkInsertResult's floor: one attempt per
// transaction, raw prepared inserts.
func BenchmarkRawInsert(b *testing.B) {
	ctx := context.Background()
	d, _ := newDB(b)
	ri := newRawInsert(b, d)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := benchResult(i)
		if err := d.Tx(ctx, func(tx *sql.Tx) error { return ri.insert(ctx, tx, r) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawInsertBatched is BenchmarkInsertResultBatched's floor: 100
// attempts per transaction, raw prepared inserts.
func BenchmarkRawInsertBatched(b *testing.B) {
	ctx := context.Background()
	d, _ := newDB(b)
	ri := newRawInsert(b, d)
	benchBatches(b, d, func(tx *sql.Tx, r *Result) error { return ri.insert(ctx, tx, r) })
}
