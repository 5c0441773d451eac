// Package estimate owns token counting: the Tokenizer interface, the offline
// tiktoken encodings (o200k_base, cl100k_base) and a Memo that counts each
// distinct block once per process.
package estimate
