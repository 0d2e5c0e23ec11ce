// Package execpath finds an executable on $PATH the way os/exec does, for
// the small processes wfb puts in front of an agent (agent-exec, the
// landlock launcher). It imports only packages Go initialises early, so
// importing it keeps their init ahead of wfb's own (see cmd/wfb's startup
// tests).
package execpath

import (
	"bytes"
	"fmt"
	"os"
)

// LookPath returns name itself when it holds a slash, else the first
// regular file with an execute bit named name in an absolute directory of
// $PATH. A relative directory, the current one included, is never
// searched: os/exec refuses what it would find there too.
func LookPath(name string) (string, error) {
	if bytes.IndexByte([]byte(name), '/') >= 0 {
		return name, nil
	}
	for _, dir := range bytes.Split([]byte(os.Getenv("PATH")), []byte{':'}) {
		if len(dir) == 0 || dir[0] != '/' {
			continue
		}
		p := string(bytes.TrimSuffix(dir, []byte{'/'})) + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}
