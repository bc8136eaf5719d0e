package journal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client/journal"
)

// conformance is what every Journal must do.
var conformance = []struct {
	name string
	run  func(t *testing.T, j journal.Journal)
}{
	{"ClaimNew", testClaimNew},
	{"ClaimExisting", testClaimExisting},
	{"GetMissing", testGetMissing},
	{"Take", testTake},
	{"TakeRace", testTakeRace},
	{"Renew", testRenew},
	{"Settle", testSettle},
	{"Release", testRelease},
	{"Mark", testMark},
	{"Unfinished", testUnfinished},
	{"Cleanup", testCleanup},
	{"ClaimRace", testClaimRace},
}

func TestConformance(t *testing.T) {
	for _, im := range implementations() {
		t.Run(im.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) { c.run(t, im.open(t)) })
			}
		})
	}
}

func testClaimNew(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	r := journal.Record{
		Key: "k1", Op: "generation", Feature: "video/avatar", Fingerprint: "sha256:ab12",
		Estimate: 1.25, Holder: "host-1/42/a", HeldUntil: at(30 * time.Second), Started: at(time.Second), Created: t0,
	}
	got, ok, err := j.Claim(ctx, r)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, r, got)
	stored, err := j.Get(ctx, "k1")
	require.NoError(t, err)
	assert.Equal(t, r, stored)

	// Every field round-trips, an ID and the flags included.
	done := journal.Record{
		Key: "k2", Op: "voice", Feature: "audio/voice-clone", Fingerprint: "fp", Estimate: 0.5,
		Holder: "h", ID: "voice_9", Finished: true, Saved: true, Started: t0, Created: at(-time.Hour),
	}
	got, ok, err = j.Claim(ctx, done)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, done, got)
	stored, err = j.Get(ctx, "k2")
	require.NoError(t, err)
	assert.Equal(t, done, stored)
	assert.False(t, stored.Held(t0), "a settled record is not held")
}

func testClaimExisting(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	first := held("k", "a", at(time.Minute))
	_, ok, err := j.Claim(ctx, first)
	require.NoError(t, err)
	require.True(t, ok)

	other := journal.Record{Key: "k", Op: "voice", Feature: "f", Fingerprint: "other", Estimate: 9, Holder: "b",
		HeldUntil: at(time.Hour), Started: at(time.Hour), ID: "x", Finished: true, Saved: true, Created: at(time.Hour)}
	got, ok, err := j.Claim(ctx, other)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, first, got, "the stored record is returned")
	stored, err := j.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, first, stored, "and left unchanged")
}

func testGetMissing(t *testing.T, j journal.Journal) {
	_, err := j.Get(t.Context(), "nothing")
	assert.ErrorIs(t, err, journal.ErrNotFound)
}

func testTake(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	prev := held("k", "a", at(time.Minute))
	_, _, err := j.Claim(ctx, prev)
	require.NoError(t, err)

	for name, stale := range map[string]journal.Record{
		"another holder":     held("k", "c", at(time.Minute)),
		"another held_until": held("k", "a", at(time.Minute+time.Millisecond)),
	} {
		ok, err := j.Take(ctx, "k", stale, "b", at(2*time.Minute), at(time.Minute))
		require.NoError(t, err)
		assert.False(t, ok, name)
	}

	ok, err := j.Take(ctx, "k", prev, "b", at(2*time.Minute), at(61*time.Second))
	require.NoError(t, err)
	assert.True(t, ok)
	got, err := j.Get(ctx, "k")
	require.NoError(t, err)
	want := prev
	want.Holder, want.HeldUntil, want.Started = "b", at(2*time.Minute), at(61*time.Second)
	assert.Equal(t, want, got, "holder, held_until and started change, nothing else")

	ok, err = j.Take(ctx, "k", prev, "c", at(3*time.Minute), at(2*time.Minute))
	require.NoError(t, err)
	assert.False(t, ok, "prev's hold was taken already")

	require.NoError(t, j.Settle(ctx, "k", "b", "gen_1"))
	settled, err := j.Get(ctx, "k")
	require.NoError(t, err)
	ok, err = j.Take(ctx, "k", settled, "c", at(3*time.Minute), at(2*time.Minute))
	require.NoError(t, err)
	assert.False(t, ok, "a settled key is not taken")

	ok, err = j.Take(ctx, "missing", prev, "c", at(3*time.Minute), at(2*time.Minute))
	require.NoError(t, err)
	assert.False(t, ok)
}

