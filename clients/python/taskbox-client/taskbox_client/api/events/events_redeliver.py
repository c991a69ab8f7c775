from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_view import DeliveryView
from ...models.error_answer import ErrorAnswer
from ...types import Response


def _get_kwargs(
    id: str,
    delivery: int,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{id}/deliveries/{delivery}/redeliver".format(
            id=quote(str(id), safe=""),
            delivery=quote(str(delivery), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeliveryView | ErrorAnswer | None:
    if response.status_code == 200:
        response_200 = DeliveryView.from_dict(response.json())

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
) -> Response[DeliveryView | ErrorAnswer]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    delivery: int,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DeliveryView | ErrorAnswer]:
    """Sends a delivery again: due now, whatever came of it (delivered, dead
    or still retrying); its tries go on counting, and it is retried while
    its window lasts. Needs `webhooks:write`.

    Args:
        id (str):
        delivery (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryView | ErrorAnswer]
    """

    kwargs = _get_kwargs(
        id=id,
        delivery=delivery,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    delivery: int,
    *,
    client: AuthenticatedClient | Client,
) -> DeliveryView | ErrorAnswer | None:
    """Sends a delivery again: due now, whatever came of it (delivered, dead
    or still retrying); its tries go on counting, and it is retried while
    its window lasts. Needs `webhooks:write`.

    Args:
        id (str):
        delivery (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryView | ErrorAnswer
    """

    return sync_detailed(
        id=id,
        delivery=delivery,
        client=client,
    ).parsed


async def asyncio_detailed(
    id: str,
    delivery: int,
    *,
    client: AuthenticatedClient | Client,
) -> Response[DeliveryView | ErrorAnswer]:
    """Sends a delivery again: due now, whatever came of it (delivered, dead
    or still retrying); its tries go on counting, and it is retried while
    its window lasts. Needs `webhooks:write`.

    Args:
        id (str):
        delivery (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeliveryView | ErrorAnswer]
    """

    kwargs = _get_kwargs(
        id=id,
        delivery=delivery,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    delivery: int,
    *,
    client: AuthenticatedClient | Client,
) -> DeliveryView | ErrorAnswer | None:
    """Sends a delivery again: due now, whatever came of it (delivered, dead
    or still retrying); its tries go on counting, and it is retried while
    its window lasts. Needs `webhooks:write`.

    Args:
        id (str):
        delivery (int):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeliveryView | ErrorAnswer
    """

    return (
        await asyncio_detailed(
            id=id,
            delivery=delivery,
            client=client,
        )
    ).parsed
