package media

import (
	"crypto/sha256"
	"encoding/binary"
)

// seedBytes turns a seed string into 32 well-mixed bytes; SHA-256 is used
// because similar seeds (job-1, job-2) must still look different.
func seedBytes(seed string) [32]byte {
	return sha256.Sum256([]byte(seed))
}

// seedUint returns the i-th 32-bit word of the seed digest (i in 0..7).
func seedUint(s [32]byte, i int) uint32 {
	return binary.BigEndian.Uint32(s[4*i:])
}