// testTakeRace has several callers find one lapsed hold at once: exactly
// one takes it over.
func testTakeRace(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	const rounds, callers = 8, 8
	for round := range rounds {
		key := fmt.Sprintf("k%d", round)
		_, _, err := j.Claim(ctx, held(key, "dead", at(time.Second)))
		require.NoError(t, err)
		raceTake(t, key, callers, func(int) journal.Journal { return j })
	}
}

func testRenew(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	_, _, err := j.Claim(ctx, held("k", "a", at(time.Minute)))
	require.NoError(t, err)

	ok, err := j.Renew(ctx, "k", "b", at(time.Hour))
	require.NoError(t, err)
	assert.False(t, ok, "another caller does not renew")
	ok, err = j.Renew(ctx, "k", "a", at(2*time.Minute))
	require.NoError(t, err)
	assert.True(t, ok)
	got, err := j.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, at(2*time.Minute), got.HeldUntil)
	assert.Equal(t, "a", got.Holder)

	require.NoError(t, j.Settle(ctx, "k", "a", "gen_1"))
	ok, err = j.Renew(ctx, "k", "a", at(3*time.Minute))
	require.NoError(t, err)
	assert.False(t, ok, "a settled key is held by nobody")
	ok, err = j.Renew(ctx, "missing", "a", at(3*time.Minute))
	require.NoError(t, err)
	assert.False(t, ok)
}

func testSettle(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	r := held("k", "a", at(time.Minute))
	_, _, err := j.Claim(ctx, r)
	require.NoError(t, err)

	assert.ErrorIs(t, j.Settle(ctx, "k", "stranger", "gen_x"), journal.ErrNotHeld)
	got, err := j.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, r, got, "a stranger changes nothing")

	require.NoError(t, j.Settle(ctx, "k", "a", "gen_1"))
	got, err = j.Get(ctx, "k")
	require.NoError(t, err)
	want := r
	want.ID, want.HeldUntil = "gen_1", time.Time{}
	assert.Equal(t, want, got, "the id is set and the hold ends")

	assert.ErrorIs(t, j.Settle(ctx, "k", "a", "gen_2"), journal.ErrNotHeld, "a settled key is settled once")
	got, err = j.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "gen_1", got.ID)

	assert.ErrorIs(t, j.Settle(ctx, "missing", "a", "gen_3"), journal.ErrNotHeld)
}

func testRelease(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	r := held("k", "a", at(time.Minute))
	_, _, err := j.Claim(ctx, r)
	require.NoError(t, err)

	require.NoError(t, j.Release(ctx, "k", "stranger"))
	got, err := j.Get(ctx, "k")
	require.NoError(t, err, "a stranger releases nothing")
	assert.Equal(t, r, got)

	require.NoError(t, j.Release(ctx, "k", "a"))
	_, err = j.Get(ctx, "k")
	assert.ErrorIs(t, err, journal.ErrNotFound, "the holder's release deletes the key")
	_, ok, err := j.Claim(ctx, held("k", "b", at(time.Minute)))
	require.NoError(t, err)
	assert.True(t, ok, "a released key is claimed again")

	require.NoError(t, j.Settle(ctx, "k", "b", "gen_1"))
	require.NoError(t, j.Release(ctx, "k", "b"))
	got, err = j.Get(ctx, "k")
	require.NoError(t, err, "a settled key is never released")
	assert.Equal(t, "gen_1", got.ID)

	require.NoError(t, j.Release(ctx, "missing", "a"))
}

