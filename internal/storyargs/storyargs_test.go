package storyargs

import (
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

func TestArgs(t *testing.T) {
	d := &datadriven.TestData{CmdArgs: []datadriven.CmdArg{
		{Key: "n", Vals: []string{"42"}}, {Key: "at", Vals: []string{"90s"}}, {Key: "set", Vals: []string{"a=1", "b=2"}},
	}}
	j, l := Joined(d), Lists(d)
	require.Equal(t, "a=1,b=2", j["set"])
	require.Equal(t, []string{"a=1", "b=2"}, l["set"])
	require.Equal(t, 42, Int(t, j, "n", 7))
	require.Equal(t, 42, Int(t, l, "n", 7))
	require.Equal(t, 7, Int(t, l, "missing", 7))
	require.Equal(t, 90*time.Second, Duration(t, j, "at"))
	require.Equal(t, 90*time.Second, Duration(t, l, "at"))
}
