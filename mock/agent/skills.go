package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// Bounds on the skills the agent reads.
const (
	maxSkills           = 100
	maxSkillBytes       = readLimit
	maxSkillDescription = 1024 // the Agent Skills spec's limit
)

// skill is one SKILL.md found under a skills directory.
type skill struct {
	name        string
	description string
	path        string
}

// findSkills lists the skills of $HOME/.claude/skills and of the working
// directory's .claude/skills, by name; where both have a name, the personal
// one wins, as in Claude Code.
func findSkills(home, cwd string) []skill {
	var skills []skill
	seen := map[string]bool{}
	var dirs []string
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".claude", "skills"))
	}
	dirs = append(dirs, filepath.Join(cwd, ".claude", "skills"))
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if seen[e.Name()] || len(skills) == maxSkills {
				continue
			}
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			b, err := readBounded(path, maxSkillBytes)
			if err != nil {
				continue
			}
			seen[e.Name()] = true
			skills = append(skills, skill{name: e.Name(), description: skillDescription(b), path: path})
		}
	}
	slices.SortFunc(skills, func(a, b skill) int { return strings.Compare(a.name, b.name) })
	return skills
}

// skillDescription is the description of a SKILL.md's YAML front matter,
// or "" when it has none.
func skillDescription(b []byte) string {
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(b, "\ufeff"), []byte("---\n"))
	if !ok {
		return ""
	}
	front, _, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return ""
	}
	var meta struct {
		Description string `yaml:"description"`
	}
	if yaml.Unmarshal(front, &meta) != nil {
		return ""
	}
	d := strings.Join(strings.Fields(meta.Description), " ")
	if len(d) > maxSkillDescription {
		d = d[:maxSkillDescription] + "…"
	}
	return d
}

// skillToolDef is the Skill tool's definition: its description lists the
// skills the model may load.
func skillToolDef(skills []skill) map[string]any {
	var b strings.Builder
	b.WriteString("Loads a skill: its instructions (SKILL.md) for a kind of task. Call it when a skill below fits the task, then follow what it says.\n\nAvailable skills:")
	for _, s := range skills {
		fmt.Fprintf(&b, "\n- %s", s.name)
		if s.description != "" {
			fmt.Fprintf(&b, ": %s", s.description)
		}
	}
	return map[string]any{
		"name":        "Skill",
		"description": b.String(),
		"input_schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"skill": map[string]any{"type": "string", "description": "The skill's name, e.g. \"pdf\""},
			},
			"required":             []string{"skill"},
			"additionalProperties": false,
		},
	}
}

// skillTool returns the named skill's SKILL.md, read again at the call.
func skillTool(skills []skill, input json.RawMessage) toolResult {
	var in struct {
		Skill string `json:"skill"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Skill == "" {
		return toolError("InputValidationError: Skill requires skill")
	}
	name := strings.TrimPrefix(in.Skill, "/")
	i := slices.IndexFunc(skills, func(s skill) bool { return s.name == name })
	if i < 0 {
		return toolError("Unknown skill: %s", in.Skill)
	}
	b, err := readBounded(skills[i].path, maxSkillBytes)
	if err != nil {
		return toolError("Error reading skill %s: %v", name, err)
	}
	return toolResult{Content: fmt.Sprintf("Base directory for this skill: %s\n\n%s", filepath.Dir(skills[i].path), b)}
}
