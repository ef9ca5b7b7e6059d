package binproc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// shared holds the binaries Build linked in this test binary once Main runs:
// several tests of a package start the same service, and linking it again for
// each (a few seconds apiece on a busy machine) was a good part of make test.
var shared struct {
	sync.Mutex
	dir  string            // removed by Main when the tests end; "" without Main
	bins map[string]string // workspace root + service -> binary under dir
}

// Main is a TestMain for packages that build service binaries: every Build
// in the test binary then links each service once and gives each caller its
// own hard link (or copy) of it in the folder it asked for.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "gatehouse-binproc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "binproc:", err)
		os.Exit(1)
	}
	shared.Lock()
	shared.dir, shared.bins = dir, map[string]string{}
	shared.Unlock()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildShared is Build under Main (ok false without it).
func buildShared(root, dir string, services []string) (bins map[string]string, ok bool, err error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.dir == "" {
		return nil, false, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, true, err
	}
	var missing []string
	for _, svc := range services {
		if _, done := shared.bins[abs+"\x00"+svc]; !done {
			missing = append(missing, svc)
		}
	}
	if len(missing) > 0 {
		into, err := os.MkdirTemp(shared.dir, "build-")
		if err != nil {
			return nil, true, err
		}
		built, err := build(root, into, missing)
		if err != nil {
			return nil, true, err
		}
		for svc, bin := range built {
			shared.bins[abs+"\x00"+svc] = bin
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil { // go build -o dir/ makes it too
		return nil, true, err
	}
	bins = map[string]string{}
	for _, svc := range services {
		bin, done := shared.bins[abs+"\x00"+svc]
		if !done {
			continue // no cmd folder: Build skips it too
		}
		dst := filepath.Join(dir, svc)
		if err := linkOrCopy(bin, dst); err != nil {
			return nil, true, err
		}
		bins[svc] = dst
	}
	return bins, true, nil
}

func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
