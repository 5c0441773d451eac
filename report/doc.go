// Package report turns simulation records into tables (text, Markdown, CSV,
// JSON), gonum/plot figures, a self-contained HTML report, and baseline
// comparisons for CI. It reads only sim records and never runs a simulation.
package report
