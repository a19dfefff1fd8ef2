//go:build race

package main

// raceDetector tells whether the race detector is on: it makes each run
// of the test binary as a program slow (about a second).
const raceDetector = true
