package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinksResolve stops a moved or renamed page, or a renamed heading,
// from leaving a dead link in README.md or anywhere under docs/: every
// relative link must name a file or directory of the repository, and a
// #fragment a heading of the markdown file it points into.
func TestDocsLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found no markdown under docs/ (files %v)", files)
	}
	broken, checked, err := brokenDocLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no relative links at all: the link scanner is broken")
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestDocLinkCheckFindsBrokenLinks keeps TestDocsLinksResolve able to fail:
// a missing file, a missing heading, a link out of the repository and a
// fragment on a page that is not markdown are each reported, while links in
// code are left alone.
func TestDocLinkCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\nSee [ok](docs/a.md#the-providers-wire-a-second-witness-of-usage), [ok too](docs/a.md#record--replay),\n"+
		"[dir](docs), [self](#top), [web](https://example.com/x.md), [gone](docs/missing.md),\n"+
		"[bad anchor](docs/a.md#nowhere), [out](../../etc/passwd), [file anchor](code.go#L3).\n\n"+
		"```\n[in a fence](nowhere.md)\n```\n\nAnd `[in code](nowhere.md)`.\n")
	write("docs/a.md", "# A\n\n## The provider's wire: a second witness of usage\n\n## Record → replay\n\nBack to [the top](../README.md#top), [`run`](#a-second-a).\n\n## A second A\n")
	write("code.go", "package x\n")
	broken, checked, err := brokenDocLinks(root, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:4: [gone](docs/missing.md): no such file",
		"README.md:5: [bad anchor](docs/a.md#nowhere): docs/a.md has no heading #nowhere",
		"README.md:5: [out](../../etc/passwd): leaves the repository",
		"README.md:5: [file anchor](code.go#L3): a #fragment on code.go, which is not markdown",
	}
	slices.Sort(want)
	got := slices.Clone(broken)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("broken links:\n got %q\nwant %q", got, want)
	}
	if checked != 10 {
		t.Errorf("checked %d links, want 10", checked)
	}
}

var (
	// mdLink is an inline link or image: [text](target) or [text](target "title").
	mdLink = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// mdURLScheme marks a link that is not a path in the repository.
	mdURLScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// brokenDocLinks checks the relative links of the markdown files (paths
// relative to root, slash-separated) and returns one line per broken link,
// and how many relative links it checked.
func brokenDocLinks(root string, files []string) (broken []string, checked int, err error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, 0, err
	}
	anchors := map[string]map[string]bool{} // by slash path relative to root
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := anchors[rel]; ok {
			return a, nil
		}
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(text))
		anchors[rel] = a
		return a, nil
	}
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, 0, err
		}
		for n, line := range proseLines(string(text)) {
			if line == "" {
				continue
			}
			line = codeSpan.ReplaceAllString(line, "code")
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[2]
				if mdURLScheme.MatchString(target) {
					continue
				}
				checked++
				report := func(format string, args ...any) {
					broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", file, n+1, m[0], fmt.Sprintf(format, args...)))
				}
				path, fragment, _ := strings.Cut(target, "#")
				rel := file
				if path != "" {
					joined := filepath.Join(absRoot, filepath.FromSlash(pathDir(file)), filepath.FromSlash(path))
					r, err := filepath.Rel(absRoot, joined)
					if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
						report("leaves the repository")
						continue
					}
					if _, err := os.Stat(joined); err != nil {
						report("no such file")
						continue
					}
					rel = filepath.ToSlash(r)
				}
				if fragment == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					report("a #fragment on %s, which is not markdown", rel)
					continue
				}
				a, err := anchorsOf(rel)
				if err != nil {
					report("%v", err)
					continue
				}
				if !a[fragment] {
					report("%s has no heading #%s", rel, fragment)
				}
			}
		}
	}
	return broken, checked, nil
}

// pathDir is the directory of a slash path, "" for a file at the root.
func pathDir(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return ""
}

// proseLines splits markdown into lines, blanking those inside fenced code
// blocks, so that line numbers stay true.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors are the fragments GitHub gives a markdown file's ATX
// headings: the text lowercased, punctuation other than '-' and '_' dropped,
// each space a '-', and a repeated one suffixed -1, -2, ….
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 6 || (len(line) > level && line[level] != ' ') {
			continue
		}
		heading := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[level:]), "#"))
		heading = mdLink.ReplaceAllString(heading, "$1")
		var slug strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				slug.WriteRune(r)
			}
		}
		s := slug.String()
		if k := seen[s]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}
