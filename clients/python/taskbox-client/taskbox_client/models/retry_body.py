from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.retry_version import RetryVersion
from ..types import UNSET, Unset

T = TypeVar("T", bound="RetryBody")


@_attrs_define
class RetryBody:
    """
    Attributes:
        digest (None | RetryVersion | Unset):
    """

    digest: None | RetryVersion | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        digest: None | str | Unset
        if isinstance(self.digest, Unset):
            digest = UNSET
        elif isinstance(self.digest, RetryVersion):
            digest = self.digest.value
        else:
            digest = self.digest

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if digest is not UNSET:
            field_dict["digest"] = digest

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_digest(data: object) -> None | RetryVersion | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                digest_type_1 = RetryVersion(data)

                return digest_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetryVersion | Unset, data)

        digest = _parse_digest(d.pop("digest", UNSET))

        retry_body = cls(
            digest=digest,
        )

        return retry_body
