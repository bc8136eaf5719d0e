package riverjob

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// Kind is the River job kind of a generation.
const Kind = "mediagen_generation"

// Args are the River job arguments of one generation: what to generate,
// under which idempotency key, and where to save it.
type Args struct {
	// Key is the idempotency key the job submits with, such as an order
	// number; "" means "job-<River job id>", so keys of that form are
	// refused. Jobs with a key are unique by it: inserting one whose key a
	// job already has adds nothing.
	Key string `json:"key,omitempty" river:"unique"`
	// Feature is the feature, canonical ("image/generation") or legacy.
	Feature mediagen.Feature `json:"feature"`
	// Args is the JSON object of the feature's arguments.
	Args json.RawMessage `json:"args,omitempty"`
	// SaveTo is the folder the outputs are saved in once done; "" for the
	// worker's (WithSaveTo), or not saved when that is "" too.
	SaveTo string `json:"save_to,omitempty"`
}

// Kind returns the job kind, Kind.
func (Args) Kind() string { return Kind }

// InsertOpts makes jobs with a Key unique by it in every state, so running
// the same enqueue again adds no duplicates, not even of jobs done or failed.
func (a Args) InsertOpts() river.InsertOpts {
	if a.Key == "" {
		return river.InsertOpts{}
	}
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
		rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted,
		rivertype.JobStateDiscarded, rivertype.JobStatePending, rivertype.JobStateRetryable,
		rivertype.JobStateRunning, rivertype.JobStateScheduled,
	}}}
}

// NewArgs returns the job arguments of a generation with args (typed, such
// as client.ImageGenerationArgs, or client.RawArgs) and key ("" for the
// job's id).
func NewArgs(key string, args client.Args) (Args, error) {
	if args == nil {
		return Args{}, fmt.Errorf("riverjob: no args: %w", client.ErrInvalidArgument)
	}
	if reserved(key) {
		return Args{}, fmt.Errorf("riverjob: key %q has the form of a job's default key: %w", key, client.ErrInvalidArgument)
	}
	if len(key) > client.MaxIdempotencyKey {
		return Args{}, fmt.Errorf("riverjob: key of %d bytes, over %d: %w", len(key), client.MaxIdempotencyKey, client.ErrInvalidArgument)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return Args{}, err
	}
	return Args{Key: key, Feature: args.Feature(), Args: b}, nil
}

// key returns the idempotency key of the job with id.
func (a Args) key(id int64) string {
	if a.Key != "" {
		return a.Key
	}
	return defaultKey(id)
}

// defaultKey is the idempotency key of the job with id and no Key.
func defaultKey(id int64) string { return fmt.Sprintf("job-%d", id) }

// reserved reports whether key has the form of a default key, "job-<digits>":
// given to another job, it would share that job's generation and charge.
func reserved(key string) bool {
	n, ok := strings.CutPrefix(key, "job-")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// raw returns the arguments the client sends.
func (a Args) raw() (client.RawArgs, error) {
	values := map[string]any{}
	if len(a.Args) > 0 {
		if err := json.Unmarshal(a.Args, &values); err != nil {
			return client.RawArgs{}, fmt.Errorf("riverjob: args are not a JSON object: %w", client.ErrInvalidArgument)
		}
	}
	if a.Feature == "" {
		return client.RawArgs{}, fmt.Errorf("riverjob: no feature: %w", client.ErrInvalidArgument)
	}
	return client.RawArgs{FeatureName: a.Feature, Values: values}, nil
}

// Result is what a job records as its output (River's job output) when
// its generation is done.
type Result struct {
	Key        string               `json:"key"`
	Generation *mediagen.Generation `json:"generation"`
	Path       string               `json:"path,omitempty"`
	PosterPath string               `json:"poster_path,omitempty"`
}
