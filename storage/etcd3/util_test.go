package etcd3

import "strconv"

func itoa[T ~int64 | ~uint64 | ~int](v T) string { return strconv.FormatInt(int64(v), 10) }
