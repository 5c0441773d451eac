package faultio

import (
	"errors"
	"io"
)

// ErrKilled is the error a KillWriter fails with.
var ErrKilled = errors.New("killed by the test")

// A KillWriter stands in for kill -9 during a run that journals as it
// goes: after its After-th write (one cell each) it writes half of the
// next and fails with ErrKilled, leaving a torn last line.
type KillWriter struct {
	W     io.Writer
	After int
	n     int
}

// Write implements io.Writer.
func (k *KillWriter) Write(p []byte) (int, error) {
	if k.n >= k.After {
		n, _ := k.W.Write(p[:len(p)/2])
		return n, ErrKilled
	}
	k.n++
	return k.W.Write(p)
}
