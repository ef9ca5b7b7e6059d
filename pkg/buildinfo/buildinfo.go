// Package buildinfo says which build a binary is: its version and source
// revision, stamped by the linker (`make build`, deploy/Dockerfile:
// -X .../buildinfo.version=... -X .../buildinfo.revision=...), and the Go
// release it was built with. A binary built without the stamps (go run, go
// test, a plain go build) reports the revision Go recorded from the
// repository, if any, and version "dev".
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker; see the package comment.
var (
	version  string
	revision string
)

// Info is one binary's build.
type Info struct {
	Version   string // the release in the file VERSION (make build), or "dev"
	Revision  string // the commit, or "unknown"
	GoVersion string // such as go1.26.0
}

// Get returns the running binary's build.
func Get() Info {
	i := Info{Version: version, Revision: revision, GoVersion: runtime.Version()}
	if i.Revision == "" {
		i.Revision = vcsRevision()
	}
	if i.Version == "" {
		i.Version = "dev"
	}
	return i
}

// vcsRevision is the commit Go's build recorded (-buildvcs), "+dirty" when
// the tree had changes; "unknown" without one.
func vcsRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// String is the --version answer for the program name.
func (i Info) String(name string) string {
	return fmt.Sprintf("%s %s (revision %s, %s)", name, i.Version, i.Revision, i.GoVersion)
}
