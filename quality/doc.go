// Package quality holds the settings of a quality gate: a step that reads a score (0 to
// 100) from what an earlier step produced and passes when it reaches a threshold. A
// handler runs one with ctx.QualityGate (package flow); a declarative definition with a
// gate node of type quality (`gate: {type: quality, source: ..., threshold: 80}`).
//
//	q, err := ctx.QualityGate("review-score", review, quality.Gate{Threshold: 80, Field: "score"})
package quality
