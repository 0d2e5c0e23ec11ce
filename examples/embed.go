// Package examples holds wfb's examples: commented bench files, the
// workspaces their tasks start from, mock scripts and a skill. It embeds
// the workspaces and the skills (FS), so that wfb's demo runs on these very
// files, not on copies that nothing keeps in step.
//
// The workspaces are code for an agent to review or fix, not part of wfb:
// the leading underscore of _workspaces keeps the go tool (build, vet, test
// ./...) out of them, and every file stays byte for byte what the bench
// files' labels point into. (A go.mod of their own would too, but go:embed
// takes no file of another module.)
package examples

import "embed"

// FS holds every example workspace (_workspaces/NAME) and every example
// skill (tools/skills/NAME), as the files are.
//
//go:embed _workspaces tools/skills
var FS embed.FS
