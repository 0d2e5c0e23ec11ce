package meterstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/wfbench/wfb/meter"
	"github.com/wfbench/wfb/store"
)

// Writer is a meter.Sink that writes each record to the results file as it
// finishes, in the background: a proxy that runs for hours keeps what it
// saw even if it is killed. Records queue in memory while a write is in
// progress and are written together, in one transaction.
type Writer struct {
	db   *store.DB
	ch   chan meter.Record
	done chan struct{}

	// gate guards closed and sends on ch; mu guards the counts, so that
	// the loop never waits on a Record blocked on a full queue.
	gate    sync.RWMutex
	closed  bool
	mu      sync.Mutex
	written int
	dropped int // records that arrived after Close
	errs    []error
}

// NewWriter starts a writer into db. Close it to flush.
func NewWriter(db *store.DB) *Writer {
	w := &Writer{db: db, ch: make(chan meter.Record, 256), done: make(chan struct{})}
	go w.loop()
	return w
}

// Record queues r to be written. It blocks only while the queue is full.
func (w *Writer) Record(r meter.Record) {
	w.gate.RLock()
	defer w.gate.RUnlock()
	if w.closed {
		w.mu.Lock()
		w.dropped++
		w.mu.Unlock()
		return
	}
	w.ch <- r
}

func (w *Writer) loop() {
	defer close(w.done)
	for r := range w.ch {
		batch := []meter.Record{r}
	more:
		for len(batch) < 64 {
			select {
			case r, ok := <-w.ch:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		w.write(batch)
	}
}

// write inserts a batch in one transaction; should that fail, each record
// on its own, so that one bad record loses no other.
func (w *Writer) write(batch []meter.Record) {
	ctx := context.Background()
	if err := w.db.InsertRequests(ctx, Rows(batch)); err == nil {
		w.count(len(batch), nil)
		return
	}
	for _, r := range batch {
		if err := w.db.InsertRequests(ctx, Rows([]meter.Record{r})); err != nil {
			w.count(0, fmt.Errorf("request %d of attempt %q: %w", r.Seq, r.AttemptID, err))
			continue
		}
		w.count(1, nil)
	}
}

func (w *Writer) count(n int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written += n
	if err != nil {
		w.errs = append(w.errs, err)
	}
}

// Close writes what is queued and stops the writer. It returns how many
// records were written, and an error joining every write that failed and
// naming any record that came too late to be written.
func (w *Writer) Close() (int, error) {
	w.gate.Lock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
	w.gate.Unlock()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	errs := w.errs
	if w.dropped > 0 {
		errs = append(errs, fmt.Errorf("%d requests finished after the writer closed and were not recorded", w.dropped))
	}
	return w.written, errors.Join(errs...)
}
