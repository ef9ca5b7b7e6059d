//go:build !unix

package migration

import "time"

func processCPU() time.Duration { return 0 }
