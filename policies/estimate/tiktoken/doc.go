// Package tiktoken counts tokens exactly as OpenAI's tiktoken does, for the
// o200k_base and cl100k_base encodings: the same ids, token for token.
//
// It keeps tiktoken's BPE ranks (embedded by the offline loader,
// pkoukk/tiktoken-go-loader; nothing is downloaded) and replaces the
// regular-expression pre-tokenizer with a hand-written scanner for the two
// split patterns, which is where pkoukk/tiktoken-go spends most of its
// time. The ranks load on the first count (about 10 ms), not at start-up,
// so commands that never count never pay for them.
//
//	enc, _ := tiktoken.Get("o200k_base")
//	n := enc.Count("hello world") // 2
//
// An *Encoding satisfies estimate.Tokenizer. The differential test in this
// package checks every id against pkoukk/tiktoken-go over the shared
// sessions, the corpus, every synthetic profile and a fuzz target.
package tiktoken
