// Package tracetest holds the checks every importer's tests make of the
// sessions it produces, as net/http/httptest does for handlers: Kinds
// spells a session's event kinds for compact assertions, and RoundTrip
// checks that the native writer and reader keep every field of an
// imported session.
package tracetest
