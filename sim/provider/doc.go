// Package provider holds fake LLM providers that cache and bill requests
// exactly as the real services do (reference/providers.md §7).
//
// A Provider takes a frozen prompt.Request and the virtual time and returns
// usage and latency, or the error the API would answer. Providers keep their
// own cache state: one instance per simulated tenant.
package provider
