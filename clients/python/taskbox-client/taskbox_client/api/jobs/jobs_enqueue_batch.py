from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch import Batch
from ...models.batch_request import BatchRequest
from ...models.error_answer import ErrorAnswer
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: BatchRequest,
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
        "url": "/v1/jobs/batch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Batch | ErrorAnswer | None:
    if response.status_code == 200:
        response_200 = Batch.from_dict(response.json())

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Batch | ErrorAnswer]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: BatchRequest,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> Response[Batch | ErrorAnswer]:
    """`POST /v1/jobs/batch` `{"jobs": [...]}`: up to `MAX_BATCH` of the bodies
    `POST /v1/jobs` takes. Answers 200 `{"jobs": [...]}`, each item the
    job (created, or the one its idempotency key names) or, with no `id`,
    `{"error": {code, message, details, status}}`. With an
    `Idempotency-Key` header, item `i` carries the key `<key>/<i>` and the
    hash of its own text, so that a retried batch answers the same jobs.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (BatchRequest): The body of `POST /v1/jobs/batch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Batch | ErrorAnswer]
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
    body: BatchRequest,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> Batch | ErrorAnswer | None:
    """`POST /v1/jobs/batch` `{"jobs": [...]}`: up to `MAX_BATCH` of the bodies
    `POST /v1/jobs` takes. Answers 200 `{"jobs": [...]}`, each item the
    job (created, or the one its idempotency key names) or, with no `id`,
    `{"error": {code, message, details, status}}`. With an
    `Idempotency-Key` header, item `i` carries the key `<key>/<i>` and the
    hash of its own text, so that a retried batch answers the same jobs.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (BatchRequest): The body of `POST /v1/jobs/batch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Batch | ErrorAnswer
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
    body: BatchRequest,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> Response[Batch | ErrorAnswer]:
    """`POST /v1/jobs/batch` `{"jobs": [...]}`: up to `MAX_BATCH` of the bodies
    `POST /v1/jobs` takes. Answers 200 `{"jobs": [...]}`, each item the
    job (created, or the one its idempotency key names) or, with no `id`,
    `{"error": {code, message, details, status}}`. With an
    `Idempotency-Key` header, item `i` carries the key `<key>/<i>` and the
    hash of its own text, so that a retried batch answers the same jobs.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (BatchRequest): The body of `POST /v1/jobs/batch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Batch | ErrorAnswer]
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
    body: BatchRequest,
    idempotency_key: None | str | Unset = UNSET,
    traceparent: None | str | Unset = UNSET,
) -> Batch | ErrorAnswer | None:
    """`POST /v1/jobs/batch` `{"jobs": [...]}`: up to `MAX_BATCH` of the bodies
    `POST /v1/jobs` takes. Answers 200 `{"jobs": [...]}`, each item the
    job (created, or the one its idempotency key names) or, with no `id`,
    `{"error": {code, message, details, status}}`. With an
    `Idempotency-Key` header, item `i` carries the key `<key>/<i>` and the
    hash of its own text, so that a retried batch answers the same jobs.

    Args:
        idempotency_key (None | str | Unset):
        traceparent (None | str | Unset):
        body (BatchRequest): The body of `POST /v1/jobs/batch`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Batch | ErrorAnswer
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
            traceparent=traceparent,
        )
    ).parsed
