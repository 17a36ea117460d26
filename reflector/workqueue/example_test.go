package workqueue_test

import (
	"fmt"
	"time"

	"github.com/listwatch/listwatch/reflector/workqueue"
)

func ExampleQueue() {
	q := workqueue.New[string](workqueue.Config{})
	q.Add("a")
	q.Add("b")
	q.Add("a") // already waiting: de-duplicated
	fmt.Println("waiting:", q.Len())

	item, _ := q.Get()
	q.Add(item) // changed while being processed: held back until Done
	fmt.Println("waiting while", item, "is processed:", q.Len())
	q.Done(item)
	fmt.Println("waiting after Done:", q.Len())

	q.ShutDown()
	for {
		item, shutdown := q.Get()
		if shutdown {
			break
		}
		fmt.Println("processed", item)
		q.Done(item)
	}
	// Output:
	// waiting: 2
	// waiting while a is processed: 1
	// waiting after Done: 2
	// processed b
	// processed a
}

func ExampleItemExponentialFailureRateLimiter() {
	r := workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Millisecond)
	for range 5 {
		fmt.Print(r.When("key"), " ")
	}
	r.Forget("key")
	fmt.Println("| after Forget:", r.When("key"))
	// Output: 5ms 10ms 20ms 30ms 30ms | after Forget: 5ms
}
