//go:build !linux

package main

import "errors"

const realtimePriority = 10

func setRealtime([]int) error {
	return errors.New("-postgres-realtime needs Linux (sched_setattr)")
}
