from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.job_page import JobPage
from ...models.job_status import JobStatus
from ...models.jobs_list_status_type_1 import JobsListStatusType1
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    status: JobsListStatusType1 | JobStatus | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    elif isinstance(status, JobStatus):
        json_status = status.value
    else:
        json_status = status.value

    params["status"] = json_status

    params["task"] = task

    params["queue"] = queue

    params["limit"] = limit

    params["cursor"] = cursor

    params["all_tenants"] = all_tenants

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/jobs",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorAnswer | JobPage | None:
    if response.status_code == 200:
        response_200 = JobPage.from_dict(response.json())

        return response_200

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorAnswer | JobPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: JobsListStatusType1 | JobStatus | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
) -> Response[ErrorAnswer | JobPage]:
    """The tenant's jobs (the admin's: with `all_tenants`, every tenant's),
    newest first, a page at a time. Needs `jobs:read`.

    Args:
        status (JobsListStatusType1 | JobStatus | Unset):
        task (str | Unset):
        queue (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):
        all_tenants (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | JobPage]
    """

    kwargs = _get_kwargs(
        status=status,
        task=task,
        queue=queue,
        limit=limit,
        cursor=cursor,
        all_tenants=all_tenants,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    status: JobsListStatusType1 | JobStatus | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
) -> ErrorAnswer | JobPage | None:
    """The tenant's jobs (the admin's: with `all_tenants`, every tenant's),
    newest first, a page at a time. Needs `jobs:read`.

    Args:
        status (JobsListStatusType1 | JobStatus | Unset):
        task (str | Unset):
        queue (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):
        all_tenants (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | JobPage
    """

    return sync_detailed(
        client=client,
        status=status,
        task=task,
        queue=queue,
        limit=limit,
        cursor=cursor,
        all_tenants=all_tenants,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: JobsListStatusType1 | JobStatus | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
) -> Response[ErrorAnswer | JobPage]:
    """The tenant's jobs (the admin's: with `all_tenants`, every tenant's),
    newest first, a page at a time. Needs `jobs:read`.

    Args:
        status (JobsListStatusType1 | JobStatus | Unset):
        task (str | Unset):
        queue (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):
        all_tenants (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | JobPage]
    """

    kwargs = _get_kwargs(
        status=status,
        task=task,
        queue=queue,
        limit=limit,
        cursor=cursor,
        all_tenants=all_tenants,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    status: JobsListStatusType1 | JobStatus | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
) -> ErrorAnswer | JobPage | None:
    """The tenant's jobs (the admin's: with `all_tenants`, every tenant's),
    newest first, a page at a time. Needs `jobs:read`.

    Args:
        status (JobsListStatusType1 | JobStatus | Unset):
        task (str | Unset):
        queue (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):
        all_tenants (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | JobPage
    """

    return (
        await asyncio_detailed(
            client=client,
            status=status,
            task=task,
            queue=queue,
            limit=limit,
            cursor=cursor,
            all_tenants=all_tenants,
        )
    ).parsed
