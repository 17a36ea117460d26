package api

import (
	"fmt"
	"math/big"
)

// UIDShards returns n shardSelector expressions (KEP-5866's
// shardRange over object.metadata.uid) that split a resource into n
// disjoint shards of equal hash range which together hold all of it. Give
// one to NewShardInformers to run one of n controller instances. n < 1 is
// treated as 1.
func UIDShards(n int) []string {
	if n < 1 {
		n = 1
	}
	space := new(big.Int).Lsh(big.NewInt(1), 64)
	bound := func(i int) string {
		if i == n {
			return "0x1" + fmt.Sprintf("%016x", 0)
		}
		v := new(big.Int).Mul(space, big.NewInt(int64(i)))
		return fmt.Sprintf("0x%016x", v.Div(v, big.NewInt(int64(n))))
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("shardRange(object.metadata.uid, '%s', '%s')", bound(i), bound(i+1))
	}
	return out
}
