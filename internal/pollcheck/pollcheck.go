// Package pollcheck lets package client/batch, which carries poll options
// to the waits of a run, check them before the run sends anything, as poll
// itself would: package poll sets [Generations] when it is initialised, so
// any package that imports poll finds it set.
package pollcheck

// Generations reports the errors opts, a []poll.Option, would make a
// poll.Generations wait fail with, joined, and whether they set
// poll.OnUpdate.
var Generations func(opts any) (onUpdate bool, err error)
