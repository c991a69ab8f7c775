from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.workflow import Workflow
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    version: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["version"] = version

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/workflows/{name}".format(
            name=quote(str(name), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorAnswer | Workflow | None:
    if response.status_code == 200:
        response_200 = Workflow.from_dict(response.json())

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
) -> Response[ErrorAnswer | Workflow]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> Response[ErrorAnswer | Workflow]:
    """A workflow version, with the list of every version. Needs `jobs:read`
    or `tasks:write`.

    Args:
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Workflow]
    """

    kwargs = _get_kwargs(
        name=name,
        version=version,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> ErrorAnswer | Workflow | None:
    """A workflow version, with the list of every version. Needs `jobs:read`
    or `tasks:write`.

    Args:
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Workflow
    """

    return sync_detailed(
        name=name,
        client=client,
        version=version,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> Response[ErrorAnswer | Workflow]:
    """A workflow version, with the list of every version. Needs `jobs:read`
    or `tasks:write`.

    Args:
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Workflow]
    """

    kwargs = _get_kwargs(
        name=name,
        version=version,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    version: int | Unset = UNSET,
) -> ErrorAnswer | Workflow | None:
    """A workflow version, with the list of every version. Needs `jobs:read`
    or `tasks:write`.

    Args:
        name (str):
        version (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Workflow
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            version=version,
        )
    ).parsed
