-- DuckDB queries over a merged run's Parquet files. RUN is the output
-- directory (or an s3:// prefix with DuckDB's httpfs extension).
-- scripts/duckdb-check.cjs runs every statement of this file on the
-- embedded suite's output in CI, so they stay valid.

-- Cheapest policy per project: a project is a tenant (one --trace path, or
-- one root session of synthetic traces). Runs that overflowed the window
-- are left out: their rejected calls cost nothing.
WITH cost AS (
  SELECT tenant AS project, policy, sum(cost_usd) AS usd, sum(overflow_errors) AS overflows
  FROM 'RUN/runs.parquet'
  GROUP BY ALL
)
SELECT project, arg_min(policy, usd) AS cheapest, round(min(usd), 4) AS usd
FROM cost
WHERE overflows = 0
GROUP BY project
ORDER BY project;

-- Token-weighted cache hit rate by ISO week and policy, over billed calls.
SELECT policy, date_trunc('week', t) AS week,
  round(sum("gen_ai.usage.cache_read.input_tokens") / sum("gen_ai.usage.input_tokens"), 4) AS hit_rate,
  count(*) AS calls
FROM 'RUN/records.parquet'
WHERE kind = 'call' AND error = ''
GROUP BY ALL
ORDER BY policy, week;

-- What the 1h cache tier cost against the 5m tier, per policy.
SELECT policy,
  sum("ctxsim.usage.cache_creation_5m.input_tokens") AS write_5m,
  sum("ctxsim.usage.cache_creation_1h.input_tokens") AS write_1h,
  round(sum("cost_by_class.cache_write_5m"), 4) AS usd_5m,
  round(sum("cost_by_class.cache_write_1h"), 4) AS usd_1h
FROM 'RUN/runs.parquet'
GROUP BY policy
ORDER BY policy;
