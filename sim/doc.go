// Package sim is the deterministic engine: a virtual clock, the agent call
// loop of DESIGN.md, and one Record per call and per context-management pass.
package sim
