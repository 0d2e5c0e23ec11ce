package review

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ReviewOutput is the file name a review session writes its artifact to.
const ReviewOutput = "review-output.json"

// OutputEnv names the environment variable that tells a review session's
// agent where to write its artifact.
const OutputEnv = "WFB_REVIEW_OUTPUT"

// MaxArtifactBytes bounds the artifact: a larger file is invalid, not read.
const MaxArtifactBytes = 1 << 20

// SchemaVersion is the only artifact schema version this parser accepts.
const SchemaVersion = 1

// Verdicts.
const (
	VerdictApprove        = "approve"
	VerdictComment        = "comment"
	VerdictRequestChanges = "request_changes"
)

var (
	verdicts   = []string{VerdictApprove, VerdictComment, VerdictRequestChanges}
	severities = []string{"critical", "high", "medium", "low"}
)

// ErrArtifactMissing means the artifact does not exist: the session never
// wrote it. It is distinct from an artifact that exists but is invalid.
var ErrArtifactMissing = errors.New("review artifact was never written")

// InvalidError is an artifact that exists but cannot be accepted; Reason
// names the field and the value at fault.
type InvalidError struct {
	Path   string
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("review artifact %s is invalid: %s", e.Path, e.Reason)
}

// Finding is one issue a review reports.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"` // critical, high, medium or low
	// Path is repo-relative and clean (a leading "./" is dropped).
	Path           string `json:"path"`
	Line           int    `json:"line"`     // from 1
	EndLine        int    `json:"end_line"` // >= Line; Line when the artifact omits it
	Category       string `json:"category"`
	Evidence       string `json:"evidence"`
	Recommendation string `json:"recommendation"`
	Blocking       bool   `json:"blocking"`
}

// Review is a parsed artifact. Findings is never nil (empty for approve).
type Review struct {
	SchemaVersion int       `json:"schema_version"`
	Verdict       string    `json:"verdict"`
	Findings      []Finding `json:"findings"`
}

// ParseReviewOutput reads and strictly validates the artifact at path:
//
//	{"schema_version": 1, "verdict": "approve"|"comment"|"request_changes",
//	 "findings": [{"id", "severity", "path", "line", "end_line" (optional),
//	               "category", "evidence", "recommendation", "blocking"}]}
//
// Every error is either ErrArtifactMissing (errors.Is: nothing at path) or
// a *InvalidError (errors.As): not a regular file (a symlink is refused, also
// one swapped in after the check), larger than MaxArtifactBytes, not UTF-8,
// not JSON, trailing data after the object, an unknown, duplicate, missing or
// wrongly typed field, a value out of its domain, duplicate finding ids, or
// an approval that carries findings.
func ParseReviewOutput(path string) (Review, error) {
	data, err := readArtifact(path)
	if err != nil {
		return Review{}, err
	}
	r, reason := parse(data)
	if reason != "" {
		return Review{}, &InvalidError{Path: path, Reason: reason}
	}
	return r, nil
}

func missing(path string) error {
	return fmt.Errorf("review artifact %s: %w", path, ErrArtifactMissing)
}

