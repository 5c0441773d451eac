// Package faultio holds the writers tests inject faults through (the
// seams of pebble's style: the code under test takes an io.Writer wrapper,
// never a package variable).
package faultio
