"""Enqueue jobs with the generated client, wait for their results, and wait out a
429 for as long as its Retry-After says.

    TASKBOX_URL=http://127.0.0.1:8080 TASKBOX_TOKEN=... python enqueue.py TASK '{"name": "Ada"}' [COUNT]

COUNT jobs (default 1) are enqueued one after another, so that a tenant with a
low `enqueue_per_second` meets its rate limit and this waits.
"""

import json
import os
import sys
import time

from taskbox_client import AuthenticatedClient
from taskbox_client.api.jobs import jobs_enqueue, jobs_show
from taskbox_client.models import ErrorAnswer, Job, JobDetail, JobSpec, JobStatus

FINAL = {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED}


class TaskboxError(Exception):
    def __init__(self, status: int, answer: object):
        self.status = status
        if isinstance(answer, ErrorAnswer):
            self.code = answer.error.code
            super().__init__(f"{status} {answer.error.code}: {answer.error.message}")
        else:
            self.code = None
            super().__init__(f"HTTP {status}")


def enqueue(client: AuthenticatedClient, spec: JobSpec, max_rate_limit_retries: int = 5) -> Job:
    """POST /v1/jobs; a 429 with Retry-After (RATE_LIMITED) is waited out and tried again."""
    for attempt in range(max_rate_limit_retries + 1):
        answer = jobs_enqueue.sync_detailed(client=client, body=spec)
        if isinstance(answer.parsed, Job):
            return answer.parsed
        retry_after = answer.headers.get("Retry-After")
        # A 429 without Retry-After is a quota (QUOTA_EXCEEDED): waiting a moment does not end it.
        if answer.status_code != 429 or retry_after is None or attempt == max_rate_limit_retries:
            raise TaskboxError(answer.status_code, answer.parsed)
        print(f"rate limited: retrying after {retry_after} s", file=sys.stderr)
        time.sleep(float(retry_after))
    raise AssertionError("unreachable")


def wait_for_job(client: AuthenticatedClient, job_id: str, timeout_s: float = 60.0) -> JobDetail:
    """Polls GET /v1/jobs/{id} (50 ms, doubling to 1 s) until the job is completed, failed or cancelled."""
    deadline = time.monotonic() + timeout_s
    pause = 0.05
    while True:
        answer = jobs_show.sync_detailed(job_id, client=client)
        if not isinstance(answer.parsed, JobDetail):
            raise TaskboxError(answer.status_code, answer.parsed)
        if answer.parsed.status in FINAL:
            return answer.parsed
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"job {job_id} is still {answer.parsed.status} after {timeout_s} s")
        time.sleep(min(pause, left))
        pause = min(pause * 2, 1.0)


def main() -> int:
    if len(sys.argv) < 2 or "TASKBOX_URL" not in os.environ or "TASKBOX_TOKEN" not in os.environ:
        print("usage: TASKBOX_URL=... TASKBOX_TOKEN=... python enqueue.py TASK [INPUT-JSON] [COUNT]", file=sys.stderr)
        return 2
    task = sys.argv[1]
    job_input = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1

    client = AuthenticatedClient(base_url=os.environ["TASKBOX_URL"], token=os.environ["TASKBOX_TOKEN"])
    with client:
        try:
            ids = []
            for _ in range(count):
                job = enqueue(client, JobSpec(task=task, input_=job_input))
                print(f"enqueued {job.id}", file=sys.stderr)
                ids.append(job.id)
            for job_id in ids:
                done = wait_for_job(client, job_id, timeout_s=30)
                if done.status != JobStatus.COMPLETED:
                    print(f"job {job_id} {done.status}: {done.error}", file=sys.stderr)
                    return 1
                print(json.dumps(done.output))
        except TaskboxError as e:
            print(f"taskbox said {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
