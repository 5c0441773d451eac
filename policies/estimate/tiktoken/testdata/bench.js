// Throughput of npm tokenizers on the texts BenchmarkCount counts, block by
// block, for the README's side-by-side table. Run from a scratch directory
// (not the repo):
//
//	npm install gpt-tokenizer tiktoken
//	go test ./policies/estimate/tiktoken -run TestWriteBenchText -benchtext /tmp/texts.json
//	node path/to/bench.js /tmp/texts.json
"use strict";
const fs = require("fs");
// Packages resolve from the working directory, where npm installed them.
const need = (m) => require(require.resolve(m, { paths: [process.cwd()] }));
const texts = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);

function bench(name, count) {
  for (const t of texts) count(t); // warm up (JIT, lazy tables)
  const rounds = 5;
  const t0 = process.hrtime.bigint();
  let tokens = 0;
  for (let r = 0; r < rounds; r++) for (const t of texts) tokens += count(t);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`${name}\t${(bytes * rounds / s / 1e6).toFixed(2)} MB/s\t${tokens / rounds} tokens`);
}

const gpt = need("gpt-tokenizer/encoding/o200k_base");
bench("gpt-tokenizer o200k_base", (t) => gpt.countTokens(t));
const gptCl = need("gpt-tokenizer/encoding/cl100k_base");
bench("gpt-tokenizer cl100k_base", (t) => gptCl.countTokens(t));
const { get_encoding } = need("tiktoken");
for (const name of ["o200k_base", "cl100k_base"]) {
  const enc = get_encoding(name);
  bench(`tiktoken (WASM) ${name}`, (t) => enc.encode_ordinary(t).length);
  enc.free();
}
