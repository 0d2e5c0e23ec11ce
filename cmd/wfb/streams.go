package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
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
	// ErrOutIsTerminal says ErrOut is a terminal: progress is one redrawn
	// line rather than plain lines for a log.
	ErrOutIsTerminal bool
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
		ErrOutIsTerminal: isatty.IsTerminal(os.Stderr.Fd()),
		Getenv:           os.Getenv,
		Environ:          os.Environ,
	}
}
