package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestLimitIsTheFloorOrRatioTimesLive(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, Floor},
		{40 << 20, Floor},
		{60 << 20, Floor},
		{100 << 20, 150 << 20},
		{1 << 40, 3 << 39},
	} {
		if got := Limit(c.live); got != c.want {
			t.Errorf("Limit(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestStartFollowsTheLiveHeap keeps 100 MiB live: after a collection the
// limit must have risen from the floor to 1.5 times it, so a working set
// above the floor never makes the collector run without pause.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: Start leaves the user's limit alone")
	}
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	Start()
	if got := debug.SetMemoryLimit(-1); got != Floor {
		t.Fatalf("after Start the limit is %d MiB, want the floor %d MiB", got>>20, Floor>>20)
	}
	live := make([][]byte, 100)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = byte(i)
	}
	got := int64(0)
	// The limit is re-tuned by a finalizer after each collection; give
	// the finalizer goroutine a few collections to run.
	for range 20 {
		runtime.GC()
		runtime.Gosched()
		if got = debug.SetMemoryLimit(-1); got > Floor {
			break
		}
	}
	runtime.KeepAlive(live)
	if got < 145<<20 {
		t.Errorf("with 100 MiB live the limit is %d MiB, want at least 145 MiB (1.5 times live)", got>>20)
	}
}
