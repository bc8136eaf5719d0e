package mediagen

// OnBusyRetry makes f see each retry of Dialect.Retry until the test ends,
// so that tests of the stores can tell their statements went through it.
func OnBusyRetry(t interface{ Cleanup(func()) }, f func(error)) {
	busyRetried.Store(&f)
	t.Cleanup(func() { busyRetried.Store(nil) })
}
