//go:build !unix

package holdstest

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
