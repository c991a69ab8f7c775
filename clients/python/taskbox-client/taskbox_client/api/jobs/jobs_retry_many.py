from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.retried_many import RetriedMany
from ...models.retry_many_body import RetryManyBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: RetryManyBody,
    all_tenants: bool | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["all_tenants"] = all_tenants

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs/retry",
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorAnswer | RetriedMany | None:
    if response.status_code == 200:
        response_200 = RetriedMany.from_dict(response.json())

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
) -> Response[ErrorAnswer | RetriedMany]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: RetryManyBody,
    all_tenants: bool | Unset = UNSET,
) -> Response[ErrorAnswer | RetriedMany]:
    """`POST /v1/jobs/retry` `{filter?: {task?, queue?, kind?, code?}, digest?,
    limit?}`: re-drives the tenant's failed jobs that match (the admin's,
    with `?all_tenants=true`: every tenant's, each charged to its own
    tenant's enqueue rate), newest first, up to `limit` (default and most:
    `MAX_REDRIVE`), and says how many.

    Args:
        all_tenants (bool | Unset):
        body (RetryManyBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | RetriedMany]
    """

    kwargs = _get_kwargs(
        body=body,
        all_tenants=all_tenants,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: RetryManyBody,
    all_tenants: bool | Unset = UNSET,
) -> ErrorAnswer | RetriedMany | None:
    """`POST /v1/jobs/retry` `{filter?: {task?, queue?, kind?, code?}, digest?,
    limit?}`: re-drives the tenant's failed jobs that match (the admin's,
    with `?all_tenants=true`: every tenant's, each charged to its own
    tenant's enqueue rate), newest first, up to `limit` (default and most:
    `MAX_REDRIVE`), and says how many.

    Args:
        all_tenants (bool | Unset):
        body (RetryManyBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | RetriedMany
    """

    return sync_detailed(
        client=client,
        body=body,
        all_tenants=all_tenants,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: RetryManyBody,
    all_tenants: bool | Unset = UNSET,
) -> Response[ErrorAnswer | RetriedMany]:
    """`POST /v1/jobs/retry` `{filter?: {task?, queue?, kind?, code?}, digest?,
    limit?}`: re-drives the tenant's failed jobs that match (the admin's,
    with `?all_tenants=true`: every tenant's, each charged to its own
    tenant's enqueue rate), newest first, up to `limit` (default and most:
    `MAX_REDRIVE`), and says how many.

    Args:
        all_tenants (bool | Unset):
        body (RetryManyBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | RetriedMany]
    """

    kwargs = _get_kwargs(
        body=body,
        all_tenants=all_tenants,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: RetryManyBody,
    all_tenants: bool | Unset = UNSET,
) -> ErrorAnswer | RetriedMany | None:
    """`POST /v1/jobs/retry` `{filter?: {task?, queue?, kind?, code?}, digest?,
    limit?}`: re-drives the tenant's failed jobs that match (the admin's,
    with `?all_tenants=true`: every tenant's, each charged to its own
    tenant's enqueue rate), newest first, up to `limit` (default and most:
    `MAX_REDRIVE`), and says how many.

    Args:
        all_tenants (bool | Unset):
        body (RetryManyBody):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | RetriedMany
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            all_tenants=all_tenants,
        )
    ).parsed
