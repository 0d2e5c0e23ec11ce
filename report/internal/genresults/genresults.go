// Command genresults writes a results file of generated attempts, for
// benchmarking reports at scale:
//
//	go run ./report/internal/genresults -rows 1000000 -out /tmp/big.db
//
// The file has two runs ("gen-a" labelled "day-1" and "gen-b" labelled
// "day-2") of rows/2 attempts each, over 50 tasks and 4 arms, with about 70%
// ok, a mix of error kinds, NULL usage where nothing ran, and cost NULL on
// about 1% of attempts. Values are a deterministic function of the row
// number, so every file with the same -rows is the same.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/wfbench/wfb/internal/testkit/resultsgen"
)

func main() {
	rows := flag.Int("rows", 1000000, "number of result rows")
	out := flag.String("out", "", "results file to create (must not exist)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "genresults: -out is required")
		os.Exit(2)
	}
	if err := resultsgen.Generate(context.Background(), *out, *rows); err != nil {
		fmt.Fprintln(os.Stderr, "genresults:", err)
		os.Exit(1)
	}
}