func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func readArtifact(path string) ([]byte, error) {
	invalid := func(format string, args ...any) error {
		return &InvalidError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	fi, err := os.Lstat(path)
	switch {
	case notExist(err):
		return nil, missing(path)
	case err != nil:
		return nil, invalid("cannot stat: %v", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return nil, invalid("is a symlink (to %s); the artifact must be a regular file", target)
	case !fi.Mode().IsRegular():
		return nil, invalid("is not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > MaxArtifactBytes:
		return nil, invalid("is %d bytes, more than the %d allowed", fi.Size(), MaxArtifactBytes)
	}
	f, err := openNoFollow(path)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, invalid("is a symlink; the artifact must be a regular file")
	case notExist(err):
		return nil, missing(path)
	case err != nil:
		return nil, invalid("cannot open: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, invalid("cannot stat: %v", err)
	} else if !fi.Mode().IsRegular() {
		return nil, invalid("is not a regular file (%s)", fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxArtifactBytes+1))
	switch {
	case err != nil:
		return nil, invalid("cannot read: %v", err)
	case len(data) > MaxArtifactBytes:
		return nil, invalid("is more than the %d bytes allowed", MaxArtifactBytes)
	case len(data) == 0:
		return nil, invalid("is empty")
	case !utf8.Valid(data):
		return nil, invalid("is not valid UTF-8")
	}
	return data, nil
}

// openNoFollow opens the artifact for reading. O_NOFOLLOW: a symlink
// swapped in after the Lstat is refused (ELOOP), not followed. O_NONBLOCK: a
// FIFO swapped in cannot hang the open.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// parse validates the document; a non-empty string is the reason it fails.
func parse(data []byte) (Review, string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return Review{}, syntaxReason(data, err)
	}
	end := int(dec.InputOffset())
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		line, col := position(data, len(data)-len(rest))
		return Review{}, fmt.Sprintf("trailing data after the JSON object at line %d, column %d", line, col)
	}
	top, reason := object(doc, "", []string{"schema_version", "verdict", "findings"}, nil)
	if reason != "" {
		return Review{}, reason
	}
	r := Review{Findings: []Finding{}}
	if r.SchemaVersion, reason = integer(top["schema_version"], "schema_version"); reason != "" {
		return Review{}, reason
	}
	if r.SchemaVersion != SchemaVersion {
		return Review{}, fmt.Sprintf("schema_version: %d is not supported (want %d)", r.SchemaVersion, SchemaVersion)
	}
	if r.Verdict, reason = oneOf(top["verdict"], "verdict", verdicts); reason != "" {
		return Review{}, reason
	}
	items, reason := array(top["findings"], "findings")
	if reason != "" {
		return Review{}, reason
	}
	if r.Verdict == VerdictApprove && len(items) > 0 {
		return Review{}, fmt.Sprintf("verdict %q with %d findings: an approval has none (use %q or %q)", r.Verdict, len(items), VerdictComment, VerdictRequestChanges)
	}
	firstID := map[string]int{}
	for i, raw := range items {
		f, reason := finding(raw, fmt.Sprintf("findings[%d]", i))
		if reason != "" {
			return Review{}, reason
		}
		if j, dup := firstID[f.ID]; dup {
			return Review{}, fmt.Sprintf("findings[%d].id: %q repeats findings[%d].id", i, f.ID, j)
		}
		firstID[f.ID] = i
		r.Findings = append(r.Findings, f)
	}
	return r, ""
}

func finding(raw json.RawMessage, where string) (Finding, string) {
	m, reason := object(raw, where,
		[]string{"id", "severity", "path", "line", "category", "evidence", "recommendation", "blocking"},
		[]string{"end_line"})
	if reason != "" {
		return Finding{}, reason
	}
	var f Finding
	field := func(name string) string { return where + "." + name }
	if f.ID, reason = nonEmpty(m["id"], field("id")); reason != "" {
		return Finding{}, reason
	}
	if f.Severity, reason = oneOf(m["severity"], field("severity"), severities); reason != "" {
		return Finding{}, reason
	}
	if f.Path, reason = repoPath(m["path"], field("path")); reason != "" {
		return Finding{}, reason
	}
	if f.Line, reason = integer(m["line"], field("line")); reason != "" {
		return Finding{}, reason
	}
	if f.Line < 1 {
		return Finding{}, fmt.Sprintf("%s: %d is less than 1 (lines count from 1)", field("line"), f.Line)
	}
	f.EndLine = f.Line
	if raw, ok := m["end_line"]; ok {
		if f.EndLine, reason = integer(raw, field("end_line")); reason != "" {
			return Finding{}, reason
		}
		if f.EndLine < f.Line {
			return Finding{}, fmt.Sprintf("%s: %d is before line %d", field("end_line"), f.EndLine, f.Line)
		}
	}
	if f.Category, reason = nonEmpty(m["category"], field("category")); reason != "" {
		return Finding{}, reason
	}
	if f.Evidence, reason = str(m["evidence"], field("evidence")); reason != "" {
		return Finding{}, reason
	}
	if f.Recommendation, reason = str(m["recommendation"], field("recommendation")); reason != "" {
		return Finding{}, reason
	}
	if f.Blocking, reason = boolean(m["blocking"], field("blocking")); reason != "" {
		return Finding{}, reason
	}
	return f, ""
}

// object splits a JSON object into its members, refusing a non-object,
// duplicate or unknown names, and missing required ones. where prefixes the
// reasons ("" for the top level).
func object(raw json.RawMessage, where string, required, optional []string) (map[string]json.RawMessage, string) {
	at := func(name string) string {
		if where == "" {
			return name
		}
		return where + "." + name
	}
	if k := kind(raw); k != "an object" {
		if where == "" {
			return nil, fmt.Sprintf("the document is %s, want a JSON object", k)
		}
		return nil, fmt.Sprintf("%s: %s is %s, want an object", where, show(raw), k)
	}
	known := map[string]bool{}
	for _, n := range append(append([]string{}, required...), optional...) {
		known[n] = true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Sprintf("%s: %v", where, err)
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", where, err)
		}
		name, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Sprintf("%s: %v", at(name), err)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Sprintf("%s: duplicate field", at(name))
		}
		if !known[name] {
			return nil, fmt.Sprintf("%s: unknown field (known: %s)", at(name), strings.Join(append(append([]string{}, required...), optional...), ", "))
		}
		m[name] = val
	}
	for _, n := range required {
		if _, ok := m[n]; !ok {
			return nil, fmt.Sprintf("%s: missing", at(n))
		}
	}
	return m, ""
}

func array(raw json.RawMessage, where string) ([]json.RawMessage, string) {
	if k := kind(raw); k != "an array" {
		return nil, fmt.Sprintf("%s: %s is %s, want an array (use [] for none)", where, show(raw), k)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Sprintf("%s: %v", where, err)
	}
	return items, ""
}

