package app

import (
	"testing"

	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// TestMain shares one build of each service binary among the tests here
// (binproc.Main).
func TestMain(m *testing.M) { binproc.Main(m) }
