// Package display holds the small text helpers gateflow uses wherever it shows runs to
// people: the Web UI's current details, flowctl's tables and its live watch. Each helper
// exists once, so a step reads the same in all of them.
package display
