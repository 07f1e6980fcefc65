//go:build !linux

package gcheadroom

func memory() uint64 { return 0 }
