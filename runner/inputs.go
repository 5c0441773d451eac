package runner

import (
	"fmt"
	"os"

	ctxsim "github.com/ctxsim/ctxsim"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/shard"
)

// PricesInput names the price file among a sharded run's inputs.
const PricesInput = "price file"

// InputHashes are what a sharded run reads, hashed for its manifest
// (shard.Manifest.Inputs), so merge refuses shards that read different
// inputs: each trace path's files (named "trace PATH"), or the embedded
// suite when suite is set, and the price file (PricesInput) when prices
// is set. Standard input ("-") is an *InputError: every shard must read
// the same input.
func InputHashes(paths []string, suite bool, prices string) ([]shard.Input, error) {
	var out []shard.Input
	if suite {
		h, err := shard.HashFiles(ctxsim.Recorded(), ".")
		if err != nil {
			return nil, err
		}
		out = append(out, shard.Input{Name: "embedded suite", Hash: h})
	}
	for _, p := range paths {
		if p == "-" {
			return nil, badInput("{shard} cannot read standard input: every shard must read the same input")
		}
		h, err := shard.HashPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, shard.Input{Name: "trace " + p, Hash: h})
	}
	if prices != "" {
		h, err := shard.HashPath(prices)
		if err != nil {
			return nil, err
		}
		out = append(out, shard.Input{Name: PricesInput, Hash: h})
	}
	return out, nil
}

// SamePrices checks that prices, a price file ("" for the embedded rate
// card), is the one m's shards priced with (PricesInput): merging a cost
// run prices its sessions again and must use the shards' card. A file
// missing or given against the shards is an *InputError the input alone
// is at fault for; another file is one it is not.
func SamePrices(m shard.Manifest, prices string) error {
	switch have := m.Input(PricesInput); {
	case have != "" && prices == "":
		return badInput("the shards priced with a {price file}: give merge the same {price file}")
	case have == "" && prices != "":
		return badInput("{price file}: the shards used the embedded rate card")
	case have != "":
		h, err := shard.HashPath(prices)
		if err != nil {
			return err
		}
		if h != have {
			return &InputError{Msg: "{price file} " + prices + " is not the file the shards priced with"}
		}
	}
	return nil
}

// LoadPrices is the embedded rate card (pricing.Default), overridden and
// extended by the LiteLLM price file at path when path is set.
func LoadPrices(path string) (*pricing.Card, error) {
	card := pricing.Default()
	if path == "" {
		return card, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{Msg: fmt.Sprintf("{price file}: %v", err)}
	}
	defer f.Close()
	return card, card.LoadLiteLLM(f, path)
}
