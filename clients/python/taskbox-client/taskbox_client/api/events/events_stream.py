from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.event_page import EventPage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    job: str | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    params["job"] = job

    params["task"] = task

    params["queue"] = queue

    params["type"] = type_

    params["after"] = after

    params["limit"] = limit

    params["all_tenants"] = all_tenants

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorAnswer | EventPage | None:
    if response.status_code == 200:
        response_200 = EventPage.from_dict(response.json())

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
) -> Response[ErrorAnswer | EventPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    job: str | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Response[ErrorAnswer | EventPage]:
    """The tenant's job events: a stream of server-sent events (`id:` is the
    sequence number, `event:` the type; `gap` and `dropped` say what was
    lost), or with `Accept: application/json` a page of them. Needs
    `jobs:read`. The stream's token is checked as it goes on: within 5 s of
    its revoke (on any server of the database) or at its expiry, the stream
    sends a last event, `error` (`UNAUTHENTICATED`), and ends.

    Args:
        job (str | Unset):
        task (str | Unset):
        queue (str | Unset):
        type_ (str | Unset):
        after (int | Unset):
        limit (int | Unset):
        all_tenants (bool | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | EventPage]
    """

    kwargs = _get_kwargs(
        job=job,
        task=task,
        queue=queue,
        type_=type_,
        after=after,
        limit=limit,
        all_tenants=all_tenants,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    job: str | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> ErrorAnswer | EventPage | None:
    """The tenant's job events: a stream of server-sent events (`id:` is the
    sequence number, `event:` the type; `gap` and `dropped` say what was
    lost), or with `Accept: application/json` a page of them. Needs
    `jobs:read`. The stream's token is checked as it goes on: within 5 s of
    its revoke (on any server of the database) or at its expiry, the stream
    sends a last event, `error` (`UNAUTHENTICATED`), and ends.

    Args:
        job (str | Unset):
        task (str | Unset):
        queue (str | Unset):
        type_ (str | Unset):
        after (int | Unset):
        limit (int | Unset):
        all_tenants (bool | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | EventPage
    """

    return sync_detailed(
        client=client,
        job=job,
        task=task,
        queue=queue,
        type_=type_,
        after=after,
        limit=limit,
        all_tenants=all_tenants,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    job: str | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> Response[ErrorAnswer | EventPage]:
    """The tenant's job events: a stream of server-sent events (`id:` is the
    sequence number, `event:` the type; `gap` and `dropped` say what was
    lost), or with `Accept: application/json` a page of them. Needs
    `jobs:read`. The stream's token is checked as it goes on: within 5 s of
    its revoke (on any server of the database) or at its expiry, the stream
    sends a last event, `error` (`UNAUTHENTICATED`), and ends.

    Args:
        job (str | Unset):
        task (str | Unset):
        queue (str | Unset):
        type_ (str | Unset):
        after (int | Unset):
        limit (int | Unset):
        all_tenants (bool | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | EventPage]
    """

    kwargs = _get_kwargs(
        job=job,
        task=task,
        queue=queue,
        type_=type_,
        after=after,
        limit=limit,
        all_tenants=all_tenants,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    job: str | Unset = UNSET,
    task: str | Unset = UNSET,
    queue: str | Unset = UNSET,
    type_: str | Unset = UNSET,
    after: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    all_tenants: bool | Unset = UNSET,
    last_event_id: None | str | Unset = UNSET,
) -> ErrorAnswer | EventPage | None:
    """The tenant's job events: a stream of server-sent events (`id:` is the
    sequence number, `event:` the type; `gap` and `dropped` say what was
    lost), or with `Accept: application/json` a page of them. Needs
    `jobs:read`. The stream's token is checked as it goes on: within 5 s of
    its revoke (on any server of the database) or at its expiry, the stream
    sends a last event, `error` (`UNAUTHENTICATED`), and ends.

    Args:
        job (str | Unset):
        task (str | Unset):
        queue (str | Unset):
        type_ (str | Unset):
        after (int | Unset):
        limit (int | Unset):
        all_tenants (bool | Unset):
        last_event_id (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | EventPage
    """

    return (
        await asyncio_detailed(
            client=client,
            job=job,
            task=task,
            queue=queue,
            type_=type_,
            after=after,
            limit=limit,
            all_tenants=all_tenants,
            last_event_id=last_event_id,
        )
    ).parsed
