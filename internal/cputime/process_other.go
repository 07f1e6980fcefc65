//go:build !unix

package cputime

import "time"

// Process is not measured outside Unix systems: 0.
func Process() time.Duration { return 0 }
