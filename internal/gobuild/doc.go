// Package gobuild builds a Go program once per test binary, for the
// benchmarks that time whole processes (start-up included).
package gobuild
