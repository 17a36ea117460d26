// Package examplebuild holds the test that copies every godoc example of
// the module into a fresh module and builds it there, as a user copying
// an example would: it proves the examples use only public packages and
// no state of the test files around them.
package examplebuild
