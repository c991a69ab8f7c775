// Command {{name}} is a taskbox task: `taskbox build` turns it into dist/task.wasm, a WASI
// preview-1 command; taskbox.Run reads the job's input, calls greet and writes its output.
package main

import (
	"strings"

	"taskbox/sdk"
)

// Input is a job's input.
type Input struct {
	// Name is who to greet.
	Name string `json:"name"`
	// Times is how many times (1 to 10; 0 means 1).
	Times int `json:"times"`
}

// Output is what a finished job returns.
type Output struct {
	Greeting string `json:"greeting"`
}

// greet is one attempt. Return taskbox.Fail for a failure another attempt will not get past,
// taskbox.Retry for one it may.
func greet(in Input) (Output, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return Output{}, taskbox.Fail("empty_name", "say who to greet: `name` is empty")
	}
	times := min(max(in.Times, 1), 10)
	taskbox.Log("greeting %s %d time(s)", name, times)
	words := make([]string, times)
	for i := range words {
		words[i] = "Hello, " + name + "!"
	}
	return Output{Greeting: strings.Join(words, " ")}, nil
}

func main() { taskbox.Run(greet) }
