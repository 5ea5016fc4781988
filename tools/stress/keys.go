package stress

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
)

// keyChooser picks existing keys in [0, n).
type keyChooser interface {
	next(r *rand.Rand, n int64) int64
}

func newKeyChooser(name string, n int64) (keyChooser, error) {
	switch name {
	case "uniform":
		return uniform{}, nil
	case "zipfian":
		return newZipfian(n), nil
	case "sequential":
		return &sequential{}, nil
	case "latest":
		return latest{z: newZipfian(n)}, nil
	}
	return nil, fmt.Errorf("--distribution: %q is not one of uniform, zipfian, sequential", name)
}

type uniform struct{}

func (uniform) next(r *rand.Rand, n int64) int64 { return r.Int64N(max(n, 1)) }

// sequential walks the keys in order, again and again; shared by the
// workers, each taking the next.
type sequential struct{ i atomic.Int64 }

func (s *sequential) next(_ *rand.Rand, n int64) int64 {
	return (s.i.Add(1) - 1) % max(n, 1)
}

// zipfian is YCSB's zipfian generator (Gray et al., "Quickly generating
// billion-record synthetic databases"), constant 0.99, over the key space
// it was built for, scattered over the keys by a hash so that the popular
// keys are not neighbours (YCSB's scrambled zipfian).
type zipfian struct {
	items              int64
	theta, alpha, zeta float64
	eta, zeta2         float64
}

const zipfianConstant = 0.99

func newZipfian(items int64) *zipfian {
	items = max(items, 2)
	z := &zipfian{items: items, theta: zipfianConstant}
	z.zeta2 = zetaN(2, z.theta)
	z.zeta = zetaN(items, z.theta)
	z.alpha = 1 / (1 - z.theta)
	z.eta = (1 - math.Pow(2/float64(items), 1-z.theta)) / (1 - z.zeta2/z.zeta)
	return z
}

func zetaN(n int64, theta float64) float64 {
	sum := 0.0
	for i := int64(1); i <= n; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	return sum
}

// rank draws a rank, 0 the most popular.
func (z *zipfian) rank(r *rand.Rand) int64 {
	u := r.Float64()
	uz := u * z.zeta
	switch {
	case uz < 1:
		return 0
	case uz < 1+math.Pow(0.5, z.theta):
		return 1
	}
	return int64(float64(z.items) * math.Pow(z.eta*u-z.eta+1, z.alpha))
}

func (z *zipfian) next(r *rand.Rand, n int64) int64 {
	return int64(fnv64(uint64(z.rank(r))) % uint64(max(n, 1)))
}

// latest favours the newest keys (YCSB workload D): rank 0 is the last
// key inserted.
type latest struct{ z *zipfian }

func (l latest) next(r *rand.Rand, n int64) int64 {
	k := n - 1 - l.z.rank(r)
	if k < 0 {
		k = 0
	}
	return k
}

// fnv64 scatters a rank over the key space (FNV-1a of its 8 bytes, as
// YCSB's scrambled zipfian does).
func fnv64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= 0x100000001b3
		v >>= 8
	}
	return h
}