func str(raw json.RawMessage, where string) (string, string) {
	if k := kind(raw); k != "a string" {
		return "", fmt.Sprintf("%s: %s is %s, want a string", where, show(raw), k)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Sprintf("%s: %v", where, err)
	}
	return s, ""
}

func nonEmpty(raw json.RawMessage, where string) (string, string) {
	s, reason := str(raw, where)
	if reason == "" && strings.TrimSpace(s) == "" {
		reason = fmt.Sprintf("%s: %s is empty", where, show(raw))
	}
	return s, reason
}

func oneOf(raw json.RawMessage, where string, allowed []string) (string, string) {
	s, reason := str(raw, where)
	if reason != "" {
		return "", reason
	}
	for _, a := range allowed {
		if s == a {
			return s, ""
		}
	}
	return "", fmt.Sprintf("%s: %s is not one of %s", where, show(raw), strings.Join(allowed, "|"))
}

// repoPath accepts a path relative to the repository root that stays inside
// it, and returns it clean.
func repoPath(raw json.RawMessage, where string) (string, string) {
	p, reason := str(raw, where)
	if reason != "" {
		return "", reason
	}
	switch {
	case p == "":
		return "", fmt.Sprintf("%s: empty, want a repo-relative file path", where)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Sprintf("%s: %s is absolute, want a repo-relative path", where, show(raw))
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", fmt.Sprintf("%s: %s contains a control character", where, show(raw))
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Sprintf("%s: %s climbs out with \"..\", want a path inside the repository", where, show(raw))
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", fmt.Sprintf("%s: %s names the repository root, want a file", where, show(raw))
	}
	return clean, ""
}

func integer(raw json.RawMessage, where string) (int, string) {
	if k := kind(raw); k != "a number" {
		return 0, fmt.Sprintf("%s: %s is %s, want an integer", where, show(raw), k)
	}
	n, err := strconv.ParseInt(string(raw), 10, 0)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Sprintf("%s: %s is out of range", where, show(raw))
		}
		return 0, fmt.Sprintf("%s: %s is not an integer", where, show(raw))
	}
	return int(n), ""
}

func boolean(raw json.RawMessage, where string) (bool, string) {
	switch string(raw) {
	case "true":
		return true, ""
	case "false":
		return false, ""
	}
	return false, fmt.Sprintf("%s: %s is %s, want true or false", where, show(raw), kind(raw))
}

// kind names the JSON type of a syntactically valid value.
func kind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// show quotes a value for a reason, bounded so a huge value cannot flood the
// row.
func show(raw json.RawMessage) string {
	const limit = 60
	s := string(raw)
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func syntaxReason(data []byte, err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte itself; point at it.
		line, col := position(data, int(syn.Offset)-1)
		return fmt.Sprintf("not JSON: line %d, column %d: %v", line, col, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not JSON: the document ends before its object closes (truncated?)"
	case errors.Is(err, io.EOF):
		return "contains no JSON value"
	}
	return fmt.Sprintf("not JSON: %v", err)
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Captured is an artifact as wfb keeps it for evidence, valid or not.
type Captured struct {
	Head []byte // its first MaxArtifactBytes: all of it, unless it is too large to be valid
	Size int64  // its size as written
	// SHA256 is of its whole content (hex), read through once, never held.
	SHA256 string
}

// MaxCaptureBytes bounds what Capture reads to digest an artifact too
// large to be valid: a sparse file can claim exabytes.
const MaxCaptureBytes = 64 << 20

// Capture reads the artifact at path as evidence within bounds: a
// symlink, a FIFO, a device or any other file that is not regular is
// refused (an *InvalidError) without being read, and so is one over
// MaxCaptureBytes; a regular file is read once, up to the size it had when
// opened, keeping only its first MaxArtifactBytes. A missing file is
// ErrArtifactMissing.
func Capture(path string) (Captured, error) {
	invalid := func(format string, args ...any) error {
		return &InvalidError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	f, err := openNoFollow(path)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return Captured{}, invalid("is a symlink; the artifact must be a regular file")
	case notExist(err):
		return Captured{}, missing(path)
	case err != nil:
		return Captured{}, invalid("cannot open: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return Captured{}, invalid("cannot stat: %v", err)
	case !fi.Mode().IsRegular():
		return Captured{}, invalid("is not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > MaxCaptureBytes:
		return Captured{}, invalid("is %d bytes, over the %d wfb reads to keep as evidence", fi.Size(), MaxCaptureBytes)
	}
	h := sha256.New()
	head := &headWriter{max: MaxArtifactBytes}
	n, err := io.Copy(io.MultiWriter(h, head), io.LimitReader(f, fi.Size()))
	if err != nil {
		return Captured{}, invalid("cannot read: %v", err)
	}
	return Captured{Head: head.b, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	b   []byte
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
