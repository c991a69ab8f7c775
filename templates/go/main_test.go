package main

import (
	"errors"
	"testing"

	"taskbox/sdk"
)

func TestGreetsByName(t *testing.T) {
	out, err := greet(Input{Name: "Ada", Times: 2})
	if err != nil || out.Greeting != "Hello, Ada! Hello, Ada!" {
		t.Fatalf("%+v %v", out, err)
	}
}

func TestAnEmptyNameFailsForGood(t *testing.T) {
	_, err := greet(Input{Name: " "})
	var f *taskbox.Failure
	if !errors.As(err, &f) || f.Code != "empty_name" || f.Retryable {
		t.Fatalf("%v", err)
	}
}
