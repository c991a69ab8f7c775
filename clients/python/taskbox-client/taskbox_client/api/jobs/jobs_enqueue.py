from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.job import Job
from ...models.job_spec import JobSpec
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    if not isinstance(traceparent, Unset):
        headers["traceparent"] = traceparent

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorAnswer | Job | None:
    if response.status_code == 200:
        response_200 = Job.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = Job.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ErrorAnswer.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorAnswer.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorAnswer.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorAnswer.from_dict(response.json())

        return response_404

    if response.status_code == 408:
        response_408 = ErrorAnswer.from_dict(response.json())

        return response_408

    if response.status_code == 409:
        response_409 = ErrorAnswer.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ErrorAnswer.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = ErrorAnswer.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorAnswer.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = ErrorAnswer.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = ErrorAnswer.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErrorAnswer | Job]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> Response[ErrorAnswer | Job]:
    """Enqueues a job of a task (or a workflow) on an input the task's
    `input_schema` accepts. Needs `jobs:queue`.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (JobSpec): One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
            batch). Unknown fields are refused, so that a misspelled one is not
            silently ignored. Example: {'input': {'op': 'echo', 'value': 1}, 'task': 'echo'}.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Job]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
        traceparent=traceparent,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> ErrorAnswer | Job | None:
    """Enqueues a job of a task (or a workflow) on an input the task's
    `input_schema` accepts. Needs `jobs:queue`.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (JobSpec): One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
            batch). Unknown fields are refused, so that a misspelled one is not
            silently ignored. Example: {'input': {'op': 'echo', 'value': 1}, 'task': 'echo'}.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Job
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
        traceparent=traceparent,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> Response[ErrorAnswer | Job]:
    """Enqueues a job of a task (or a workflow) on an input the task's
    `input_schema` accepts. Needs `jobs:queue`.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (JobSpec): One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
            batch). Unknown fields are refused, so that a misspelled one is not
            silently ignored. Example: {'input': {'op': 'echo', 'value': 1}, 'task': 'echo'}.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Job]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
        traceparent=traceparent,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: JobSpec,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> ErrorAnswer | Job | None:
    """Enqueues a job of a task (or a workflow) on an input the task's
    `input_schema` accepts. Needs `jobs:queue`.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (JobSpec): One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
            batch). Unknown fields are refused, so that a misspelled one is not
            silently ignored. Example: {'input': {'op': 'echo', 'value': 1}, 'task': 'echo'}.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Job
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
            traceparent=traceparent,
        )
    ).parsed
