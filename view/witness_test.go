package view

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wfbench/wfb"
	"github.com/wfbench/wfb/store"
)

// TestTheAttemptPageSaysWhenUsageWasUnwitnessed stops an attempt whose
// usage only its agent witnessed (metered, yet no model request reached
// the meter) from looking measured on its page: the verdict and its check
// are shown under the outcome, where an attempt whose usage the wire
// witnessed shows nothing of the kind.
func TestTheAttemptPageSaysWhenUsageWasUnwitnessed(t *testing.T) {
	f := newFixture(t)
	db := f.openWritable(t)
	in := int64(2000)
	check := "unwitnessed: the agent reported usage (input 2000, output 300) but no request reached the meter"
	r := &store.Result{RunID: f.runB, Task: "t3", Arm: "a", Attempt: 1, StartedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), OK: true,
		ProcessState: wfb.StateExited, InputTokens: &in, UsageSource: wfb.UsageReported,
		UsageVerdict: wfb.VerdictUnwitnessed, UsageCheck: check}
	if err := db.InsertResult(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ts := newTestServer(t, f, Options{})
	_, body := get(t, ts.Client(), ts.URL+"/attempt/"+r.AttemptID)
	for _, want := range []string{`id="unwitnessed"`, "Usage unwitnessed:", "no request reached the meter"} {
		if !strings.Contains(body, want) {
			t.Errorf("the unwitnessed attempt's page lacks %q", want)
		}
	}
	if i, j := strings.Index(body, `id="unwitnessed"`), strings.Index(body, "<h2>Columns</h2>"); i < 0 || j < 0 || i > j {
		t.Errorf("the verdict is not shown before the columns (at %d, columns at %d)", i, j)
	}
	_, body = get(t, ts.Client(), ts.URL+"/attempt/"+f.ok)
	if strings.Contains(body, `id="unwitnessed"`) {
		t.Errorf("an attempt with no unwitnessed verdict shows one")
	}
}
