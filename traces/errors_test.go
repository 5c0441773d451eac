package traces

import (
	"reflect"
	"testing"
)

// AddList is how merge rebuilds a run's warnings from the list a shard
// wrote: counts add up, and a reason keeps the place w saw first.
func TestWarningsAddList(t *testing.T) {
	var w Warnings
	w.Add("a.jsonl", 3, "skipped x")
	w.AddList([]Warning{
		{Reason: "skipped x", Count: 2, First: "b.jsonl:1"},
		{Reason: "kept y", Count: 4, First: "c.jsonl:9"},
		{Reason: "ignored", Count: 0, First: "d.jsonl:1"},
	})
	want := []Warning{
		{Reason: "kept y", Count: 4, First: "c.jsonl:9"},
		{Reason: "skipped x", Count: 3, First: "a.jsonl:3"},
	}
	if got := w.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("List() = %+v, want %+v", got, want)
	}
	if w.Total() != 7 {
		t.Errorf("Total() = %d, want 7", w.Total())
	}
}
