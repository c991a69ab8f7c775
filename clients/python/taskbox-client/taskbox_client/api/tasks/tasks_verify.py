from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.job import Job
from ...models.verify_request import VerifyRequest
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: VerifyRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/tasks/{name}/verify".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErrorAnswer | Job | None:
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
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: VerifyRequest,
) -> Response[ErrorAnswer | Job]:
    """Verifies a candidate component against the task's last ended jobs
    (completed and failed): a job of the tenant's, on the runners' slots,
    charged to its fuel, that runs each recorded input through the
    candidate under the task's live limits, with no outbound HTTP, no
    secrets and no sub-tasks, and ends with the report as its output
    (`GET /v1/jobs/{id}` shows its progress). Cancel it as any job. Needs
    `tasks:write`.

    Args:
        name (str):
        body (VerifyRequest): The body of `POST /v1/tasks/{name}/verify`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Job]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: VerifyRequest,
) -> ErrorAnswer | Job | None:
    """Verifies a candidate component against the task's last ended jobs
    (completed and failed): a job of the tenant's, on the runners' slots,
    charged to its fuel, that runs each recorded input through the
    candidate under the task's live limits, with no outbound HTTP, no
    secrets and no sub-tasks, and ends with the report as its output
    (`GET /v1/jobs/{id}` shows its progress). Cancel it as any job. Needs
    `tasks:write`.

    Args:
        name (str):
        body (VerifyRequest): The body of `POST /v1/tasks/{name}/verify`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Job
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: VerifyRequest,
) -> Response[ErrorAnswer | Job]:
    """Verifies a candidate component against the task's last ended jobs
    (completed and failed): a job of the tenant's, on the runners' slots,
    charged to its fuel, that runs each recorded input through the
    candidate under the task's live limits, with no outbound HTTP, no
    secrets and no sub-tasks, and ends with the report as its output
    (`GET /v1/jobs/{id}` shows its progress). Cancel it as any job. Needs
    `tasks:write`.

    Args:
        name (str):
        body (VerifyRequest): The body of `POST /v1/tasks/{name}/verify`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | Job]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: VerifyRequest,
) -> ErrorAnswer | Job | None:
    """Verifies a candidate component against the task's last ended jobs
    (completed and failed): a job of the tenant's, on the runners' slots,
    charged to its fuel, that runs each recorded input through the
    candidate under the task's live limits, with no outbound HTTP, no
    secrets and no sub-tasks, and ends with the report as its output
    (`GET /v1/jobs/{id}` shows its progress). Cancel it as any job. Needs
    `tasks:write`.

    Args:
        name (str):
        body (VerifyRequest): The body of `POST /v1/tasks/{name}/verify`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | Job
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
