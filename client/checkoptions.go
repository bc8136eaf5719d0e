package client

// CheckOptions reports the errors opts would make a call fail with, joined,
// without making a call: for packages that carry client options to the
// requests they make (poll, upload, batch), so a bad one fails before
// anything is sent.
func CheckOptions(opts ...Option) error {
	s := defaultSettings()
	s.perCall = true
	return s.apply(opts)
}

// CheckSharedOptions is [CheckOptions] for options a package applies to
// each of many calls it makes (package batch, to every create, wait and
// save of a run): it also refuses those that belong to one call,
// [WithIdempotencyKey] and [WithResponseInto].
func CheckSharedOptions(opts ...Option) error {
	s := defaultSettings()
	s.perCall, s.shared = true, true
	return s.apply(opts)
}
