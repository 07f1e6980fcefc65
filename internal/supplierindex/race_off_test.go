//go:build !race

package supplierindex

// raceDetector reports whether the tests run under the race detector,
// which makes the single-goroutine model checks about nine times slower.
const raceDetector = false
