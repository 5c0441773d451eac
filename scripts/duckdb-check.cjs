// duckdb-check.cjs DIR: reads DIR/runs.parquet and DIR/records.parquet
// with DuckDB and checks their sums against DIR/summary.json, so the
// Parquet output is proven to be the same results a query engine sees.
// Exit 0 when every sum agrees, 1 otherwise. Used by .ci/run; needs the
// npm package @duckdb/node-api (NODE_PATH may point at its node_modules).
// CommonJS, so that NODE_PATH finds a package installed outside the repo.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node duckdb-check.cjs DIR');
  process.exit(2);
}
const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
const want = { runs: summary.runs.length, requests: 0, input: 0, read: 0, write: 0, w5m: 0, w1h: 0, output: 0, cost: 0, overflow: 0, batch: 0 };
for (const r of summary.runs) {
  const t = r.tokens;
  want.requests += r.requests;
  want.input += t.input + t.cache_write_5m + t.cache_write_1h + t.cache_read;
  want.read += t.cache_read;
  want.write += t.cache_write_5m + t.cache_write_1h;
  want.w5m += t.cache_write_5m;
  want.w1h += t.cache_write_1h;
  want.output += t.output;
  want.cost += r.cost_usd;
  want.overflow += r.overflow_errors;
  want.batch += r.compactions.batch;
}

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const one = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson()[0];
const runs = join(dir, 'runs.parquet').replaceAll("'", "''");
const recs = join(dir, 'records.parquet').replaceAll("'", "''");

const got = await one(`SELECT count(*) AS runs, sum(requests) AS requests,
  sum("gen_ai.usage.input_tokens") AS input, sum("gen_ai.usage.cache_read.input_tokens") AS read,
  sum("gen_ai.usage.cache_creation.input_tokens") AS write,
  sum("ctxsim.usage.cache_creation_5m.input_tokens") AS w5m, sum("ctxsim.usage.cache_creation_1h.input_tokens") AS w1h,
  sum("gen_ai.usage.output_tokens") AS output, sum(cost_usd) AS cost, sum(overflow_errors) AS overflow,
  sum("compactions.batch") AS batch FROM '${runs}'`);
// Records: the agent's billed calls sum to the runs' tokens (summarizer
// calls are on pass records); every record's cost, summarizer included,
// sums to the runs' cost.
const rec = await one(`SELECT
  sum("gen_ai.usage.input_tokens") FILTER (WHERE kind = 'call') AS input,
  sum("gen_ai.usage.cache_read.input_tokens") FILTER (WHERE kind = 'call') AS read,
  sum("gen_ai.usage.output_tokens") FILTER (WHERE kind = 'call') AS output,
  count(*) FILTER (WHERE kind = 'call' AND error = '') AS requests,
  count(*) FILTER (WHERE kind = 'batch') AS batch,
  sum(cost_usd) AS cost FROM '${recs}'`);

let bad = 0;
const check = (what, a, b, tol = 0) => {
  const x = Number(a), y = Number(b);
  const ok = tol === 0 ? x === y : Math.abs(x - y) <= tol * Math.max(1, Math.abs(y));
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: duckdb ${x} summary.json ${y}`);
  if (!ok) bad++;
};
for (const k of ['runs', 'requests', 'input', 'read', 'write', 'w5m', 'w1h', 'output', 'overflow', 'batch']) {
  check(`runs.parquet ${k}`, got[k], want[k]);
}
// summary.json rounds each run's cost to 1e-6; the sum of rounded values
// differs from the sum of exact ones by float noise only.
check('runs.parquet cost_usd', got.cost, want.cost, 1e-9);
check('records.parquet call input tokens', rec.input, want.input);
check('records.parquet call cache reads', rec.read, want.read);
check('records.parquet call output tokens', rec.output, want.output);
check('records.parquet billed calls', rec.requests, want.requests);
check('records.parquet batch passes', rec.batch, want.batch);
check('records.parquet cost_usd', rec.cost, want.cost, 1e-6);

// The queries docs/scale.md shows must run and return rows.
const queries = readFileSync(join(__dirname, '..', 'docs', 'scale', 'queries.duckdb.sql'), 'utf8')
  .split('\n').filter((l) => !l.startsWith('--')).join('\n')
  .split(';').map((q) => q.trim()).filter((q) => q !== '');
for (const q of queries) {
  const rows = (await con.runAndReadAll(q.replaceAll("'RUN/", `'${dir.replaceAll("'", "''")}/`))).getRowObjectsJson();
  const first = q.split('\n').find((l) => l.startsWith('SELECT')) || q.split('\n')[0];
  const ok = rows.length > 0;
  console.log(`${ok ? 'ok  ' : 'FAIL'} docs/scale/queries.duckdb.sql: ${rows.length} rows from ${first.slice(0, 60)}`);
  if (!ok) bad++;
}
if (bad > 0) {
  console.error(`duckdb-check: ${bad} sums disagree with summary.json`);
  process.exit(1);
}
console.log(`duckdb-check: ${dir}: runs.parquet and records.parquet agree with summary.json`);
}

main().catch((e) => {
  console.error(`duckdb-check: ${e.message}`);
  process.exit(1);
});
