from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="NetworkSpec")


@_attrs_define
class NetworkSpec:
    """A task's grant of outbound HTTP. The server clamps the caps to its
    own, and refuses addresses of its own networks whatever is listed.

        Attributes:
            allow (list[str]): Hosts its guests may call: `api.example.com` (on the scheme's
                default port), `*.stripe.com` (any name under it), a port named
                (`hooks.example.org:8443`), an IP address, or `*` for any host. Example: ['api.example.com', '*.stripe.com',
                'hooks.example.org:8443'].
            max_requests (int | None | Unset): Most requests one attempt may make (default 100).
            max_response_bytes (int | None | Unset): Largest response body one request may read, in bytes (default 8 MiB).
    """

    allow: list[str]
    max_requests: int | None | Unset = UNSET
    max_response_bytes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        allow = self.allow

        max_requests: int | None | Unset
        if isinstance(self.max_requests, Unset):
            max_requests = UNSET
        else:
            max_requests = self.max_requests

        max_response_bytes: int | None | Unset
        if isinstance(self.max_response_bytes, Unset):
            max_response_bytes = UNSET
        else:
            max_response_bytes = self.max_response_bytes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "allow": allow,
            }
        )
        if max_requests is not UNSET:
            field_dict["max_requests"] = max_requests
        if max_response_bytes is not UNSET:
            field_dict["max_response_bytes"] = max_response_bytes

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        allow = cast(list[str], d.pop("allow"))

        def _parse_max_requests(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_requests = _parse_max_requests(d.pop("max_requests", UNSET))

        def _parse_max_response_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_response_bytes = _parse_max_response_bytes(d.pop("max_response_bytes", UNSET))

        network_spec = cls(
            allow=allow,
            max_requests=max_requests,
            max_response_bytes=max_response_bytes,
        )

        return network_spec
