"""The task's logic, natively: `python -m unittest`."""

import unittest

import taskbox
from app import Input, greet


class GreetTest(unittest.TestCase):
    def test_greets_by_name(self):
        out = greet(Input(name="Ada", times=2), taskbox.Ctx.test())
        self.assertEqual(out, {"greeting": "Hello, Ada! Hello, Ada!"})

    def test_an_empty_name_fails_for_good(self):
        with self.assertRaises(taskbox.Fail) as failed:
            greet(Input(name=" "), taskbox.Ctx.test())
        self.assertEqual((failed.exception.code, failed.exception.retryable), ("empty_name", False))

    def test_an_attempt_from_json_text(self):
        # What the component does with a job's input: the same path, natively.
        kind, text = taskbox.run(taskbox.Job("j1", 1, "default"), '{"name": "Ada"}')
        self.assertEqual((kind, text), ("done", '{"greeting":"Hello, Ada!"}'))


if __name__ == "__main__":
    unittest.main()
