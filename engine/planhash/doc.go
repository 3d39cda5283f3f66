// Package planhash holds only a test: the SHA-256 (plan.Plan.Digest) of
// every plan the engine builds for the shared models, recorded as
// constants, so that refactors of the plan builders and of the kernel
// contract are proved not to change a single launch or argument byte. A
// change that is meant to change a plan updates the constant in the same
// commit and says why.
package planhash
