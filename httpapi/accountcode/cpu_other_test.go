//go:build !linux

package accountcode_test

import "time"

// threadCPU and processCPU are not measured here: the benchmark reports
// wall time only.
func threadCPU() time.Duration  { return 0 }
func processCPU() time.Duration { return 0 }
