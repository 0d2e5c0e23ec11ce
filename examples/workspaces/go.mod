// The example workspaces are code for an agent to review, not part of wfb.
// This file makes them a module of their own, so that wfb's go build, vet
// and test ./... leave them out, while every workspace stays byte for byte
// what examples/bench.yaml's labels point into.
module example.invalid/wfb-workspaces

go 1.26
