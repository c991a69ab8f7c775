// Package taskbox makes a Go program a taskbox task. Go guests run as WASI preview-1 commands
// (GOOS=wasip1 GOARCH=wasm): the job's input is stdin, the output is stdout, and a failure is
// the last line of stderr with a non-zero exit. Run does all three:
//
//	type Input struct{ Name string `json:"name"` }
//	type Output struct{ Greeting string `json:"greeting"` }
//
//	func greet(in Input) (Output, error) {
//		if in.Name == "" {
//			return Output{}, taskbox.Fail("empty_name", "say who to greet")
//		}
//		return Output{Greeting: "Hello, " + in.Name + "!"}, nil
//	}
//
//	func main() { taskbox.Run(greet) }
//
// Go guests have no outbound HTTP and no secrets: preview-1 has neither.
package taskbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Failure is how an attempt fails: a machine-readable Code, a Message for people, and whether
// another attempt may get past it.
type Failure struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

func (f *Failure) Error() string {
	kind := "final"
	if f.Retryable {
		kind = "retryable"
	}
	return fmt.Sprintf("%s (%s): %s", f.Code, kind, f.Message)
}

// Fail is a failure no other attempt gets past: the job fails now.
func Fail(code, message string) error {
	return &Failure{Code: code, Message: message}
}

// Retry is a failure another attempt may get past: the task's retry policy decides.
func Retry(code, message string) error {
	return &Failure{Code: code, Message: message, Retryable: true}
}

// Log writes a line to the attempt's log (stderr; the host keeps it, bounded).
func Log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// failureLine starts the last line of stderr that states a failure to the host.
const failureLine = "taskbox-failure "

// Run reads the job's input from stdin into an In, calls task, writes its Out as JSON to
// stdout and exits. An input that does not parse as In is the final failure bad_input; an
// error that is not a *Failure is the retryable failure "error".
func Run[In any, Out any](task func(In) (Out, error)) {
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr, task))
}

func run[In any, Out any](stdin io.Reader, stdout, stderr io.Writer, task func(In) (Out, error)) int {
	var in In
	data, err := io.ReadAll(stdin)
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	if err != nil {
		return fail(stderr, &Failure{Code: "bad_input", Message: "the input does not match the task's input type: " + err.Error()})
	}
	out, err := task(in)
	if err != nil {
		var f *Failure
		if !errors.As(err, &f) {
			f = &Failure{Code: "error", Message: err.Error(), Retryable: true}
		}
		return fail(stderr, f)
	}
	text, err := json.Marshal(out)
	if err != nil {
		return fail(stderr, &Failure{Code: "bad_output", Message: "the output does not serialize as JSON: " + err.Error()})
	}
	if _, err := stdout.Write(text); err != nil {
		return fail(stderr, &Failure{Code: "error", Message: "writing the output: " + err.Error(), Retryable: true})
	}
	return 0
}

func fail(stderr io.Writer, f *Failure) int {
	line, _ := json.Marshal(f)
	fmt.Fprintf(stderr, "\n%s%s\n", failureLine, line)
	return 1
}
