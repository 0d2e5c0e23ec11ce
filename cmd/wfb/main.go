// Command wfb is a results workbench for benchmarking coding-agent workflows.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:], SystemStreams())) }
