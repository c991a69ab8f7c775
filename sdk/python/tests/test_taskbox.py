"""The SDK natively: `python -m unittest discover -s tests` (with `src` on PYTHONPATH)."""

import unittest
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import taskbox
from taskbox import _task
from taskbox._schema import schema

JOB = taskbox.Job("j1", 1, "default")


class Color(Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Line:
    sku: str
    qty: int = 1


@dataclass
class Order:
    customer: str
    lines: list[Line] = field(default_factory=list)
    color: Color | None = None
    note: str | None = None
    weight: float = 0.0


def place(order: Order, ctx: taskbox.Ctx) -> dict:
    if not order.lines:
        raise taskbox.Fail("empty_order", "an order needs lines")
    if order.customer == "later":
        return taskbox.Snooze(2000)
    if order.customer == "approval":
        return taskbox.Wait({"for": "approval"})
    if order.customer == "boom":
        raise KeyError("boom")
    ctx.info(f"{len(order.lines)} lines")
    return {"items": sum(line.qty for line in order.lines), "color": order.color, "weight": order.weight}


class RunTest(unittest.TestCase):
    def attempt(self, text: str):
        return _task.run(JOB, text, None, place)

    def test_nested_dataclasses_and_an_enum_come_from_json(self):
        kind, out = self.attempt(
            '{"customer": "a", "lines": [{"sku": "x", "qty": 2}, {"sku": "y"}], "color": "red", "weight": 3}'
        )
        self.assertEqual((kind, out), ("done", '{"items":3,"color":"red","weight":3.0}'))

    def test_snooze_and_wait_park_the_job(self):
        self.assertEqual(self.attempt('{"customer": "later", "lines": [{"sku": "x"}]}'), ("snooze", 2000))
        self.assertEqual(
            self.attempt('{"customer": "approval", "lines": [{"sku": "x"}]}'), ("wait", '{"for":"approval"}')
        )

    def assertFails(self, text: str, code: str, retryable: bool) -> taskbox.Fail:
        with self.assertRaises(taskbox.Fail) as failed:
            self.attempt(text)
        self.assertEqual((failed.exception.code, failed.exception.retryable), (code, retryable), str(failed.exception))
        return failed.exception

    def test_the_tasks_own_failure_keeps_its_code(self):
        self.assertFails('{"customer": "a"}', "empty_order", False)

    def test_input_that_does_not_fit_is_a_final_bad_input_naming_where(self):
        self.assertFails("not json", "bad_input", False)
        self.assertIn("input.customer", str(self.assertFails('{"customer": 5}', "bad_input", False)))
        self.assertIn(
            "input.lines[0].qty",
            str(self.assertFails('{"customer": "a", "lines": [{"sku": "x", "qty": "2"}]}', "bad_input", False)),
        )
        self.assertIn("nope", str(self.assertFails('{"customer": "a", "nope": 1}', "bad_input", False)))
        self.assertFails('{"lines": []}', "bad_input", False)
        self.assertFails('{"customer": "a", "color": "green", "lines": [{"sku": "x"}]}', "bad_input", False)

    def test_any_other_exception_is_retryable(self):
        self.assertFails('{"customer": "boom", "lines": [{"sku": "x"}]}', "exception", True)

    def test_an_output_that_is_not_json_is_a_final_bad_output(self):
        self.assertEqual(_task.run(JOB, "{}", None, lambda i: {"x": 1}), ("done", '{"x":1}'))
        with self.assertRaises(taskbox.Fail) as failed:
            _task.run(JOB, "{}", None, lambda i: {"x": object()})
        self.assertEqual(failed.exception.code, "bad_output")
        with self.assertRaises(taskbox.Fail):
            _task.run(JOB, "{}", None, lambda i: float("nan"))

    def test_an_unannotated_input_is_the_json_as_parsed(self):
        def echo(input, ctx):
            return input

        self.assertEqual(_task.run(JOB, '[1, "a"]', None, echo), ("done", '[1,"a"]'))


class CtxTest(unittest.TestCase):
    def test_a_test_context_keeps_logs_and_secrets(self):
        ctx = taskbox.Ctx.test(attempt=2).with_secret("API_KEY", "s3cret")
        ctx.info("hello")
        ctx.progress(150, "nearly")
        self.assertEqual(ctx.job.attempt, 2)
        self.assertEqual(ctx.secret("API_KEY"), "s3cret")
        self.assertEqual([line.message for line in ctx.logs], ["hello", "100% nearly"])
        with self.assertRaises(taskbox.Fail) as failed:
            ctx.secret("OTHER")
        self.assertEqual((failed.exception.code, failed.exception.retryable), ("missing_secret", False))
        with self.assertRaises(ValueError):
            ctx.log("loud", "x")

    def test_a_response_reads_its_body_and_headers(self):
        r = taskbox.Response(200, [("Content-Type", "application/json")], b'{"a": 1}')
        self.assertTrue(r.ok)
        self.assertEqual(r.header("content-type"), "application/json")
        self.assertIsNone(r.header("x-missing"))
        self.assertEqual(r.json(), {"a": 1})
        self.assertFalse(taskbox.Response(503, [], b"").ok)
        with self.assertRaises(taskbox.Fail) as failed:
            taskbox.Ctx.test().fetch("https://example.com")
        self.assertEqual(failed.exception.code, "unavailable")

    def test_other_tasks_run_only_inside_taskbox(self):
        with self.assertRaises(taskbox.Fail) as failed:
            taskbox.Ctx.test().invoke("other", {})
        self.assertEqual(failed.exception.code, "unavailable")

    def test_spans_go_to_the_host_and_do_nothing_natively(self):
        with taskbox.Ctx.test().span("work", {"k": 1}) as span:
            span.event("e")
        calls = []

        class Recorder:
            def start_span(self, name, attributes):
                calls.append(("start", name, attributes))
                return 7

            def add_event(self, span, name, attributes):
                calls.append(("event", span, name, attributes))

            def set_error(self, span, message):
                calls.append(("error", span, message))

            def end_span(self, span):
                calls.append(("end", span))

        ctx = taskbox.Ctx(JOB, Recorder())
        with self.assertRaises(KeyError):
            with ctx.span("charge", {"order": 12}) as span:
                span.event("sent", {"n": 1})
                raise KeyError("x")
        self.assertEqual(
            calls,
            [
                ("start", "charge", [("order", "12")]),
                ("event", 7, "sent", [("n", "1")]),
                ("error", 7, "KeyError: 'x'"),
                ("end", 7),
            ],
        )

    def test_a_snooze_takes_whole_milliseconds(self):
        with self.assertRaises(ValueError):
            taskbox.Snooze(-1)
        with self.assertRaises(ValueError):
            taskbox.Snooze(1.5)


class SchemaTest(unittest.TestCase):
    def test_a_dataclass_gives_a_schema_and_any_gives_none(self):
        try:
            import pydantic  # noqa: F401
        except ImportError:
            self.skipTest("pydantic (taskbox build's schema writer) is not installed here")
        s = schema(Order)
        self.assertEqual(s["required"], ["customer"])
        self.assertEqual(s["properties"]["customer"]["type"], "string")
        self.assertIn("Line", s["$defs"])
        self.assertIsNone(schema(Any))


class TaskTest(unittest.TestCase):
    def test_one_task_a_component(self):
        saved = _task._TASK
        try:
            _task._TASK = None
            taskbox.task(place)
            self.assertIs(taskbox.registered(), place)
            with self.assertRaises(RuntimeError):
                taskbox.task(lambda input: input)
            with self.assertRaises(TypeError):
                taskbox.task(lambda: None)
        finally:
            _task._TASK = saved


if __name__ == "__main__":
    unittest.main()
