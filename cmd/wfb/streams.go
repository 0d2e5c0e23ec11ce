package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// Streams are the standard streams a command may use. Nothing but main
// touches os.Stdout; commands write to these.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// OutIsTerminal says Out is a terminal: tables are drawn for people,
	// plain TSV/markdown otherwise.
	OutIsTerminal bool
	// OutWidth is the width of Out's terminal in columns; 0 when Out is
	// not one or its size cannot be read. See tableWidth.
	OutWidth int
	// ErrOutIsTerminal says ErrOut is a terminal: progress is one redrawn
	// line rather than plain lines for a log.
	ErrOutIsTerminal bool
	// allowTampered reads a results file whose schema was changed outside
	// wfb (--allow-tampered); tamperNote, set once such a file is open,
	// is said under every table the command prints.
	allowTampered bool
	tamperNote    string
	// Getenv reads the environment; tests inject their own.
	Getenv func(string) string
	// Environ lists the environment; the stand-in agent reads it.
	Environ func() []string
}

// SystemStreams returns the process's own streams.
func SystemStreams() *Streams {
	return &Streams{
		In:               os.Stdin,
		Out:              os.Stdout,
		ErrOut:           os.Stderr,
		OutIsTerminal:    isatty.IsTerminal(os.Stdout.Fd()),
		OutWidth:         terminalWidth(os.Stdout),
		ErrOutIsTerminal: isatty.IsTerminal(os.Stderr.Fd()),
		Getenv:           os.Getenv,
		Environ:          os.Environ,
	}
}

// terminalWidth returns the width of f's terminal, or 0.
func terminalWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