func testMark(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	r := held("k", "a", at(time.Minute))
	_, _, err := j.Claim(ctx, r)
	require.NoError(t, err)
	require.NoError(t, j.Settle(ctx, "k", "a", "gen_1"))

	flags := func() (bool, bool) {
		got, err := j.Get(ctx, "k")
		require.NoError(t, err)
		return got.Finished, got.Saved
	}
	require.NoError(t, j.Mark(ctx, "k", false, false))
	f, s := flags()
	assert.False(t, f)
	assert.False(t, s)
	require.NoError(t, j.Mark(ctx, "k", true, false))
	f, s = flags()
	assert.True(t, f)
	assert.False(t, s)
	require.NoError(t, j.Mark(ctx, "k", false, true))
	f, s = flags()
	assert.True(t, f, "finished stays set")
	assert.True(t, s)
	require.NoError(t, j.Mark(ctx, "k", false, false))
	f, s = flags()
	assert.True(t, f, "Mark never clears a flag")
	assert.True(t, s, "Mark never clears a flag")

	assert.ErrorIs(t, j.Mark(ctx, "missing", true, true), journal.ErrNotFound)
}

func testUnfinished(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	got, err := j.Unfinished(ctx)
	require.NoError(t, err)
	assert.Empty(t, got)

	add := func(key string, created time.Duration, id string, finished, saved bool) journal.Record {
		r := held(key, "h", time.Time{})
		r.ID, r.Finished, r.Saved, r.Created = id, finished, saved, at(created)
		_, ok, err := j.Claim(ctx, r)
		require.NoError(t, err)
		require.True(t, ok)
		return r
	}
	running := add("running", 3*time.Second, "gen_r", false, false)
	finished := add("finished", 2*time.Second, "gen_f", true, false)
	add("done", 0, "gen_d", true, true)
	add("held", -time.Second, "", false, false)
	saved := add("saved", time.Second, "gen_s", false, true)
	old := add("old", -time.Hour, "gen_o", false, false)

	// Records of one instant come in the byte order of their keys.
	tieB := add("tie-b", 4*time.Second, "gen_1", false, false)
	tieA := add("tie-a", 4*time.Second, "gen_2", false, false)
	tieUpper := add("tie-B", 4*time.Second, "gen_3", false, false)

	got, err = j.Unfinished(ctx)
	require.NoError(t, err)
	assert.Equal(t, []journal.Record{old, saved, finished, running, tieUpper, tieA, tieB}, got,
		"settled records not both finished and saved, oldest first")

	require.NoError(t, j.Mark(ctx, "old", true, true))
	got, err = j.Unfinished(ctx)
	require.NoError(t, err)
	assert.Equal(t, []journal.Record{saved, finished, running, tieUpper, tieA, tieB}, got)
}

// testCleanup deletes more records than one batch holds, and exactly those
// created before the time given, to the nanosecond.
func testCleanup(t *testing.T, j journal.Journal) {
	ctx := t.Context()
	const old = 2500
	cutoff := at(-journal.Retention)
	claimAll(t, j, old, func(i int) journal.Record {
		r := held(fmt.Sprintf("old-%04d", i), "h", time.Time{})
		r.ID, r.Created = "gen", cutoff.Add(-time.Duration(i+1)*time.Millisecond)
		return r
	})
	var kept []string
	for i, created := range []time.Time{cutoff, cutoff.Add(time.Millisecond), t0, at(time.Hour)} {
		r := held(fmt.Sprintf("new-%d", i), "h", at(time.Minute))
		r.Created = created
		_, _, err := j.Claim(ctx, r)
		require.NoError(t, err)
		kept = append(kept, r.Key)
	}

	n, err := j.Cleanup(ctx, cutoff)
	require.NoError(t, err)
	assert.Equal(t, old, n)
	for _, key := range []string{"old-0000", "old-1000", "old-2499"} {
		_, err := j.Get(ctx, key)
		assert.ErrorIs(t, err, journal.ErrNotFound, key)
	}
	for _, key := range kept {
		_, err := j.Get(ctx, key)
		assert.NoError(t, err, "%s is not older than the cut-off", key)
	}
	n, err = j.Cleanup(ctx, cutoff)
	require.NoError(t, err)
	assert.Zero(t, n)

	// Half a millisecond after a record's creation, it was created before.
	n, err = j.Cleanup(ctx, cutoff.Add(time.Millisecond/2))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = j.Get(ctx, "new-0")
	assert.ErrorIs(t, err, journal.ErrNotFound)
}

// testClaimRace has 32 callers claim one key at once: exactly one gets
// it, and every one sees the record it stored.
func testClaimRace(t *testing.T, j journal.Journal) {
	raceClaim(t, "k", 32, func(int) journal.Journal { return j })
}
