package held

import (
	"errors"
	"testing"
)

func TestQueueBounds(t *testing.T) {
	var q Queue
	var got []error
	reply := func(err error) { got = append(got, err) }
	for i := range MaxTurns {
		if !q.Add([]byte{byte(i)}, reply) {
			t.Fatalf("turn %d refused", i)
		}
	}
	if q.Add([]byte("x"), reply) {
		t.Fatal("a turn beyond MaxTurns was held")
	}
	first, ok := q.Pop()
	if !ok || first.Line[0] != 0 || q.Len() != MaxTurns-1 {
		t.Fatalf("pop: %v %v, %d left", first.Line, ok, q.Len())
	}
	errGone := errors.New("gone")
	q.Take().Reply(errGone)
	if len(got) != MaxTurns-1 || q.Len() != 0 {
		t.Fatalf("%d replies, %d left", len(got), q.Len())
	}
	if _, ok := q.Pop(); ok {
		t.Fatal("pop of an empty queue")
	}
	big := make([]byte, MaxBytes/2+1)
	if !q.Add(big, reply) || q.Add(big, reply) {
		t.Fatal("want the first half of MaxBytes held, the second refused")
	}
	q.Pop()
	if !q.Add(big, reply) {
		t.Fatal("a popped turn's bytes still count")
	}
}
