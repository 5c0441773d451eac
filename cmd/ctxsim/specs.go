package main

import (
	"fmt"
	"os"

	"github.com/ctxsim/ctxsim/pricing"
)

// loadCard is the embedded rate card, overridden by a LiteLLM file.
func loadCard(prices string) (*pricing.Card, error) {
	card := pricing.Default()
	if prices == "" {
		return card, nil
	}
	fh, err := os.Open(prices)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	defer fh.Close()
	if err := card.LoadLiteLLM(fh, prices); err != nil {
		return nil, err
	}
	return card, nil
}
