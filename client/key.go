package client

import (
	"fmt"
	"slices"
)

// Key is a typed slot in a call's options, for packages built on the client
// (upload, poll, your own): such a package declares a Key, offers Options
// that fill it ([Key.Option]) and reads it back ([Key.Get]). So one list of
// [Option] values configures both the package's behaviour and the client
// calls it makes; a client call ignores the keys it does not read.
type Key[T any] struct {
	name  string
	check func(T) error
}

// keyValue is one filled slot. Later values of the same key win.
type keyValue struct {
	key   any // a *Key[T]
	value any // a T
}

// NewKey returns a key whose options are named name in errors. check, when
// not nil, validates each value: an Option given a value it refuses fails
// the call it is passed to, with an error naming name.
func NewKey[T any](name string, check func(T) error) *Key[T] {
	return &Key[T]{name: name, check: check}
}

// Option returns an Option that sets k to v.
func (k *Key[T]) Option(v T) Option {
	return func(s *settings) error {
		if k.check != nil {
			if err := k.check(v); err != nil {
				return fmt.Errorf("%s: %w", k.name, err)
			}
		}
		s.values = append(slices.Clip(s.values), keyValue{k, v})
		return nil
	}
}

// Get applies opts as for one call and returns the value they set k to, if
// any. err joins the errors of every invalid option in opts, k's or not, so
// a package can refuse a bad list before it sends anything; the valid
// options still apply.
func (k *Key[T]) Get(opts []Option) (v T, ok bool, err error) {
	s := settings{perCall: true, retry: DefaultRetryPolicy()}
	err = s.apply(opts)
	for i := len(s.values) - 1; i >= 0; i-- {
		if s.values[i].key == any(k) {
			return s.values[i].value.(T), true, err
		}
	}
	return v, false, err
}
