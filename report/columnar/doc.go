// Package columnar writes a run's results as Parquet, for the query
// engines a fleet's results end up in (DuckDB, Spark, Trino, BigQuery):
// runs.parquet, one row per (trace, policy) run, and records.parquet, one
// row per simulated call and per context-management pass.
//
// Column names follow the OpenTelemetry GenAI semantic conventions where
// one exists: gen_ai.usage.input_tokens is the whole prompt, cached tokens
// included, as the conventions require since semantic-conventions PR 3163
// (Jan 2026); gen_ai.usage.cache_read.input_tokens and
// gen_ai.usage.cache_creation.input_tokens are its cached parts;
// gen_ai.request.model the model. OTel has no name for the uncached part
// or for the split of cache writes by TTL, so those are
// ctxsim.usage.uncached_input_tokens and
// ctxsim.usage.cache_creation_5m.input_tokens / _1h. Every other column is
// the summary.json field of the same meaning, dots for nesting. The schema,
// column by column, is in docs/parquet.md; the Run and Record types below
// are it.
//
// Names holding dots are single columns, not nested groups: quote them in
// SQL ("gen_ai.usage.input_tokens" in DuckDB, `gen_ai.usage.input_tokens`
// in Spark).
//
// The files are a pure function of the rows: same results, same bytes.
package columnar
