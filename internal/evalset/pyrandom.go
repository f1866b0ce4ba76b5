package evalset

import "math"

// pyRandom is CPython's random.Random: MT19937 seeded from an integer by
// init_by_array, with getrandbits, _randbelow and sample on top, so the
// random baseline draws the very lines baselines.py draws.
type pyRandom struct {
	mt  [624]uint32
	idx int
}

// newPyRandom seeds like random.Random(seed) for a non-negative integer
// seed: the key is its 32-bit words, least significant first, and at least
// one word.
func newPyRandom(seed uint64) *pyRandom {
	key := []uint32{uint32(seed)}
	if hi := uint32(seed >> 32); hi != 0 {
		key = append(key, hi)
	}
	r := &pyRandom{}
	r.initByArray(key)
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < len(r.mt); i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = len(r.mt)
}

func (r *pyRandom) initByArray(key []uint32) {
	const n = 624
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRandom) uint32() uint32 {
	const (
		n, m      = 624, 397
		upperMask = 0x80000000
		lowerMask = 0x7fffffff
		matrixA   = 0x9908b0df
	)
	if r.idx >= n {
		for k := 0; k < n; k++ {
			y := (r.mt[k] & upperMask) | (r.mt[(k+1)%n] & lowerMask)
			v := r.mt[(k+m)%n] ^ (y >> 1)
			if y&1 != 0 {
				v ^= matrixA
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// getrandbits returns k random bits, 1 <= k <= 32 (all this package needs).
func (r *pyRandom) getrandbits(k int) uint32 {
	return r.uint32() >> (32 - k)
}

// randbelow is _randbelow_with_getrandbits: rejection sampling on
// n.bit_length() bits. n must be in [1, 2^32).
func (r *pyRandom) randbelow(n int) int {
	k := 0
	for v := n; v > 0; v >>= 1 {
		k++
	}
	x := int(r.getrandbits(k))
	for x >= n {
		x = int(r.getrandbits(k))
	}
	return x
}

// sample is random.sample(range(1, n+1), k) (CPython 3.11, no counts): a
// partial Fisher-Yates on a pool when the population is small next to k,
// else rejection of repeats. 0 <= k <= n.
func (r *pyRandom) sample(n, k int) []int {
	out := make([]int, k)
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(k*3))/math.Log(4))))
	}
	if n <= setsize {
		pool := make([]int, n)
		for i := range pool {
			pool[i] = i + 1
		}
		for i := 0; i < k; i++ {
			j := r.randbelow(n - i)
			out[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return out
	}
	selected := make(map[int]bool, k)
	for i := 0; i < k; i++ {
		j := r.randbelow(n)
		for selected[j] {
			j = r.randbelow(n)
		}
		selected[j] = true
		out[i] = j + 1
	}
	return out
}
