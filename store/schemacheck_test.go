package store

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite store/schema.txt from the migrations")

// TestTheEmbeddedSchemaIsWhatTheMigrationsMake stops the schema a file is
// checked against (schema.txt) from drifting from the migrations: a new
// migration without `go test ./store -run EmbeddedSchema -update-schema`
// would make every file look tampered with.
func TestTheEmbeddedSchemaIsWhatTheMigrationsMake(t *testing.T) {
	got, err := migratedSchema(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for name, o := range got {
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s", o.kind, name, o.sql))
	}
	sort.Strings(lines)
	text := strings.Join(lines, "\n") + "\n"
	if *updateSchema {
		if err := os.WriteFile("schema.txt", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(schemaText, text); diff != "" {
		t.Errorf("schema.txt is not what the migrations make; run go test ./store -run EmbeddedSchema -update-schema (-embedded +migrations):\n%s", diff)
	}
}

// TestAFileWithItsGuardsDroppedIsTampered: each kind of change to the
// schema is named — a trigger dropped, a table's CHECK rewritten, an
// object added that is not wfb's — and a view of the user's own is not.
func TestAFileWithItsGuardsDroppedIsTampered(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	for _, q := range []string{
		`CREATE VIEW my_costs AS SELECT cost_usd FROM results`,
	} {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if diffs, err := schemaDifferences(ctx, d.db); err != nil || len(diffs) != 0 {
		t.Fatalf("a user's view: %v %v, want no difference", diffs, err)
	}
	for _, q := range []string{
		`DROP TRIGGER results_no_delete`,
		`DROP VIEW arm_summary_v`,
		`CREATE VIEW arm_summary_v AS SELECT 1 AS cells`,
		`CREATE TRIGGER sneaky AFTER INSERT ON results BEGIN SELECT 1; END`,
	} {
		if _, err := d.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	diffs, err := schemaDifferences(ctx, d.db)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"trigger results_no_delete is missing", "trigger sneaky is not wfb's", "view arm_summary_v was changed"}
	if !cmp.Equal(want, diffs) {
		t.Errorf("differences %q, want %q", diffs, want)
	}
}
