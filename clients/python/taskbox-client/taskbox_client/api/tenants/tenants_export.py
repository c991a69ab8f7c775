from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_answer import ErrorAnswer
from ...models.tenants_export_by import TenantsExportBy
from ...models.tenants_export_format import TenantsExportFormat
from ...models.usage_export import UsageExport
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    by: TenantsExportBy | Unset = UNSET,
    format_: TenantsExportFormat | Unset = UNSET,
    tenant: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["from"] = from_

    params["to"] = to

    json_by: str | Unset = UNSET
    if not isinstance(by, Unset):
        json_by = by.value

    params["by"] = json_by

    json_format_: str | Unset = UNSET
    if not isinstance(format_, Unset):
        json_format_ = format_.value

    params["format"] = json_format_

    params["tenant"] = tenant

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/usage/export",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorAnswer | UsageExport | None:
    if response.status_code == 200:
        response_200 = UsageExport.from_dict(response.json())

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
) -> Response[ErrorAnswer | UsageExport]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    by: TenantsExportBy | Unset = UNSET,
    format_: TenantsExportFormat | Unset = UNSET,
    tenant: str | Unset = UNSET,
) -> Response[ErrorAnswer | UsageExport]:
    """What attempts cost, per task version and per hour or day, summed from
    the attempt records; with the jobs a result cache completed. A tenant's
    own with `jobs:read`; every tenant's for the admin. Each call takes from
    the tenant's rate of series and usage reads (the server's
    `--reads-per-second`): past it, 429 with `Retry-After`.

    Args:
        from_ (str | Unset):
        to (str | Unset):
        by (TenantsExportBy | Unset): How wide each line's bucket is.
        format_ (TenantsExportFormat | Unset):
        tenant (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | UsageExport]
    """

    kwargs = _get_kwargs(
        from_=from_,
        to=to,
        by=by,
        format_=format_,
        tenant=tenant,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    by: TenantsExportBy | Unset = UNSET,
    format_: TenantsExportFormat | Unset = UNSET,
    tenant: str | Unset = UNSET,
) -> ErrorAnswer | UsageExport | None:
    """What attempts cost, per task version and per hour or day, summed from
    the attempt records; with the jobs a result cache completed. A tenant's
    own with `jobs:read`; every tenant's for the admin. Each call takes from
    the tenant's rate of series and usage reads (the server's
    `--reads-per-second`): past it, 429 with `Retry-After`.

    Args:
        from_ (str | Unset):
        to (str | Unset):
        by (TenantsExportBy | Unset): How wide each line's bucket is.
        format_ (TenantsExportFormat | Unset):
        tenant (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | UsageExport
    """

    return sync_detailed(
        client=client,
        from_=from_,
        to=to,
        by=by,
        format_=format_,
        tenant=tenant,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    by: TenantsExportBy | Unset = UNSET,
    format_: TenantsExportFormat | Unset = UNSET,
    tenant: str | Unset = UNSET,
) -> Response[ErrorAnswer | UsageExport]:
    """What attempts cost, per task version and per hour or day, summed from
    the attempt records; with the jobs a result cache completed. A tenant's
    own with `jobs:read`; every tenant's for the admin. Each call takes from
    the tenant's rate of series and usage reads (the server's
    `--reads-per-second`): past it, 429 with `Retry-After`.

    Args:
        from_ (str | Unset):
        to (str | Unset):
        by (TenantsExportBy | Unset): How wide each line's bucket is.
        format_ (TenantsExportFormat | Unset):
        tenant (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorAnswer | UsageExport]
    """

    kwargs = _get_kwargs(
        from_=from_,
        to=to,
        by=by,
        format_=format_,
        tenant=tenant,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    by: TenantsExportBy | Unset = UNSET,
    format_: TenantsExportFormat | Unset = UNSET,
    tenant: str | Unset = UNSET,
) -> ErrorAnswer | UsageExport | None:
    """What attempts cost, per task version and per hour or day, summed from
    the attempt records; with the jobs a result cache completed. A tenant's
    own with `jobs:read`; every tenant's for the admin. Each call takes from
    the tenant's rate of series and usage reads (the server's
    `--reads-per-second`): past it, 429 with `Retry-After`.

    Args:
        from_ (str | Unset):
        to (str | Unset):
        by (TenantsExportBy | Unset): How wide each line's bucket is.
        format_ (TenantsExportFormat | Unset):
        tenant (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorAnswer | UsageExport
    """

    return (
        await asyncio_detailed(
            client=client,
            from_=from_,
            to=to,
            by=by,
            format_=format_,
            tenant=tenant,
        )
    ).parsed
