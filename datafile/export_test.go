package datafile

import "io"

// StreamPeak is Stream, returning also the largest read buffer it held.
func StreamPeak(r io.Reader, h Handler) (int, error) { return stream(r, h) }
