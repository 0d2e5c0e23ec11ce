package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

func benchResult(i int) *Result {
	r := okResult(fmt.Sprintf("att-%09d", i))
	r.Rep = i
	r.InputTokens, r.OutputTokens = ptr(int64(2000)), ptr(int64(300))
	r.CacheReadInputTokens, r.CacheCreationInputTokens = ptr(int64(7000)), ptr(int64(1000))
	r.CostUSD, r.CostSource, r.NumTurns = ptr(0.42), "reported", ptr(int64(1))
	r.ResultEvent = `{"type":"result","subtype":"success","usage":{"input_tokens":2000,"output_tokens":300}}`
	r.StdoutTail = "ok\n"
	return r
}

// BenchmarkInsertResult measures one attempt written in its own transaction,
// the way a worker records each attempt as it finishes.
func BenchmarkInsertResult(b *testing.B) {
	ctx := context.Background()
	d, _ := newDB(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.InsertResult(ctx, benchResult(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertResultBatched measures attempts written 100 to a
// transaction, the way a merge copies rows.
func BenchmarkInsertResultBatched(b *testing.B) {
	ctx := context.Background()
	d, _ := newDB(b)
	benchBatches(b, d, func(tx *sql.Tx, r *Result) error { return d.InsertResultTx(ctx, tx, r) })
}

// benchBatches inserts b.N attempts with insert, 100 to a transaction.
func benchBatches(b *testing.B, d *DB, insert func(*sql.Tx, *Result) error) {
	ctx := context.Background()
	const batch = 100
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		err := d.Tx(ctx, func(tx *sql.Tx) error {
			for j := i; j < i+batch && j < b.N; j++ {
				if err := insert(tx, benchResult(j)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
