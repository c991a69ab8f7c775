package taskbox

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type input struct {
	Name string `json:"name"`
}

type output struct {
	Greeting string `json:"greeting"`
}

func greet(in input) (output, error) {
	switch in.Name {
	case "":
		return output{}, Fail("empty_name", "say who to greet")
	case "later":
		return output{}, Retry("busy", "try again")
	case "oops":
		return output{}, errors.New("plain error")
	}
	return output{Greeting: "Hello, " + in.Name + "!"}, nil
}

func call(stdin string) (int, string, string) {
	var out, errs bytes.Buffer
	status := run(strings.NewReader(stdin), &out, &errs, greet)
	return status, out.String(), errs.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestAnOutputIsItsJSON(t *testing.T) {
	status, out, _ := call(`{"name":"Ada"}`)
	if status != 0 || out != `{"greeting":"Hello, Ada!"}` {
		t.Fatalf("%d %q", status, out)
	}
}

func TestFailuresAreStatedOnTheLastLineOfStderr(t *testing.T) {
	cases := map[string]string{
		`{"name":""}`:      `taskbox-failure {"code":"empty_name","message":"say who to greet","retryable":false}`,
		`{"name":"later"}`: `taskbox-failure {"code":"busy","message":"try again","retryable":true}`,
		`{"name":"oops"}`:  `taskbox-failure {"code":"error","message":"plain error","retryable":true}`,
	}
	for in, want := range cases {
		status, out, errs := call(in)
		if status != 1 || out != "" || lastLine(errs) != want {
			t.Errorf("%s: %d %q %q", in, status, out, errs)
		}
	}
}

func TestAnInputThatDoesNotParseIsAFinalBadInput(t *testing.T) {
	for _, in := range []string{`{"name": 7}`, `not json`, ``} {
		status, _, errs := call(in)
		if status != 1 || !strings.HasPrefix(lastLine(errs), `taskbox-failure {"code":"bad_input"`) || !strings.HasSuffix(lastLine(errs), `"retryable":false}`) {
			t.Errorf("%q: %d %q", in, status, errs)
		}
	}
}
