from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.job import Job
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    *,
    wait: bool | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["wait"] = wait

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs/{id}/run".format(
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorAnswer | Job | None:
    if response.status_code == 200:
        response_200 = Job.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = Job.from_dict(response.json())

        return response_202

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
    id: str,
    *,
    client: AuthenticatedClient | Client,
    wait: bool | Unset = UNSET,
) -> Response[ErrorAnswer | Job]:
    """`POST /v1/jobs/{id}/run`: the job goes first in its tenant's line and a
    runner claims it like any other (within the tenant's share and quotas).
    With `?wait=true` the request waits for that attempt's end, but does not
    own it: a client that goes away leaves it running, and so does one whose
    token is revoked or expires meanwhile (answered 401 within 5 s).

    Args:
        id (str):
        wait (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Job]
    """

    kwargs = _get_kwargs(
        id=id,
        wait=wait,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    wait: bool | Unset = UNSET,
) -> ErrorAnswer | Job | None:
    """`POST /v1/jobs/{id}/run`: the job goes first in its tenant's line and a
    runner claims it like any other (within the tenant's share and quotas).
    With `?wait=true` the request waits for that attempt's end, but does not
    own it: a client that goes away leaves it running, and so does one whose
    token is revoked or expires meanwhile (answered 401 within 5 s).

    Args:
        id (str):
        wait (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Job
    """

    return sync_detailed(
        id=id,
        client=client,
        wait=wait,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    wait: bool | Unset = UNSET,
) -> Response[ErrorAnswer | Job]:
    """`POST /v1/jobs/{id}/run`: the job goes first in its tenant's line and a
    runner claims it like any other (within the tenant's share and quotas).
    With `?wait=true` the request waits for that attempt's end, but does not
    own it: a client that goes away leaves it running, and so does one whose
    token is revoked or expires meanwhile (answered 401 within 5 s).

    Args:
        id (str):
        wait (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Job]
    """

    kwargs = _get_kwargs(
        id=id,
        wait=wait,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    wait: bool | Unset = UNSET,
) -> ErrorAnswer | Job | None:
    """`POST /v1/jobs/{id}/run`: the job goes first in its tenant's line and a
    runner claims it like any other (within the tenant's share and quotas).
    With `?wait=true` the request waits for that attempt's end, but does not
    own it: a client that goes away leaves it running, and so does one whose
    token is revoked or expires meanwhile (answered 401 within 5 s).

    Args:
        id (str):
        wait (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Job
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            wait=wait,
        )
    ).parsed
