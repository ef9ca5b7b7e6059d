package apirecord

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// buildTag names this build's derivation: the SHA-256 of the running
// executable (read once), so that derived definitions a store record kept
// are used only by the build that made them — another build's converter
// may derive differently (Maker.Current). Empty, so that nothing
// is kept, when the executable cannot be read.
var buildTag = sync.OnceValue(func() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
})
