package inflight

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// TestATakerWaitsForRoomAndTakesNothingWhenItGivesUp stops a share from
// being handed out past the budget, and a taker that gave up from keeping
// the part it had taken (which would shrink the budget for good).
func TestATakerWaitsForRoomAndTakesNothingWhenItGivesUp(t *testing.T) {
	b := New(3 << 20)
	first, err := b.Take(context.Background(), 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	// 2 MiB of 3 are taken: a taker of 2 gets one unit, then waits.
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := b.Take(ctx, 2<<20)
		got <- err
	}()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("a taker past the budget got %v, want to wait until cancelled", err)
	}
	first.Release()
	all, err := b.Take(context.Background(), 3<<20)
	if err != nil {
		t.Fatalf("after every share was given back the whole budget is not free: %v", err)
	}
	all.Release()
	if big, err := b.Take(context.Background(), 1<<30); err != nil || big.units != 3 {
		t.Errorf("a body larger than the budget took %d units (%v), want the whole budget", big.units, err)
	}
}

// TestReadBodyReadsWhatTheLengthDeclares stops a declared length from
// cutting or padding a body.
func TestReadBodyReadsWhatTheLengthDeclares(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 5000)
	for _, cl := range []int64{5000, -1, 1 << 40} {
		got, err := ReadBody(bytes.NewReader(body), cl, 1<<20)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("content length %d: %d bytes (%v), want the 5000 sent", cl, len(got), err)
		}
	}
}
