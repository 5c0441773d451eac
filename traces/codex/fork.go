package codex

import (
	"strings"

	"github.com/ctxsim/ctxsim/traces"
)

// A forked rollout (a thread forked from another, or a subagent spawned
// with its parent's history) is laid out as Codex writes it:
//
//  1. its own session_meta, with forked_from_id;
//  2. the parent's session_meta, copied verbatim;
//  3. the parent's rollout as it stood at the fork: messages, turn_context,
//     compacted items, task events and token_counts, without reasoning or
//     tool items (codex-rs/core/src/agent/control/spawn.rs,
//     keep_forked_rollout_item; InitialHistory::Forked in
//     codex-rs/protocol/src/protocol.rs), every line stamped with the
//     fork's time, as the recorder stamps the lines it writes;
//  4. the fork's own lines, from the first task_started whose turn_id (a
//     UUIDv7, ordered by its creation time) is later than the fork's own
//     id: its turns were started after it was created.
//
// total_token_usage carries on from the parent's, so the copied
// token_counts are the parent's calls, billed in the parent's file: the
// fork bills only the token_counts after the copy, whose last_token_usage
// add up to its final total minus the copy's last. The copied messages
// are the fork's starting context: its first call sends them. None of this
// needs the parent's file.
type fork struct {
	// from is session_meta.forked_from_id; own the fork's own id.
	from, own string
	// copying is true from the copied session_meta to the first task_started
	// of the fork's own.
	copying bool
	// copied is true once a copy was read.
	copied bool
	// total is the copy's last total_token_usage.
	total *tokenUsage
}

// startCopy begins the copied history (a second session_meta).
func (rd *reader) startCopy() {
	if rd.fork.copying || rd.fork.copied {
		return // a fork of a fork copies several metas
	}
	if !isV7(rd.fork.own) {
		rd.sc.Warn(WarnForkNotV7)
		return
	}
	rd.fork.copying, rd.fork.copied = true, true
	rd.call = -1
}

// endCopy ends the copied history: the fork's own calls follow.
func (rd *reader) endCopy() {
	rd.fork.copying = false
	rd.call = -1
	rd.inputAt = rd.last
}

// ends reports whether a task_started with turnID starts the fork's own
// lines.
func (f *fork) ends(turnID string) bool {
	return isV7(turnID) && strings.ToLower(turnID) > strings.ToLower(f.own)
}

// base is the total the fork carried on from (zero when not a fork).
func (f *fork) base() traces.Usage {
	if f.total == nil {
		return traces.Usage{}
	}
	return f.total.totalUsage()
}

// isV7 reports whether s is a canonical UUID of version 7, whose text
// order is its creation order (RFC 9562: a 48-bit Unix millisecond time
// first).
func isV7(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
