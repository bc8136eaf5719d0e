package webhook_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// vector is one signature computed by openssl (testdata/make-vectors.sh),
// independently of the code under test.
type vector struct {
	name      string
	secret    string
	timestamp string
	payload   []byte
	hex       string
}

func (v vector) at() time.Time {
	secs, _ := strconv.ParseInt(v.timestamp, 10, 64)
	return time.Unix(secs, 0)
}

func (v vector) entry() string { return "sha256=" + v.hex }

func readVectors(t testing.TB) map[string]vector {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "vectors.tsv"))
	require.NoError(t, err)
	defer f.Close()
	vectors := map[string]vector{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		cols := strings.Split(lines.Text(), "\t")
		require.Len(t, cols, 5, "vectors.tsv line %q", lines.Text())
		payload, err := os.ReadFile(filepath.Join("testdata", cols[3]))
		require.NoError(t, err)
		vectors[cols[0]] = vector{name: cols[0], secret: cols[1], timestamp: cols[2], payload: payload, hex: cols[4]}
	}
	require.NoError(t, lines.Err())
	require.NotEmpty(t, vectors)
	return vectors
}
