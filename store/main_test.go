package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
)

// helperEnv names the part this test binary plays when a test re-executes
// it as a second process: "create" opens (creating) each file named on the
// command line, one after the other; "read" opens the one file named
// read-only and prints what it read.
const helperEnv = "WFB_STORE_TEST_HELPER"

// helperFailed is the helpers' exit status when what they tried failed
// (they print why), told apart from a failure to start them at all.
const helperFailed = 3

// TestMain lets the test binary be the other process of a test: a writer
// creating files while the test reads them, or a reader in a mount
// namespace of its own.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "create":
		os.Exit(helperCreate(os.Args[1:]))
	case "read":
		os.Exit(helperRead(os.Args[1]))
	case "upgrade":
		os.Exit(helperUpgrade(os.Args[1]))
	case "hold":
		os.Exit(helperHold(os.Args[1], os.Args[2:]))
	}
	os.Exit(m.Run())
}

func helperCreate(paths []string) int {
	for _, p := range paths {
		d, err := Open(context.Background(), p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return helperFailed
		}
		d.Close()
	}
	return 0
}

// helperHold opens path for writing, holds the runs named, says "held" and
// keeps them until its stdin ends.
func helperHold(path string, runs []string) int {
	d, err := Open(context.Background(), path)
	if err != nil {
		fmt.Println("error:", err)
		return helperFailed
	}
	defer d.Close()
	for _, id := range runs {
		if err := d.HoldRun(id); err != nil {
			fmt.Println("error:", err)
			return helperFailed
		}
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

func helperRead(path string) int {
	ctx := context.Background()
	d, err := OpenReadOnly(ctx, path)
	if err != nil {
		fmt.Println("error:", err)
		return helperFailed
	}
	defer d.Close()
	_, rows, err := d.Query(ctx, `SELECT count(*) FROM results`)
	if err != nil {
		fmt.Println("error:", err)
		return helperFailed
	}
	fmt.Printf("immutable=%v results=%v\n", d.Immutable(), rows[0][0])
	return 0
}

// helperUpgrade upgrades path and prints the error it got, if any.
func helperUpgrade(path string) int {
	if _, _, err := Upgrade(context.Background(), path); err != nil {
		fmt.Printf("error: %v (read-only: %v)\n", err, errors.Is(err, ErrReadOnly))
		return helperFailed
	}
	return 0
}
