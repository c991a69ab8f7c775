"""What componentize-py builds (`componentize taskbox_entry`): the project's `app`, whose
`@taskbox.task` registers the task, and the world's export that runs it."""

import app  # noqa: F401  (imported for its @taskbox.task)
from taskbox._world import WitWorld

__all__ = ["WitWorld"]
