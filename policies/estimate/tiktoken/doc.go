// Package tiktoken counts tokens exactly as OpenAI's tiktoken does, for the
// o200k_base and cl100k_base encodings: the same ids, token for token.
//
// It keeps tiktoken's BPE ranks (those of the offline loader,
// pkoukk/tiktoken-go-loader; nothing is downloaded) and replaces the
// regular-expression pre-tokenizer with a hand-written scanner for the two
// split patterns, which is where pkoukk/tiktoken-go spends most of its
// time. The ranks are embedded as a ready-made hash table (o200k_base.tkt,
// cl100k_base.tkt, rebuilt from the loader's files by TestTables -update),
// used where the binary holds them: the first count costs a header check
// and the pages it touches, so a process counts within a few milliseconds
// of starting, and commands that never count never read the table.
//
//	enc, _ := tiktoken.Get("o200k_base")
//	n := enc.Count("hello world") // 2
//
// An *Encoding satisfies estimate.Tokenizer. The differential test in this
// package checks every id against pkoukk/tiktoken-go over the shared
// sessions, the corpus, every synthetic profile and a fuzz target.
package tiktoken
